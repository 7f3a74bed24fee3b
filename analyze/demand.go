package analyze

import (
	"sort"

	"github.com/seedance/seedance/profile"
)

// placeUnscheduled counts the work that waits for GPUs on no node against
// the idle capacity that could run it (docs/analysis.md, Demand not on a
// node): each unscheduled workload, the largest first, takes the first
// node (in report order, the costliest idle first) that is idle now, not
// stale, has as many GPUs as it asks for and is not taken yet. That node
// is stalled, not idle: releasing it would leave the work waiting. Work
// that no idle node could run takes none.
func placeUnscheduled(nodes []NodeReport, ws []profile.Workload) {
	order := append([]profile.Workload(nil), ws...)
	sort.SliceStable(order, func(i, j int) bool {
		if order[i].GPUCount != order[j].GPUCount {
			return order[i].GPUCount > order[j].GPUCount
		}
		return order[i].ID < order[j].ID
	})
	for _, w := range order {
		need := max(1, w.GPUCount)
		for i := range nodes {
			n := &nodes[i]
			if n.Verdict != VerdictIdle || !n.IdleNow || n.Stale || n.GPUs < need || len(n.WaitingFor) > 0 {
				continue
			}
			n.Verdict, n.WaitingFor = VerdictStalled, []string{w.ID}
			break
		}
	}
}
