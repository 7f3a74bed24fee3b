package profile

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/seedance/seedance/hwtopo"
)

// NodeOptions configures sampling of one node through NVML.
type NodeOptions struct {
	// Name is the node's name; the host name when empty.
	Name   string
	Labels map[string]string
	// Procs names the processes found on GPUs and maps them to pods.
	Procs ProcResolver
	// SysRoot is the sysfs mount ("/sys"); "" skips NUMA lookup.
	SysRoot string
	// Timeout bounds how long one sample waits for a GPU; a GPU that has not
	// answered by then gets nulls for that sample while the others are
	// recorded. Zero waits for every GPU.
	Timeout time.Duration
	// Pending, when set, returns workloads waiting for this node's GPUs
	// (NVML cannot see them; the simulator and cluster sources can).
	Pending func() []Workload
	// Topology, when set, reads the GPUs' interconnect at open and puts it,
	// with Host, in the profile.
	Topology bool
	Host     *hwtopo.Host
}

// NVMLNode samples the GPUs of one node through NVML. Each GPU has its own
// goroutine so that a slow NVML call on one GPU does not delay the others.
type NVMLNode struct {
	lib     NVML
	opts    NodeOptions
	gpus    []*gpuSampler
	topo    *hwtopo.Topology
	req     []chan int
	results chan gpuResult
	busy    []bool
	seq     int
	procs   ProcResolver
}

type gpuResult struct {
	gpu, seq int
	row      Row
	procs    []Proc
}

// OpenNVMLNode initialises lib and prepares a sampler for every GPU and MIG
// device. With no driver or no GPU it returns an error wrapping ErrNoGPU.
func OpenNVMLNode(lib NVML, opts NodeOptions) (*NVMLNode, error) {
	count, err := InitNVML(lib)
	if err != nil {
		return nil, err
	}
	if opts.Name == "" {
		opts.Name, _ = os.Hostname()
	}
	n := &NVMLNode{lib: lib, opts: opts, procs: opts.Procs}
	if n.procs == nil {
		n.procs = NoProcResolver{}
	}
	var devs []nvml.Device
	for i := 0; i < count; i++ {
		dev, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			lib.Shutdown()
			return nil, fmt.Errorf("get handle of GPU %d: %s", i, ret.Error())
		}
		devs = append(devs, dev)
		parent := newGPUSampler(lib, dev, i, nil)
		parent.info.NUMANode = numaNode(opts.SysRoot, parent.info.PCIBusID)
		n.gpus = append(n.gpus, parent)
		n.gpus = append(n.gpus, migSamplers(lib, dev, parent.info)...)
	}
	if opts.Topology {
		n.topo = hwtopo.FromNVML(devs, 16, func(bus string) *int { return numaNode(opts.SysRoot, bus) })
		n.topo.Host = opts.Host
	}
	n.req = make([]chan int, len(n.gpus))
	n.busy = make([]bool, len(n.gpus))
	n.results = make(chan gpuResult, len(n.gpus))
	for i, g := range n.gpus {
		n.req[i] = make(chan int, 1)
		go func(i int, g *gpuSampler, req <-chan int) {
			for seq := range req {
				row := g.sample()
				n.results <- gpuResult{gpu: i, seq: seq, row: row, procs: append([]Proc(nil), g.procs...)}
			}
		}(i, g, n.req[i])
	}
	return n, nil
}

// migSamplers returns a sampler for each MIG device of dev when MIG is on.
func migSamplers(lib NVML, dev nvml.Device, parent GPU) []*gpuSampler {
	cur, _, ret := dev.GetMigMode()
	if ret != nvml.SUCCESS || cur != nvml.DEVICE_MIG_ENABLE {
		return nil
	}
	max, ret := dev.GetMaxMigDeviceCount()
	if ret != nvml.SUCCESS {
		return nil
	}
	var out []*gpuSampler
	for i := 0; i < max; i++ {
		mdev, ret := dev.GetMigDeviceHandleByIndex(i)
		if ret != nvml.SUCCESS {
			continue
		}
		gi, _ := mdev.GetGpuInstanceId()
		ci, _ := mdev.GetComputeInstanceId()
		mig := &MIG{ParentUUID: parent.UUID, GI: gi, CI: ci}
		if a, ret := mdev.GetAttributes(); ret == nvml.SUCCESS {
			mig.Profile = MIGProfileName(a)
		}
		s := newGPUSampler(lib, mdev, parent.Index, mig)
		s.info.Model = parent.Model
		s.info.PCIBusID = parent.PCIBusID
		s.info.NUMANode = parent.NUMANode
		out = append(out, s)
	}
	return out
}

// MIGProfileName names a MIG device as nvidia-smi does (see hwtopo).
var MIGProfileName = hwtopo.MIGProfileName

// NUMANodeOf reads the NUMA node of a PCI function from sysfs; nil when
// unknown.
func NUMANodeOf(sysRoot, busID string) *int { return numaNode(sysRoot, busID) }

func numaNode(sysRoot, busID string) *int {
	if sysRoot == "" || busID == "" {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(sysRoot, "bus", "pci", "devices", busID, "numa_node"))
	if err != nil {
		return nil
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || v < 0 {
		return nil
	}
	return &v
}

// Name implements Source.
func (n *NVMLNode) Name() string { return SourceNVML }

// Inventory implements Source.
func (n *NVMLNode) Inventory() []Node {
	node := Node{Name: n.opts.Name, Labels: n.opts.Labels, Topology: n.topo}
	for _, g := range n.gpus {
		node.GPUs = append(node.GPUs, g.info)
	}
	return []Node{node}
}

// Sample implements Source.
func (n *NVMLNode) Sample(ctx context.Context) ([][]Row, [][]Workload) {
	n.seq++
	rows := make([]Row, len(n.gpus))
	procs := make([][]Proc, len(n.gpus))
	waiting := 0
	for i := range n.gpus {
		if n.busy[i] {
			rows[i] = NullRow("NVML did not answer within the sample timeout")
			continue
		}
		n.busy[i] = true
		n.req[i] <- n.seq
		waiting++
	}
	var deadline <-chan time.Time
	if n.opts.Timeout > 0 {
		t := time.NewTimer(n.opts.Timeout)
		defer t.Stop()
		deadline = t.C
	}
	got := make([]bool, len(n.gpus))
	for waiting > 0 {
		select {
		case r := <-n.results:
			n.busy[r.gpu] = false
			if r.seq != n.seq {
				continue // a late answer to an earlier sample
			}
			rows[r.gpu], procs[r.gpu], got[r.gpu] = r.row, r.procs, true
			waiting--
		case <-deadline:
			for i := range n.gpus {
				if n.busy[i] && !got[i] {
					rows[i] = NullRow(fmt.Sprintf("NVML did not answer within %s", n.opts.Timeout))
				}
			}
			waiting = 0
		case <-ctx.Done():
			for i := range n.gpus {
				if !got[i] && rows[i].Err == "" {
					rows[i] = NullRow("interrupted")
				}
			}
			waiting = 0
		}
	}
	return [][]Row{rows}, [][]Workload{n.workloads(procs)}
}

// workloads groups the processes found on the GPUs into workloads: one per pod
// when the process belongs to one, else one per process.
func (n *NVMLNode) workloads(procs [][]Proc) []Workload {
	byID := map[string]*Workload{}
	for gi, ps := range procs {
		g := n.gpus[gi]
		for _, p := range ps {
			info := n.procs.Resolve(p.PID)
			w := byID[info.WorkloadID(p.PID)]
			if w == nil {
				w = info.Workload(p.PID)
				byID[w.ID] = w
			}
			addInt(&w.PIDs, p.PID)
			addInt(&w.GPUs, g.info.Index)
			if g.info.MIG != nil {
				addString(&w.GPUUUIDs, g.info.UUID)
			}
			w.GPUMemoryBytes += p.GPUMemoryBytes
		}
	}
	out := make([]Workload, 0, len(byID))
	for _, w := range byID {
		w.GPUCount = len(w.GPUs)
		out = append(out, *w)
	}
	if n.opts.Pending != nil {
		out = append(out, n.opts.Pending()...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Close stops the GPU goroutines and shuts NVML down.
func (n *NVMLNode) Close() error {
	for _, c := range n.req {
		close(c)
	}
	for _, g := range n.gpus {
		g.Free()
	}
	if ret := n.lib.Shutdown(); ret != nvml.SUCCESS {
		return fmt.Errorf("nvml shutdown: %s", ret.Error())
	}
	return nil
}

func addInt(s *[]int, v int) {
	for _, x := range *s {
		if x == v {
			return
		}
	}
	*s = append(*s, v)
	sort.Ints(*s)
}

func addString(s *[]string, v string) {
	for _, x := range *s {
		if x == v {
			return
		}
	}
	*s = append(*s, v)
	sort.Strings(*s)
}
