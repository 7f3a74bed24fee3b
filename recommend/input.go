package recommend

import (
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/hwtopo"
	"github.com/seedance/seedance/profile"
)

// PinnedLabel marks a workload that must never move.
const PinnedLabel = "seedance.io/pinned"

// PriceFunc prices a GPU-hour of a model on a node (pricing.Pricer.PriceOn):
// a node's price may come from its labels or its name.
type PriceFunc func(node string, labels map[string]string, model string) float64

// fromProfile builds the planner's cluster from a profile in memory: each
// GPU's mean utilization is over its samples. See fromFleet.
func fromProfile(p *profile.Profile, price PriceFunc, busyPct float64) *Cluster {
	f := &analyze.Fleet{Nodes: make([]analyze.FleetNode, 0, len(p.Nodes))}
	for _, n := range p.Nodes {
		fn := analyze.FleetNode{Name: n.Name, Labels: n.Labels, Topology: n.Topology}
		for wi := range n.Workloads {
			fn.Workloads = append(fn.Workloads, &n.Workloads[wi])
		}
		for _, g := range n.GPUs {
			fn.GPUs = append(fn.GPUs, analyze.FleetGPU{UUID: g.UUID, Model: g.Model, MemoryTotalBytes: g.MemoryTotalBytes,
				MIG: g.MIG, MeanUtilPct: meanUtil(g.Series.GPUUtilPct), Index: g.Index})
		}
		f.Nodes = append(f.Nodes, fn)
	}
	return fromFleet(f, price, busyPct)
}

// fromFleet builds the planner's cluster from an analysis' fleet. price
// gives the USD per hour of one GPU of a model. A GPU that no known
// workload holds but that was busy on average (mean utilization ≥
// busyPct) cannot be freed. Only pods can be moved: processes and wrapped
// jobs are treated as pinned. A workload's share of each GPU is its
// "gpu_milli" label when it has one (1000 otherwise); its memory per GPU
// is its GPU memory over its GPUs.
func fromFleet(f *analyze.Fleet, price PriceFunc, busyPct float64) *Cluster {
	b := clusterBuilder{price: price, busyPct: busyPct}
	b.c.Nodes = make([]*Node, 0, len(f.Nodes))
	for i := range f.Nodes {
		b.addNode(&f.Nodes[i])
	}
	return &b.c
}

// clusterBuilder builds a Cluster one node at a time.
type clusterBuilder struct {
	price      PriceFunc
	busyPct    float64
	c          Cluster
	full       []analyze.FleetGPU // the current node's whole GPUs, by index
	migs       []analyze.FleetGPU // and its MIG devices
	topologies hwtopo.Interner
}

func (b *clusterBuilder) addNode(fn *analyze.FleetNode) {
	b.full, b.migs = b.full[:0], b.migs[:0]
	for _, g := range fn.GPUs {
		if g.MIG == nil {
			b.full = append(b.full, g)
		} else {
			b.migs = append(b.migs, g)
		}
	}
	full := b.full
	sort.Slice(full, func(i, j int) bool { return full[i].Index < full[j].Index })
	n := &Node{Name: fn.Name, Topology: b.topologies.Intern(fn.Topology)}
	pos := map[int]int{}
	for i, g := range full {
		pos[g.Index] = i
		n.GPUs = append(n.GPUs, GPU{MemBytes: g.MemoryTotalBytes})
		if n.Model == "" {
			n.Model = g.Model
		}
		n.PricePerHour += b.price(fn.Name, fn.Labels, g.Model)
	}
	held := map[int]bool{}
	for _, w := range fn.Workloads {
		if cw := b.workload(w, fn.Name, pos); cw != nil {
			for _, i := range cw.GPUs {
				g := &n.GPUs[i]
				g.UsedMilli = min(milliPerGPU, g.UsedMilli+cw.Milli)
				g.UsedMem += cw.MemPerGPU
				held[i] = true
			}
			b.c.Workloads = append(b.c.Workloads, cw)
		}
	}
	for i, g := range full {
		if !held[i] && meanOrZero(g.MeanUtilPct) >= b.busyPct {
			n.GPUs[i].Busy = true
		}
	}
	b.c.Nodes = append(b.c.Nodes, n)
}

// workload is a node's workload as the planner holds it, with the GPUs it
// holds (positions in the node's whole GPUs, pos by index); nil for a
// running one that holds none.
func (b *clusterBuilder) workload(w *profile.Workload, node string, pos map[int]int) *Workload {
	cw := newWorkload(w, node)
	if cw.Pending {
		return cw
	}
	if !b.holdsMIG(cw, w) {
		for _, gi := range w.GPUs {
			if i, ok := pos[gi]; ok && !slices.Contains(cw.GPUs, i) {
				cw.GPUs = append(cw.GPUs, i)
			}
		}
	}
	if len(cw.GPUs) == 0 {
		return nil
	}
	cw.Count = len(cw.GPUs)
	if w.GPUMemoryBytes > 0 || cw.MemPerGPU == 0 {
		cw.MemPerGPU = w.GPUMemoryBytes / uint64(cw.Count)
	}
	return cw
}

// newWorkload is a profile's workload as the planner sees it: pending
// (asking for at least one GPU) or running, pinned, a batch job, a
// blocker, its share of a GPU (the gpu_milli label).
func newWorkload(w *profile.Workload, node string) *Workload {
	cw := &Workload{ID: w.ID, Name: w.Name, Namespace: w.Labels["namespace"], Kind: w.Kind, Node: node,
		Pending: w.State == profile.StatePending, Count: w.GPUCount, Milli: milliPerGPU,
		Pinned: w.Labels[PinnedLabel] == "true" || (w.Kind != profile.KindPod && w.Kind != profile.KindJob && w.State != profile.StatePending),
		Job:    w.Kind == profile.KindJob && w.State != profile.StatePending}
	if m, err := strconv.Atoi(w.Labels["gpu_milli"]); err == nil && m > 0 && m < milliPerGPU {
		cw.Milli = m
	}
	if w.Kind == profile.KindPod && !cw.Pending {
		cw.Blocker = podBlocker(w.Labels[profile.ControllerLabel])
	}
	if cw.Pending && cw.Count < 1 {
		cw.Count = 1
	}
	return cw
}

// podBlocker says what moving a pod of that controller ("Deployment/x",
// "" for none known) loses; "" when its controller brings it back
// elsewhere as it was (a Deployment's, a ReplicaSet's).
func podBlocker(controller string) string {
	kind, _, _ := strings.Cut(controller, "/")
	switch kind {
	case "Deployment", "ReplicaSet":
		return ""
	case "":
		return "no controller is known to bring it back: evicted, it is gone"
	case "Job", "CronJob":
		return "a Job's pod: evicted, its work starts again"
	case "StatefulSet":
		return "a StatefulSet's pod: its volumes may be bound to the node"
	case "DaemonSet":
		return "a DaemonSet's pod: it runs on every node and is not moved"
	}
	return "owned by a " + kind + ", which seedance does not know to bring it back elsewhere"
}

// holdsMIG fills cw from the MIG devices w names by UUID (gpu_uuids), if
// any: it holds their parents, each for the device's share (a 3g slice is
// 3/7 of the GPU, not the whole GPU, whatever index the workload also
// names), with the device's memory when the workload's own is unknown. A
// MIG workload is pinned: moving it needs MIG configured where it goes,
// which the planner does not know.
func (b *clusterBuilder) holdsMIG(cw *Workload, w *profile.Workload) bool {
	milli, mem := map[int]int{}, map[int]uint64{}
	for _, u := range w.GPUUUIDs {
		k := slices.IndexFunc(b.migs, func(m analyze.FleetGPU) bool { return m.UUID == u })
		if k < 0 {
			continue
		}
		m := b.migs[k]
		if i := slices.IndexFunc(b.full, func(g analyze.FleetGPU) bool { return g.UUID == m.MIG.ParentUUID }); i >= 0 {
			milli[i] += migMilli(m.MIG)
			mem[i] += m.MemoryTotalBytes
		}
	}
	if len(milli) == 0 {
		return false
	}
	cw.GPUs, cw.Milli, cw.MemPerGPU, cw.Pinned = nil, 0, 0, true
	for _, i := range slices.Sorted(maps.Keys(milli)) {
		cw.GPUs = append(cw.GPUs, i)
		cw.Milli = max(cw.Milli, min(milliPerGPU, milli[i]))
		cw.MemPerGPU = max(cw.MemPerGPU, mem[i])
	}
	return true
}

func meanUtil(v profile.Values) float64 {
	s, n := 0.0, 0
	for _, x := range v {
		if !profile.IsNull(x) {
			s += x
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return s / float64(n)
}

// refused is the plan of a profile whose pending work is unknown: nothing
// to do, and why.
func refused(why string) *Plan {
	return &Plan{SchemaVersion: planSchema, Moves: []Move{}, ReleasedNodes: []string{},
		Refused: "no node is released: the work waiting for GPUs is unknown (" + why + ")"}
}

// migMilli is a MIG device's share of its parent GPU, in thousandths.
func migMilli(m *profile.MIG) int {
	return max(1, min(milliPerGPU, int(math.Round(m.Share()*milliPerGPU))))
}

// meanOrZero is a mean utilization, 0 when it is null (no sample).
func meanOrZero(v float64) float64 {
	if profile.IsNull(v) {
		return 0
	}
	return v
}
