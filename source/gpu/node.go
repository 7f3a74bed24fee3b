package gpu

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source"

	"github.com/seedance/seedance/internal/nvapi"

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
	Pending func() []profile.Workload
	// Topology, when set, reads the GPUs' interconnect at open and puts it,
	// with Host, in the profile.
	Topology bool
	Host     *hwtopo.Host
}

// Node samples the GPUs of one node through NVML. Each GPU has its own
// goroutine so that a slow NVML call on one GPU does not delay the others.
type Node struct {
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
	row      source.Row
	procs    []source.Proc
}

// OpenNode initialises lib and prepares a sampler for every GPU and MIG
// device. With no driver or no GPU it returns an error wrapping ErrNoGPU.
func OpenNode(lib NVML, opts NodeOptions) (*Node, error) {
	count, err := InitNVML(lib)
	if err != nil {
		return nil, err
	}
	if opts.Name == "" {
		opts.Name, _ = os.Hostname()
	}
	n := &Node{lib: lib, opts: opts, procs: opts.Procs}
	if n.procs == nil {
		n.procs = NoProcResolver{}
	}
	var devs []nvapi.Device
	for i := 0; i < count; i++ {
		dev, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nvapi.SUCCESS {
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
				n.results <- gpuResult{gpu: i, seq: seq, row: row, procs: append([]source.Proc(nil), g.procs...)}
			}
		}(i, g, n.req[i])
	}
	return n, nil
}

// migSamplers returns a sampler for each MIG device of dev when MIG is on.
func migSamplers(lib NVML, dev nvapi.Device, parent profile.GPU) []*gpuSampler {
	cur, ret := dev.GetMigMode()
	if ret != nvapi.SUCCESS || cur != nvapi.DEVICE_MIG_ENABLE {
		return nil
	}
	maxMIG, ret := dev.GetMaxMigDeviceCount()
	if ret != nvapi.SUCCESS {
		return nil
	}
	var out []*gpuSampler
	for i := 0; i < maxMIG; i++ {
		mdev, ret := dev.GetMigDeviceHandleByIndex(i)
		if ret != nvapi.SUCCESS {
			continue
		}
		gi, _ := mdev.GetGpuInstanceId()
		ci, _ := mdev.GetComputeInstanceId()
		mig := &profile.MIG{ParentUUID: parent.UUID, GI: gi, CI: ci}
		if a, ret := mdev.GetAttributes(); ret == nvapi.SUCCESS {
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
func (n *Node) Name() string { return profile.SourceNVML }

// Inventory implements Source.
func (n *Node) Inventory() []profile.Node {
	node := profile.Node{Name: n.opts.Name, Labels: n.opts.Labels, Topology: n.topo}
	for _, g := range n.gpus {
		node.GPUs = append(node.GPUs, g.info)
	}
	return []profile.Node{node}
}

// Sample implements Source.
func (n *Node) Sample(ctx context.Context) ([][]source.Row, [][]profile.Workload) {
	n.seq++
	rows := make([]source.Row, len(n.gpus))
	procs := make([][]source.Proc, len(n.gpus))
	waiting := 0
	for i := range n.gpus {
		if n.busy[i] {
			rows[i] = source.NullRow("NVML did not answer within the sample timeout")
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
					rows[i] = source.NullRow(fmt.Sprintf("NVML did not answer within %s", n.opts.Timeout))
				}
			}
			waiting = 0
		case <-ctx.Done():
			for i := range n.gpus {
				if !got[i] && rows[i].Err == "" {
					rows[i] = source.NullRow("interrupted")
				}
			}
			waiting = 0
		}
	}
	ws := n.workloads(procs)
	n.measureUse(rows, procs)
	return [][]source.Row{rows}, [][]profile.Workload{ws}
}

// workloads groups the processes found on the GPUs into workloads: one per pod
// when the process belongs to one, else one per process.
func (n *Node) workloads(procs [][]source.Proc) []profile.Workload {
	byID := map[string]*profile.Workload{}
	for gi, ps := range procs {
		g := n.gpus[gi]
		for _, p := range ps {
			info := n.procs.Resolve(p.PID)
			w := byID[info.WorkloadID(p.PID)]
			if w == nil {
				w = info.Workload(p.PID)
				byID[w.ID] = w
			}
			source.AddSorted(&w.PIDs, p.PID)
			source.AddSorted(&w.GPUs, g.info.Index)
			if g.info.MIG != nil {
				source.AddSorted(&w.GPUUUIDs, g.info.UUID)
			}
			w.GPUMemoryBytes += p.GPUMemoryBytes
		}
	}
	out := make([]profile.Workload, 0, len(byID))
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

// measureUse gives each GPU's row its workloads' measured utilization: the
// sum of their processes' (at most 100), when a process of the GPU had
// one.
func (n *Node) measureUse(rows []source.Row, procs [][]source.Proc) {
	for gi, ps := range procs {
		for _, p := range ps {
			if profile.IsNull(p.SMUtilPct) {
				continue
			}
			if rows[gi].Use == nil {
				rows[gi].Use = map[string]float64{}
			}
			id := n.procs.Resolve(p.PID).WorkloadID(p.PID)
			rows[gi].Use[id] = min(100, rows[gi].Use[id]+p.SMUtilPct)
		}
	}
}

// Close stops the GPU goroutines and shuts NVML down.
func (n *Node) Close() error {
	for _, c := range n.req {
		close(c)
	}
	for _, g := range n.gpus {
		g.Free()
	}
	if ret := n.lib.Shutdown(); ret != nvapi.SUCCESS {
		return fmt.Errorf("nvml shutdown: %s", ret.Error())
	}
	return nil
}
