package analyze

import (
	"math"
	"sort"

	"github.com/seedance/seedance/profile"
)

// gpuExtra is what some GPUs keep beyond their packed figures: for
// attribution the utilization track that splits their time among
// workloads that held them for part of the window, for fragmentation the
// memory they held while idle, and what only small or cut analyses keep
// (rare). It is 80 bytes, a size class, for every GPU of a large fleet
// with --report all.
type gpuExtra struct {
	track    []utilPiece
	tracking bool
	keepsMem bool        // mem is kept (fragmentation)
	mem      strandedAcc // the memory held during idle runs
	rare     *gpuRare
}

// gpuRare is what a GPU keeps in a small cluster (a timeline of its own,
// analysis.perGPU), or, in an analysis that is cut into pieces (Cut) or
// keeps a utilization track, each sample's energy: a workload's share of
// it, for its unit figures, is read over its tenure (docs/units.md).
type gpuRare struct {
	own         *sparkline
	keepsEnergy bool
	energy      []energyPiece
	// counting: energy holds the counter's increases (keepEnergy)
	counting bool
	use      *measuredUse // its workloads' measured use (docs/sharing.md)
}

// keepEnergy keeps a closed sample's piece, whose v is its power and
// whose coverage ends at end, given its counter's increase inc and the
// counter's readings n so far (at most 2). From the second reading on
// energyWithin reads the counter, and the pieces keep the increases: the
// earlier ones, read before it, had none. As a track's, the pieces end
// with one of null v where the coverage ends: e takes its place where it
// starts there, else it stays as a gap.
func (r *gpuRare) keepEnergy(e energyPiece, end, inc float64, n int) {
	if k := len(r.energy); k > 0 && r.energy[k-1].t == e.t {
		r.energy = r.energy[:k-1]
	}
	if n >= 2 {
		if !r.counting {
			for i := range r.energy {
				r.energy[i].v = 0
			}
			r.counting = true
		}
		e.v = inc
	}
	r.energy = append(r.energy, e, energyPiece{end, profile.Null})
}

// own is the GPU's own timeline, nil when it has none.
func (x *gpuExtra) own() *sparkline {
	if x == nil || x.rare == nil {
		return nil
	}
	return x.rare.own
}

// utilPiece is a stretch of a GPU's covered time at one utilization, from
// start to where the next piece starts; adjacent samples of the same value
// share one piece. A track ends with a piece of null utilization where
// its coverage ends, and a gap in it is one too. 16 bytes: a track keeps
// one for most samples of every GPU it follows.
type utilPiece struct{ start, util float64 }

// addTrack records a closed sample's coverage [start, end) and
// utilization.
func (x *gpuExtra) addTrack(start, end, util float64) {
	k := len(x.track)
	if k == 0 {
		x.track = append(x.track, utilPiece{start, util}, utilPiece{end, profile.Null})
		return
	}
	last := &x.track[k-1] // where the coverage ended
	switch {
	case k > 1 && x.track[k-2].util == util && math.Abs(last.start-start) <= eps:
		last.start = end // the same utilization goes on
	case last.start == start:
		*last = utilPiece{start, util}
		x.track = append(x.track, utilPiece{end, profile.Null})
	default: // a gap: the end stays, a piece of no utilization
		x.track = append(x.track, utilPiece{start, util}, utilPiece{end, profile.Null})
	}
}

// utilIntegral is Σ utilization × seconds of the track inside [lo, hi),
// and the seconds of it with a utilization.
func (x *gpuExtra) utilIntegral(lo, hi float64) (sum, covered float64) {
	if x == nil || len(x.track) == 0 {
		return 0, 0
	}
	ps := x.track
	i := sort.Search(len(ps)-1, func(i int) bool { return ps[i+1].start > lo })
	for ; i < len(ps)-1 && ps[i].start < hi; i++ {
		p := ps[i]
		if d := math.Min(hi, ps[i+1].start) - math.Max(lo, p.start); d > 0 && !profile.IsNull(p.util) {
			sum += p.util * d
			covered += d
		}
	}
	return sum, covered
}

// overlap is how much of [lo, hi) the sorted, disjoint intervals cover.
func overlap(ivs []Interval, lo, hi float64) float64 {
	i := sort.Search(len(ivs), func(i int) bool { return ivs[i].EndS > lo })
	sum := 0.0
	for ; i < len(ivs) && ivs[i].StartS < hi; i++ {
		sum += math.Max(0, math.Min(hi, ivs[i].EndS)-math.Max(lo, ivs[i].StartS))
	}
	return sum
}

// gpuTime is a stretch of a GPU's time: seconds covered by samples,
// utilization × seconds, seconds inside counted idle runs, and (when the
// analysis is cut, Cut) the energy drawn.
type gpuTime struct{ observedS, utilSum, idleS, energyJ float64 }

// whole is the GPU's time over the whole window.
func (g *gpuAcc) whole() gpuTime { return gpuTime{g.observedS, g.utilSum, g.idleS, g.energyJ()} }

// within is the GPU's time inside [lo, hi), from its coverage, runs and
// utilization track.
func (g *gpuAcc) within(lo, hi float64) gpuTime {
	util, _ := g.ext.utilIntegral(lo, hi)
	return gpuTime{overlap(g.cover, lo, hi), util, overlap(g.runs, max(lo, 0), min(hi, g.ctx.spanS)), g.energyWithin(lo, hi)}
}

// addTenure records when the workloads of one input held their GPUs, in
// seconds from the window's start: their intervals shifted by the input's
// offset, or the input's whole span when they have none.
func (n *nodeAcc) addTenure(ws []profile.Workload, offset, spanS float64) {
	if n.tenure == nil {
		n.tenure = map[string][]Interval{}
	}
	for _, w := range ws {
		ivs := n.tenure[w.ID]
		if w.Intervals == nil {
			ivs = append(ivs, Interval{offset, offset + spanS})
		}
		for _, iv := range w.Intervals {
			ivs = append(ivs, Interval{offset + iv.StartS, offset + iv.EndS})
		}
		n.tenure[w.ID] = union(ivs)
	}
}

// endTenure records the tenure of an input's workloads on n. When the
// input is the only one and every workload held its GPUs for all of it,
// the node's GPUs need no utilization track: it is dropped, so that
// attribution costs memory only where workloads came and went.
func (a *analysis) endTenure(n *nodeAcc, ws []profile.Workload, in input) {
	n.addTenure(ws, in.offset, in.spanS)
	if !in.only {
		return
	}
	// With one input no later one can add to a tenure: one of the whole
	// window reads as none does (partial), and need not be kept.
	for id := range n.tenure {
		if n.partial(id, a.windowS) == nil {
			delete(n.tenure, id)
		}
	}
	if len(n.tenure) == 0 {
		n.tenure = nil
	}
	if a.p.cut {
		return
	}
	for _, w := range ws {
		if w.State != profile.StatePending && n.partial(w.ID, a.windowS) != nil {
			return
		}
		if w.Queue != "" && a.p.Queues != nil { // the queues' timelines read the track (queueTimelines)
			return
		}
	}
	for _, g := range n.gpus {
		if g.ext != nil && g.ext.use() == nil { // a measured split reads the track
			g.ext.tracking, g.ext.track = false, nil
			if r := g.ext.rare; r != nil { // and the energy with it
				r.keepsEnergy, r.energy = false, nil
			}
		}
	}
}

// partial is a workload's tenure when it is not the whole window, nil when
// it is.
func (n *nodeAcc) partial(id string, windowS float64) []Interval {
	ivs := n.tenure[id]
	if len(ivs) == 0 || len(ivs) == 1 && ivs[0].StartS <= eps && ivs[0].EndS >= windowS-eps {
		return nil
	}
	return ivs
}

// split is a stretch of a GPU's time and the share each of its holders
// (by index into the holders) had of it.
type split struct {
	t       gpuTime
	weights []float64 // by holder; 0 for one that did not hold it then
	basis   basis     // the rule that gave the weights
	lo, hi  float64   // the stretch
}

// splits cuts a GPU's time inside [lo, hi) where a holder came or went,
// so that in each piece the same workloads held it and split it by the
// usual rule (holderWeights). With every holder there for the whole window
// and [lo, hi) the window it is one piece: the GPU's totals. A sweep over
// the holders' interval edges keeps the work at the number of edges times
// the holders present.
func splits(g *gpuAcc, holders []*profile.Workload, tenure [][]Interval, lo, hi, windowS float64) []split {
	var out []split
	sweep(g, holders, tenure, lo, hi, func(from, to float64, w []float64, b basis, edgeless bool) {
		out = append(out, split{g.timeIn(from, to, windowS, edgeless), w, b, from, to})
	})
	return out
}

// bucketSplits calls fn with the splits of each bucket of the window, b
// being [b·bucketS, min(windowS, (b+1)·bucketS)) for b < n, as splits
// gives them bucket by bucket, from one sweep of the holders' edges over
// the window (the queues' timelines cut every queued GPU into hundreds of
// buckets). lean: the splits' times carry the covered and utilized
// seconds only (no idle runs, no energy), all a timeline needs.
func bucketSplits(g *gpuAcc, holders []*profile.Workload, tenure [][]Interval, bucketS float64, n int, windowS float64, lean bool, fn func(b int, sp split)) {
	timeIn := g.timeIn
	if lean {
		timeIn = g.heldIn
	}
	sweep(g, holders, tenure, 0, windowS, func(from, to float64, w []float64, bs basis, edgeless bool) {
		for b := max(0, int(from/bucketS)-1); b < n; b++ {
			lo, hi := float64(b)*bucketS, min(windowS, float64(b+1)*bucketS)
			if lo >= to {
				break
			}
			if lo, hi = max(lo, from), min(hi, to); hi > lo {
				fn(b, split{timeIn(lo, hi, windowS, edgeless), w, bs, lo, hi})
			}
		}
	})
}

// timeIn is the GPU's time inside [lo, hi): its totals when that is the
// window and no holder came or went.
func (g *gpuAcc) timeIn(lo, hi, windowS float64, edgeless bool) gpuTime {
	if edgeless && lo <= 0 && hi >= windowS {
		return g.whole()
	}
	return g.within(lo, hi)
}

// heldIn is timeIn's covered and utilized seconds alone.
func (g *gpuAcc) heldIn(lo, hi, windowS float64, edgeless bool) gpuTime {
	if edgeless && lo <= 0 && hi >= windowS {
		return gpuTime{observedS: g.observedS, utilSum: g.utilSum}
	}
	util, _ := g.ext.utilIntegral(lo, hi)
	return gpuTime{observedS: overlap(g.cover, lo, hi), utilSum: util}
}

// sweep calls fn with each stretch [from, to) of [lo, hi) in which the
// same holders held the GPU, and their weights; edgeless: every holder
// held it throughout (one stretch, [lo, hi) itself).
func sweep(g *gpuAcc, holders []*profile.Workload, tenure [][]Interval, lo, hi float64, fn func(from, to float64, w []float64, b basis, edgeless bool)) {
	type edge struct {
		t      float64
		holder int
		in     bool
	}
	count := 0
	for _, ivs := range tenure {
		count += 2 * len(ivs)
	}
	if count == 0 {
		w, b := holderWeights(holders, g.memTotal)
		fn(lo, hi, w, b, true)
		return
	}
	edges := make([]edge, 0, count)
	present := make([]bool, len(holders))
	for h, ivs := range tenure {
		present[h] = ivs == nil
		for _, iv := range ivs {
			edges = append(edges, edge{iv.StartS, h, true}, edge{iv.EndS, h, false})
		}
	}
	sort.Slice(edges, func(i, j int) bool { return edges[i].t < edges[j].t })
	from := lo
	for i := 0; i <= len(edges); {
		to := hi
		if i < len(edges) {
			to = math.Min(hi, edges[i].t)
		}
		if to > from {
			w, b := presentWeights(holders, present, g.memTotal)
			fn(from, to, w, b, false)
			from = to
		}
		if i == len(edges) {
			break
		}
		// Apply every edge at this time.
		for t := edges[i].t; i < len(edges) && edges[i].t == t; i++ {
			present[edges[i].holder] = edges[i].in
		}
	}
}

// presentWeights is holderWeights over the holders present, 0 for the
// others.
func presentWeights(holders []*profile.Workload, present []bool, memTotal uint64) ([]float64, basis) {
	var wsBuf [8]*profile.Workload // most GPUs have few holders: no allocation but out
	var atBuf [8]int
	var wBuf [8]float64
	ws, at := wsBuf[:0], atBuf[:0]
	for h, ok := range present {
		if ok {
			ws = append(ws, holders[h])
			at = append(at, h)
		}
	}
	weights := wBuf[:0]
	if len(ws) > len(wBuf) {
		weights = make([]float64, 0, len(ws))
	}
	weights = weights[:len(ws)]
	b := weightsInto(weights, ws, memTotal)
	out := make([]float64, len(holders))
	for k, w := range weights {
		out[at[k]] = w
	}
	return out, b
}
