package analyze

import "github.com/seedance/seedance/profile"

// fleet is the profile as a planner needs it (Report.Fleet): the nodes,
// their GPUs with their memory and mean utilization (a one-sample series),
// their workloads and topology. It is built from what the streaming pass
// kept, and describes the end of the window, which is what an operator
// acts on: a workload whose tenure ended before it (a job that finished,
// a pod that was scheduled or deleted) holds and waits for nothing there.
func (a *analysis) fleet() *profile.Profile {
	p := &profile.Profile{}
	for _, n := range a.order {
		pn := profile.Node{Name: n.name, Labels: n.labels, Topology: n.topology}
		for _, g := range n.gpus {
			mean := profile.Null
			if g.utilW > 0 {
				mean = g.utilSum / g.utilW
			}
			pn.GPUs = append(pn.GPUs, profile.GPU{Index: int(g.index), UUID: g.uuid, Model: g.model, MemoryTotalBytes: g.memTotal,
				MIG: g.mig, Series: profile.Series{T: profile.Values{0}, GPUUtilPct: profile.Values{mean}}})
		}
		for _, w := range n.workloads.sorted() {
			if atEnd(w, a.windowS) {
				pn.Workloads = append(pn.Workloads, w)
			}
		}
		p.Nodes = append(p.Nodes, pn)
	}
	return p
}

// tenureSlackS absorbs rounding in tenure ends (milliseconds, offsets).
const tenureSlackS = 1e-3

// atEnd says whether a workload holds (or waits for) its GPUs at the end of
// a window windowS long: its tenure, in window seconds (addWorkloads),
// reaches the end.
func atEnd(w profile.Workload, windowS float64) bool {
	return len(w.Intervals) > 0 && w.Intervals[len(w.Intervals)-1].EndS >= windowS-tenureSlackS
}
