package profile

import (
	"math"
	"time"
)

// Context samples (docs/profile-format.md): a source asked for the window
// [from, to) reads a little before and after it, so that the figures at
// the window's edges are those of a read of everything (the coverage of
// the last sample in the window, an idle run that crosses an edge, the
// energy counter's baseline). The profile's window stays [from, to); the
// samples outside it keep their times (negative before it, at or after
// the window's length past it) and readers count nothing of them.

// Reframe makes a node read from origin (its times in seconds from there)
// a node of the window that starts shiftS seconds after origin and lasts
// spanS: its samples' and errors' times from the window's start, its
// workloads' tenure clipped to the window. A running workload that held
// its GPUs at no time of the window is dropped; one that held them all of
// it has no intervals.
func (n *Node) Reframe(shiftS, spanS float64) {
	for _, t := range n.GPUTimes() {
		for i, x := range t {
			t[i] = shiftMS(x, shiftS)
		}
	}
	for gi := range n.GPUs {
		g := &n.GPUs[gi]
		for i := range g.Errors {
			g.Errors[i].T = shiftMS(g.Errors[i].T, shiftS)
		}
	}
	kept := n.Workloads[:0]
	for _, w := range n.Workloads {
		if w.Intervals != nil {
			ivs, ok := FinishTenure(w.Intervals, shiftS, 1, spanS)
			if !ok && w.State != StatePending {
				continue
			}
			w.Intervals = ivs
		}
		kept = append(kept, w)
	}
	n.Workloads = kept
}

// GPUTimes is each distinct array of n's GPUs' sample times once: GPUs
// that sample at the same times may share one (Join).
func (n *Node) GPUTimes() []Values {
	ts := make([]Values, len(n.GPUs))
	for gi := range n.GPUs {
		ts[gi] = n.GPUs[gi].Series.T
	}
	return distinctTimes(ts)
}

// shiftMS is t − shift, rounded to the millisecond as sample times are.
func shiftMS(t, shift float64) float64 { return math.Round((t-shift)*1000) / 1000 }

// Frame is what a source asked for the window [from, to) with reach on
// each side writes, made of a profile that holds it: p's samples of
// [from − reach, to + reach], the window [from, to), the samples outside
// it as context. A profile that ends before to ends the window there.
func Frame(p *Profile, from, to time.Time, reach time.Duration) *Profile {
	out := Join([]*Profile{p}, from.Add(-reach), to.Add(reach), false)
	shift := from.Sub(out.StartedAt).Seconds()
	if p.EndedAt.Before(to) {
		to = p.EndedAt
	}
	span := to.Sub(from).Seconds()
	for i := range out.Nodes {
		out.Nodes[i].Reframe(shift, span)
	}
	out.StartedAt, out.EndedAt, out.ContextS = from, to, reach.Seconds()
	return out
}
