package analyze

import (
	"github.com/seedance/seedance/hwtopo"
	"github.com/seedance/seedance/profile"
)

// Fleet is what a migration planner needs of the nodes at the end of the
// window (Report.Fleet): each GPU's identity, memory and mean utilization,
// the workloads and the topology. It holds no time series: a GPU is a few
// dozen bytes, so that keeping it for a 10,000-node plan costs megabytes.
type Fleet struct {
	Nodes []FleetNode
}

// FleetNode is one node of a Fleet.
type FleetNode struct {
	Name     string
	Labels   map[string]string
	Topology *hwtopo.Topology
	GPUs     []FleetGPU // whole GPUs and MIG devices, in the profile's order
	// Workloads are those at the window's end, by ID; shared with the
	// analysis, not copies (read them, do not change them).
	Workloads []*profile.Workload
}

// FleetGPU is one GPU or MIG device of a FleetNode.
type FleetGPU struct {
	UUID, Model      string
	MemoryTotalBytes uint64
	MIG              *profile.MIG
	// MeanUtilPct is the mean utilization over the window; profile.Null
	// when the GPU has no sample.
	MeanUtilPct float64
	Index       int
}

// fleet is the Fleet kept from the streaming pass. It describes the end of
// the window, which is what an operator acts on: a workload whose tenure
// ended before it (a job that finished, a pod that was scheduled or
// deleted) holds and waits for nothing there.
func (a *analysis) fleet() *Fleet {
	f := &Fleet{Nodes: make([]FleetNode, 0, len(a.order))}
	for _, n := range a.order {
		fn := FleetNode{Name: n.name, Labels: n.labels, Topology: n.topology, GPUs: make([]FleetGPU, 0, len(n.gpus))}
		for _, g := range n.gpus {
			mean := profile.Null
			if g.utilW > 0 {
				mean = g.utilSum / g.utilW
			}
			fn.GPUs = append(fn.GPUs, FleetGPU{UUID: g.uuid, Model: g.model, MemoryTotalBytes: g.memTotal, MIG: g.mig, MeanUtilPct: mean, Index: int(g.index)})
		}
		for _, w := range n.workloads.sorted() {
			if atEnd(*w, a.windowS) {
				fn.Workloads = append(fn.Workloads, w)
			}
		}
		f.Nodes = append(f.Nodes, fn)
	}
	return f
}

// tenureSlackS absorbs rounding in tenure ends (milliseconds, offsets).
const tenureSlackS = 1e-3

// atEnd says whether a workload holds (or waits for) its GPUs at the end of
// a window windowS long: its tenure, in window seconds (addWorkloads),
// reaches the end.
func atEnd(w profile.Workload, windowS float64) bool {
	return len(w.Intervals) > 0 && w.Intervals[len(w.Intervals)-1].EndS >= windowS-tenureSlackS
}
