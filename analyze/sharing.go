package analyze

import (
	"math"
	"slices"
	"sort"
	"strconv"

	"github.com/seedance/seedance/profile"
)

// Shared GPUs (docs/sharing.md): a GPU held by several workloads at once
// is split among them by what each measurably used where the profile
// measures it (its usage columns), else by what each asked for, else
// evenly. basis says which rule split a stretch.
type basis uint8

// The bases, in the order of the report's basis_gpu_hours.
const (
	basisWhole     basis = iota // one holder, no request: the GPU is its
	basisMeasured               // each holder's measured utilization
	basisRequested              // cores, memory or gpu_milli asked for
	basisEven                   // equal parts
	nBases
)

var basisNames = [nBases]string{"whole", "measured", "requested", "even"}

func (b basis) String() string { return basisNames[b] }

// holderWeights is each holder's share of a GPU they hold together, and
// the rule that gave it: one holder that asked for nothing has it whole;
// when every holder asked for a part of it by the same measure (cores,
// else memory of the GPU's memTotal, else gpu_milli) each has the part it
// asked for, scaled down when the parts add up to more than the GPU (what
// they leave is held by no workload); else equal parts.
func holderWeights(holders []*profile.Workload, memTotal uint64) ([]float64, basis) {
	weights := make([]float64, len(holders))
	return weights, weightsInto(weights, holders, memTotal)
}

// weightsInto is holderWeights written into weights (as long as holders).
func weightsInto(weights []float64, holders []*profile.Workload, memTotal uint64) basis {
	for _, ask := range requestMeasures {
		sum, ok := 0.0, true
		for i, w := range holders {
			weights[i] = ask(w, memTotal)
			if !(weights[i] > 0) {
				ok = false
				break
			}
			sum += weights[i]
		}
		if !ok {
			continue
		}
		if sum > 1 {
			for i := range weights {
				weights[i] /= sum
			}
		}
		return basisRequested
	}
	for i := range weights {
		weights[i] = 1 / float64(len(holders))
	}
	if len(holders) == 1 {
		return basisWhole
	}
	return basisEven
}

// requestMeasures are the measures of a request, in the order tried: the
// share of the GPU asked for, 0 when the workload asked none by it.
var requestMeasures = []func(w *profile.Workload, memTotal uint64) float64{
	func(w *profile.Workload, _ uint64) float64 {
		if s := w.Sharing; s != nil {
			return s.CoresPct / 100
		}
		return 0
	},
	func(w *profile.Workload, memTotal uint64) float64 {
		if s := w.Sharing; s != nil && memTotal > 0 {
			return math.Min(1, float64(s.MemoryBytes)/float64(memTotal))
		}
		return 0
	},
	func(w *profile.Workload, _ uint64) float64 {
		m := 0
		if s := w.Sharing; s != nil {
			m = s.Milli
		}
		if m == 0 {
			// openb's traces and older profiles carry it as a label.
			if v, err := strconv.Atoi(w.Labels["gpu_milli"]); err == nil && v >= 1 && v <= 1000 {
				m = v
			}
		}
		return float64(m) / 1000
	},
}

// measuredUse is a GPU's measured use by workload (profile.Usage): the
// workloads in the order first seen, and the stretches of its coverage
// with each one's utilization (NaN: not measured then).
type measuredUse struct {
	ids     []string
	pending []float64 // the open sample's, by ids; nil when it has none
	pieces  []usePiece
}

type usePiece struct {
	start, end float64
	util       []float64
}

// sampleUse keeps sample i's usage as the open sample's, for count to
// record over its coverage when the sample closes.
func (x *gpuExtra) sampleUse(usage []profile.Usage, i int) {
	if x == nil || !x.tracking {
		return
	}
	if len(usage) == 0 {
		if x.rare != nil && x.rare.use != nil {
			x.rare.use.pending = nil
		}
		return
	}
	if x.rare == nil {
		x.rare = &gpuRare{}
	}
	if x.rare.use == nil {
		x.rare.use = &measuredUse{}
	}
	u := x.rare.use
	for _, c := range usage {
		if !slices.Contains(u.ids, c.Workload) {
			u.ids = append(u.ids, c.Workload)
		}
	}
	u.pending = make([]float64, len(u.ids))
	for k := range u.pending {
		u.pending[k] = profile.Null
	}
	for _, c := range usage {
		u.pending[slices.Index(u.ids, c.Workload)] = c.UtilPct[i]
	}
}

// addUse records the open sample's usage over [lo, hi) of its coverage.
func (x *gpuExtra) addUse(lo, hi float64) {
	if x == nil || x.rare == nil || x.rare.use == nil || x.rare.use.pending == nil {
		return
	}
	u := x.rare.use
	if k := len(u.pieces); k > 0 && math.Abs(u.pieces[k-1].end-lo) <= eps && sameUse(u.pieces[k-1].util, u.pending) {
		u.pieces[k-1].end = hi
		return
	}
	u.pieces = append(u.pieces, usePiece{lo, hi, u.pending})
}

func sameUse(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && !(profile.IsNull(a[i]) && profile.IsNull(b[i])) {
			return false
		}
	}
	return true
}

// use is the GPU's measured use, nil when it has none.
func (x *gpuExtra) use() *measuredUse {
	if x == nil || x.rare == nil {
		return nil
	}
	return x.rare.use
}

// measured cuts a split where the GPU's use was measured: in a stretch in
// which every holder present had a measured utilization and they add up to
// more than 0, each one's weight is its part of their sum; the rest of the
// split keeps its weights.
func measured(g *gpuAcc, holders []*profile.Workload, sp split) []split {
	u := g.ext.use()
	if u == nil || len(holders) < 2 {
		return []split{sp}
	}
	at := make([]int, len(holders)) // each holder's column, -1 none
	for i, w := range holders {
		at[i] = slices.Index(u.ids, w.ID)
	}
	var out []split
	from := sp.lo
	keep := func(to float64) {
		if to > from {
			out = append(out, split{g.within(from, to), sp.weights, sp.basis, from, to})
		}
	}
	i := sort.Search(len(u.pieces), func(i int) bool { return u.pieces[i].end > sp.lo })
	for ; i < len(u.pieces) && u.pieces[i].start < sp.hi; i++ {
		p := u.pieces[i]
		lo, hi := max(p.start, sp.lo), min(p.end, sp.hi)
		w, ok := measuredWeights(sp.weights, at, p.util)
		if !ok || hi <= lo {
			continue
		}
		keep(lo)
		out = append(out, split{g.within(lo, hi), w, basisMeasured, lo, hi})
		from = hi
	}
	keep(sp.hi)
	return out
}

// measuredWeights is the present holders' (weight > 0) parts of their
// measured utilization; false when fewer than two are present, one of
// them has none or they add up to 0 (nobody used the GPU): the split's
// weights stand.
func measuredWeights(weights []float64, at []int, util []float64) ([]float64, bool) {
	out := make([]float64, len(weights))
	sum, present := 0.0, 0
	for i, w := range weights {
		if w == 0 {
			continue
		}
		present++
		if at[i] < 0 || at[i] >= len(util) || profile.IsNull(util[at[i]]) {
			return nil, false
		}
		out[i] = util[at[i]]
		sum += out[i]
	}
	if sum <= 0 || present < 2 {
		return nil, false
	}
	for i := range out {
		out[i] /= sum
	}
	return out, true
}
