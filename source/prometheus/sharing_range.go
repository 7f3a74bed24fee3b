package prometheus

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/seedance/seedance/source/dcgm"
)

// rangeNotes counts the sharing readings that no cluster can send — NaN,
// an infinity, a negative value, more than 100 % of a GPU's cores, more
// memory than the format holds — by metric and unit. Such a reading is ignored
// (the pod counts as having asked nothing, or its use at that time is
// unmeasured) and said in the profile's notes with the first series that
// sent one, so that an operator learns the exporter sends garbage
// (docs/sharing.md).
type rangeNotes struct {
	mu sync.Mutex
	by map[string]*rangeNote
}

type rangeNote struct {
	metric, series, unit string
	v, max               float64
	n                    int
}

// ok says whether v is within [0, hi]; when it is not it is counted
// against metric, naming the series (its labels) the first time.
func (r *rangeNotes) ok(metric string, labels map[string]string, v, hi float64, unit string) bool {
	if !math.IsNaN(v) && v >= 0 && v <= hi {
		return true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.by == nil {
		r.by = map[string]*rangeNote{}
	}
	key := metric + " (" + unit + ")"
	if r.by[key] == nil {
		r.by[key] = &rangeNote{metric: metric, series: seriesName(metric, labels), unit: unit, v: v, max: hi}
	}
	r.by[key].n++
	return false
}

// keep is the readings of pairs within [0, hi], the others counted.
func (r *rangeNotes) keep(metric string, labels map[string]string, pairs []dcgm.Pair, hi float64, unit string) []dcgm.Pair {
	out := pairs[:0:0]
	for _, p := range pairs {
		if r.ok(metric, labels, p.V, hi, unit) {
			out = append(out, p)
		}
	}
	return out
}

// notes is one line per metric that sent out-of-range readings.
func (r *rangeNotes) notes() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, k := range slices.Sorted(maps.Keys(r.by)) {
		b := r.by[k]
		out = append(out, fmt.Sprintf("%d out-of-range reading(s) of %s ignored (%s, 0–%s): the first, %s = %s",
			b.n, b.metric, b.unit, strconv.FormatFloat(b.max, 'f', -1, 64), b.series, strconv.FormatFloat(b.v, 'g', -1, 64)))
	}
	return out
}

// seriesName is metric{label="value",…}, its labels sorted, at most 240
// bytes.
func seriesName(metric string, labels map[string]string) string {
	var b strings.Builder
	b.WriteString(metric + "{")
	for i, k := range slices.Sorted(maps.Keys(labels)) {
		if k == "__name__" {
			continue
		}
		if i > 0 && b.Len() > len(metric)+1 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "%s=%q", k, labels[k])
	}
	b.WriteString("}")
	if s := b.String(); len(s) > 240 {
		return strings.ToValidUTF8(s[:240], "") + "…"
	}
	return b.String()
}
