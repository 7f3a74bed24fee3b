package profile

import (
	"math"
	"time"
)

// joinOne is Join of one profile without keepLast: what joinAll gives,
// its columns and usage slices of p's.
func joinOne(p *Profile, from, to time.Time) *Profile {
	out := &Profile{SchemaVersion: SchemaVersion, Generator: p.Generator, Source: p.Source, IntervalS: p.IntervalS, Cluster: p.Cluster,
		ContextS: max(0, p.ContextS), Complete: p.Complete, PendingUnknown: p.PendingUnknown, Unscheduled: p.Unscheduled, StartedAt: from, EndedAt: to}
	if p.EndedAt.Before(to) {
		out.EndedAt = p.EndedAt
	}
	base, fromMS, toMS := float64(p.StartedAt.UnixMilli()), float64(from.UnixMilli()), float64(to.UnixMilli())
	start := fromMS
	spans := make([][][2]int, len(p.Nodes)) // each GPU's samples [lo, hi) in the window
	for ni := range p.Nodes {
		spans[ni] = make([][2]int, len(p.Nodes[ni].GPUs))
		for gi := range p.Nodes[ni].GPUs {
			lo, hi := within(p.Nodes[ni].GPUs[gi].Series.T, base, fromMS, toMS)
			spans[ni][gi] = [2]int{lo, hi}
			if hi > lo {
				start = min(start, base+math.Round(p.Nodes[ni].GPUs[gi].Series.T[lo]*1000))
			}
		}
	}
	out.StartedAt = time.UnixMilli(int64(start)).UTC()
	out.Queues = joinQueues(p, start, to)
	out.Nodes = make([]Node, 0, len(p.Nodes))
	for ni := range p.Nodes {
		pn := &p.Nodes[ni]
		n := Node{Name: pn.Name, Labels: pn.Labels, Topology: pn.Topology}
		joinWorkloads(&n, pn.Workloads, base, p.EndedAt.Sub(p.StartedAt).Seconds(), [2]float64{fromMS, float64(out.EndedAt.UnixMilli())}, fromMS)
		var times sharedTimes
		for gi := range pn.GPUs {
			if lo, hi := spans[ni][gi][0], spans[ni][gi][1]; hi > lo {
				in := pn.GPUs[gi].Series.T[lo:hi]
				t := times.of(in, func() Values { return rebased(in, base, start) })
				n.GPUs = append(n.GPUs, sliceGPU(&pn.GPUs[gi], p.IntervalS, t, lo, hi))
			}
		}
		shiftTenure(&n, (fromMS-start)/1000)
		out.Nodes = append(out.Nodes, n)
	}
	return out
}

// within is the samples [lo, hi) of times t (s from base, ms) at or after
// from and at or before to.
func within(t Values, base, from, to float64) (lo, hi int) {
	lo = len(t)
	for i, x := range t {
		abs := base + math.Round(x*1000)
		if abs > to {
			break
		}
		if abs >= from {
			lo, hi = min(lo, i), i+1
		}
	}
	return min(lo, hi), hi
}

// sliceGPU is g's samples [lo, hi) at times t, its columns and usage
// slices of g's where they hold a value.
func sliceGPU(g *GPU, intervalS float64, t Values, lo, hi int) GPU {
	out := *g
	if out.IntervalS == 0 {
		out.IntervalS = intervalS
	}
	out.Errors, out.Usage = nil, nil
	out.Series = Series{T: t}
	for m := Metric(0); m < NumMetrics; m++ {
		if c := part(*g.Series.Col(m), lo, hi); hasValue(c) {
			*out.Series.Col(m) = c
		}
	}
	for _, u := range g.Usage {
		if c := part(u.UtilPct, lo, hi); hasValue(c) {
			out.Usage = append(out.Usage, Usage{Workload: u.Workload, UtilPct: c})
		}
	}
	return out
}

// part is v[lo:hi], its capacity cut there; a copy padded with nulls where
// v is shorter.
func part(v Values, lo, hi int) Values {
	if v == nil {
		return nil
	}
	if len(v) >= hi {
		return v[lo:hi:hi]
	}
	out := make(Values, hi-lo)
	for i := range out {
		out[i] = at(v, lo+i)
	}
	return out
}

// distinct says whether p's node names, and each node's GPU UUIDs, are
// distinct, as a valid profile's are (joinAll merges repeats).
func distinct(p *Profile) bool {
	nodes := make(map[string]bool, len(p.Nodes))
	for ni := range p.Nodes {
		n := &p.Nodes[ni]
		if nodes[n.Name] {
			return false
		}
		nodes[n.Name] = true
		uuids := make(map[string]bool, len(n.GPUs))
		for gi := range n.GPUs {
			if uuids[n.GPUs[gi].UUID] {
				return false
			}
			uuids[n.GPUs[gi].UUID] = true
		}
	}
	return true
}
