package profile

import (
	"fmt"
	"math"
	"regexp"
)

// Work is one counter of the work a workload did (v1.2; docs/units.md):
// its unit, the model it served, the series it was read from, and its
// readings at times T (seconds from started_at; before it, a reading is
// only a baseline), as the source read them: cumulative, a restart's
// reset included. V is null where there was no reading. A workload with
// no counters has no Work, never zeros.
type Work struct {
	// Unit is requests, input_tokens, output_tokens, or a unit the user
	// named (videos, images, steps): lower case, digits and underscores.
	Unit string `json:"unit"`
	// Model is the model served (vLLM's model_name), "" when unknown.
	Model string `json:"model,omitempty"`
	// Series names where the readings came from (a metric and its
	// labels), for the warnings about them.
	Series string `json:"series,omitempty"`
	T      Values `json:"t"`
	V      Values `json:"v"`
}

// Work units seedance prices by its own scale (docs/units.md).
const (
	UnitRequests     = "requests"
	UnitInputTokens  = "input_tokens"
	UnitOutputTokens = "output_tokens"
)

// MaxWorkPerWorkload bounds a workload's counters (units × models).
const MaxWorkPerWorkload = 64

// unitName is the form of a unit's name.
var unitName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// CheckUnit says whether a unit's name has the documented form.
func CheckUnit(unit string) error {
	if !unitName.MatchString(unit) {
		return fmt.Errorf("unit %q: a unit is lower-case letters, digits and underscores, starting with a letter, at most 64", short(unit))
	}
	return nil
}

// checkWork checks a workload's counters: a known form of unit, each as
// many readings as times, the times finite and ascending. What the
// readings say (a decrease, a negative value) is the analysis' to judge.
func checkWork(ws []Work) error {
	if len(ws) > MaxWorkPerWorkload {
		return fmt.Errorf("%d work counters, more than %d", len(ws), MaxWorkPerWorkload)
	}
	for i, w := range ws {
		if err := CheckUnit(w.Unit); err != nil {
			return fmt.Errorf("work[%d]: %v", i, err)
		}
		if len(w.T) != len(w.V) {
			return fmt.Errorf("work[%d] (%s): %d times but %d readings", i, w.Unit, len(w.T), len(w.V))
		}
		prev := math.Inf(-1)
		for j, t := range w.T {
			if math.IsNaN(t) || math.IsInf(t, 0) || t <= prev {
				return fmt.Errorf("work[%d] (%s): t[%d] = %v: times are finite and ascending", i, w.Unit, j, t)
			}
			prev = t
		}
	}
	return nil
}

// work reads a workload's counters.
func (r metaReader) work(dst *[]Work) error {
	err := listOf(r, dst, func(w *Work) error {
		return r.object(func(key string) error {
			switch key {
			case "unit":
				return r.sc.String(&w.Unit)
			case "model":
				return r.sc.String(&w.Model)
			case "series":
				return r.sc.String(&w.Series)
			case "t", "v":
				col, err := r.sc.Column(nil, MaxSamplesPerGPU)
				if key == "t" {
					w.T = col
				} else {
					w.V = col
				}
				return err
			}
			return r.sc.Skip()
		})
	})
	if err == nil {
		shareTimes(*dst)
	}
	return err
}

// shareTimes gives a counter the times of one before it where the two
// read at the same times (a server's requests and tokens, scraped
// together): one array instead of two. Nothing changes a counter's times
// in place but a join's own (shiftTenure, which shifts each array once).
func shareTimes(ws []Work) {
	var times sharedTimes
	for i := range ws {
		ws[i].T = times.of(ws[i].T, func() Values { return ws[i].T })
	}
}

// joinWork is the readings of ws within cut (Unix ms; base is their
// profile's start), and the last one before it, a baseline, with times
// from rel (Unix ms); appended to the counters of the same unit, model
// and series in have, which end before them.
func joinWork(have, ws []Work, base float64, cut [2]float64, rel float64) []Work {
	var times sharedTimes // the new counters': their own arrays, no room to append into
	for _, w := range ws {
		lo, hi := len(w.T), 0
		for j, t := range w.T {
			abs := base + math.Round(t*1000)
			if abs > cut[1] {
				break
			}
			if abs >= cut[0] && j < lo {
				lo = j
			}
			hi = j + 1
		}
		if lo >= hi {
			continue // no reading in the cut: nothing counted there
		}
		lo = max(0, lo-1) // and the reading before it, a baseline
		i := workIndex(have, w)
		if i < 0 {
			// A new counter: its readings are w's, sliced with no room to
			// append into (a later input's appends copy them), and its
			// times rebased, shared with a counter before it where both
			// read at the same times (shareTimes).
			in := w.T[lo:hi]
			t := times.of(in, func() Values { return rebased(in, base, rel) })
			have = append(have, Work{Unit: w.Unit, Model: w.Model, Series: w.Series, T: t, V: w.V[lo:hi:hi]})
			continue
		}
		c := &have[i]
		for j := lo; j < hi; j++ {
			t := (base + math.Round(w.T[j]*1000) - rel) / 1000
			if n := len(c.T); n > 0 && t <= c.T[n-1] {
				continue // read already, by the input before
			}
			c.T, c.V = append(c.T, t), append(c.V, w.V[j])
		}
	}
	return have
}

// rebased is times t (s from base, Unix ms) in s from rel, a new array.
func rebased(t Values, base, rel float64) Values {
	out := make(Values, len(t))
	for j, x := range t {
		out[j] = (base + math.Round(x*1000) - rel) / 1000
	}
	return out
}

// workIndex is where have holds w's counter, -1 if nowhere.
func workIndex(have []Work, w Work) int {
	for i, h := range have {
		if h.Unit == w.Unit && h.Model == w.Model && h.Series == w.Series {
			return i
		}
	}
	return -1
}
