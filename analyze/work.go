package analyze

import (
	"fmt"
	"math"
	"sort"

	"github.com/seedance/seedance/profile"
)

// Work counters, as the analysis reads them (docs/units.md, Work done).
// A counter's readings are folded as they come, input by input: nothing
// of its series is kept but the last reading and the sum.

// maxRatePerGPU is the most of a unit one GPU can do in a second: a
// reading that claims more is a counter fault (docs/units.md, Bounds).
// Units not listed have no bound.
var maxRatePerGPU = map[string]float64{
	profile.UnitRequests:     10_000,
	profile.UnitInputTokens:  1_000_000,
	profile.UnitOutputTokens: 100_000,
}

// workAcc is one counter of one workload on one node.
type workAcc struct {
	unit, model, series string
	last, lastT         float64
	readings            int
	counted             bool    // an increase was read in the window
	work                float64 // the increases read in the window
	fault               string  // why the counter cannot be trusted
	// byPiece and countedIn, in a cut analysis, are the increases summed
	// by piece of cuts (the pieces' bounds, seconds from the window's
	// start), and whether one was read there (cutWork).
	cuts      []float64
	byPiece   []float64
	countedIn []bool
}

// read folds one reading v at t (seconds from the window's start): a
// rise is work done; a fall is a restart, after which the reading is the
// work done since (Prometheus' increase()); the first reading is only a
// baseline. An increase counts when read in [0, spanS), as the energy
// counter's does. bound is the most the counter can rise a second.
func (c *workAcc) read(t, v, bound, spanS float64) {
	switch {
	case profile.IsNull(v) || c.fault != "" || c.readings > 0 && t <= c.lastT:
		return // no reading, an untrusted counter, or read already (an input's context)
	case v < 0 || math.IsInf(v, 0):
		c.fault = fmt.Sprintf("%s reads %g at %.3f s", c.name(), v, t)
		return
	case c.readings == 0:
		c.last, c.lastT, c.readings = v, t, 1
		return
	}
	inc := v - c.last
	if v < c.last {
		inc = v // restarted: counted from zero
	}
	if bound > 0 && inc > bound*(t-c.lastT) {
		c.fault = fmt.Sprintf("%s rises %g in %.3g s at %.3f s, more than %g a second", c.name(), inc, t-c.lastT, t, bound)
		return
	}
	if t >= 0 && t < spanS {
		c.work += inc
		c.counted = true
		if i := sort.SearchFloat64s(c.cuts, t+1e-9) - 1; i >= 0 && i < len(c.byPiece) {
			c.byPiece[i] += inc
			c.countedIn[i] = true
		}
	}
	c.last, c.lastT = v, t
	c.readings++
}

// name is the counter's series, else its unit and model.
func (c *workAcc) name() string {
	if c.series != "" {
		return c.series
	}
	return c.unit + " of " + c.model
}

// addWork folds the counters of one input's workloads on n. Two series of
// one unit and model on one workload (two servers reporting one pod) make
// both untrusted: their sum would count one server's work twice or not.
func (a *analysis) addWork(n *nodeAcc, ws []profile.Workload, in input) {
	for _, w := range ws {
		if len(w.Work) == 0 {
			continue
		}
		if n.work == nil {
			n.work = map[string][]*workAcc{}
		}
		gpus := float64(max(1, len(w.GPUs), len(w.GPUUUIDs), w.GPUCount))
		for _, c := range w.Work {
			acc := n.workOf(w.ID, c)
			if a.cutS != nil && acc.byPiece == nil {
				acc.cuts, acc.byPiece, acc.countedIn = a.cutS, make([]float64, len(a.cutS)-1), make([]bool, len(a.cutS)-1)
			}
			bound := maxRatePerGPU[c.Unit] * gpus
			for i, t := range c.T {
				acc.read(in.offset+t, c.V[i], bound, a.windowS)
			}
		}
	}
}

// workOf finds or adds workload id's counter c on n, marking a second
// series of the same unit and model.
func (n *nodeAcc) workOf(id string, c profile.Work) *workAcc {
	for _, acc := range n.work[id] {
		if acc.unit == c.Unit && acc.model == c.Model {
			if acc.series != c.Series && acc.fault == "" {
				acc.fault = fmt.Sprintf("%s and %s both count %s of %s for %s", acc.name(), c.Series, c.Unit, orNone(c.Model), id)
			}
			return acc
		}
	}
	acc := &workAcc{unit: c.Unit, model: c.Model, series: c.Series}
	n.work[id] = append(n.work[id], acc)
	return acc
}

func orNone(s string) string {
	if s == "" {
		return "(no model)"
	}
	return s
}
