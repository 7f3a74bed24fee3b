package recommend

import (
	"sort"
	"strconv"

	"github.com/seedance/seedance/profile"
)

// PinnedLabel marks a workload that must never move.
const PinnedLabel = "seedance.io/pinned"

// FromProfile builds the planner's cluster from a profile. price gives the
// USD per hour of one GPU of a model. A GPU that no known workload holds but
// that was busy on average (mean utilization ≥ busyPct) cannot be freed.
// Only pods can be moved: processes and wrapped jobs are treated as pinned.
// A workload's share of each GPU is its "gpu_milli" label when it has one
// (1000 otherwise); its memory per GPU is its GPU memory over its GPUs.
func FromProfile(p *profile.Profile, price func(model string) float64, busyPct float64) *Cluster {
	c := &Cluster{}
	for ni := range p.Nodes {
		pn := &p.Nodes[ni]
		n := &Node{Name: pn.Name, Topology: pn.Topology}
		var full []profile.GPU
		for _, g := range pn.GPUs {
			if g.MIG == nil {
				full = append(full, g)
			}
		}
		sort.Slice(full, func(i, j int) bool { return full[i].Index < full[j].Index })
		pos := map[int]int{}
		for i, g := range full {
			pos[g.Index] = i
			n.GPUs = append(n.GPUs, GPU{MemBytes: g.MemoryTotalBytes})
			if n.Model == "" {
				n.Model = g.Model
			}
			n.PricePerHour += price(g.Model)
		}
		held := map[int]bool{}
		for _, w := range pn.Workloads {
			cw := &Workload{ID: w.ID, Name: w.Name, Namespace: w.Labels["namespace"], Kind: w.Kind, Node: pn.Name,
				Pending: w.State == profile.StatePending, Count: w.GPUCount, Milli: MilliPerGPU,
				Pinned: w.Labels[PinnedLabel] == "true" || (w.Kind != profile.KindPod && w.State != profile.StatePending)}
			if m, err := strconv.Atoi(w.Labels["gpu_milli"]); err == nil && m > 0 && m < MilliPerGPU {
				cw.Milli = m
			}
			if cw.Pending {
				if cw.Count < 1 {
					cw.Count = 1
				}
				c.Workloads = append(c.Workloads, cw)
				continue
			}
			for _, gi := range w.GPUs {
				if i, ok := pos[gi]; ok {
					cw.GPUs = append(cw.GPUs, i)
				}
			}
			if len(cw.GPUs) == 0 {
				continue
			}
			cw.Count = len(cw.GPUs)
			cw.MemPerGPU = w.GPUMemoryBytes / uint64(cw.Count)
			for _, i := range cw.GPUs {
				g := &n.GPUs[i]
				g.UsedMilli = min(MilliPerGPU, g.UsedMilli+cw.Milli)
				g.UsedMem += cw.MemPerGPU
				held[i] = true
			}
			c.Workloads = append(c.Workloads, cw)
		}
		for i, g := range full {
			if !held[i] && meanUtil(g.Series.GPUUtilPct) >= busyPct {
				n.GPUs[i].Busy = true
			}
		}
		c.Nodes = append(c.Nodes, n)
	}
	return c
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
