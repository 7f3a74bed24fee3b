package analyze

import "github.com/seedance/seedance/profile"

// fleet is the profile as a planner needs it (Report.Fleet): the nodes,
// their GPUs with their memory and mean utilization (a one-sample series),
// their workloads and topology. It is built from what the streaming pass
// kept.
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
		pn.Workloads = n.workloads.sorted()
		p.Nodes = append(p.Nodes, pn)
	}
	return p
}
