package render

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/seedance/seedance/ledger/history"
)

// stackGroups is how many groups a daily stacked chart names; the rest
// are one "other" band.
const stackGroups = 8

// stackColors are the named groups' colours (ColorBrewer Set2 and Dark2,
// told apart in print), then "other".
var stackColors = []string{"#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#386cb0", "#999999"}

// stack is one band of a stacked chart: its name and a value per day.
type stack struct {
	name string
	vals []float64
}

// dailyStacks turns a ledger's daily waste into one band per group, the
// costliest stackGroups groups first and the rest as "other", over the
// days in order.
func dailyStacks(waste []history.DayWaste) (days []string, bands []stack) {
	at, totals := map[string]int{}, map[string]float64{}
	for _, d := range waste {
		at[d.Date] = 0
		totals[strings.Join(d.Key, " / ")] += d.WasteCostUSD
	}
	for d := range at {
		days = append(days, d)
	}
	sort.Strings(days)
	for i, d := range days {
		at[d] = i
	}
	names := make([]string, 0, len(totals))
	for k := range totals {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool {
		if totals[names[i]] != totals[names[j]] {
			return totals[names[i]] > totals[names[j]]
		}
		return names[i] < names[j]
	})
	band := map[string]int{}
	for i, n := range names {
		if i == stackGroups && len(names) > stackGroups+1 {
			bands = append(bands, stack{fmt.Sprintf("%d other groups", len(names)-stackGroups), make([]float64, len(days))})
			for _, rest := range names[i:] {
				band[rest] = i
			}
			break
		}
		band[n] = i
		bands = append(bands, stack{n, make([]float64, len(days))})
	}
	for _, d := range waste {
		bands[band[strings.Join(d.Key, " / ")]].vals[at[d.Date]] += d.WasteCostUSD
	}
	return days, bands
}

// dailyChart draws the daily waste stacked by group, with its legend; the
// empty string when there is none.
func dailyChart(id string, waste []history.DayWaste) (string, []legendItem) {
	days, bands := dailyStacks(waste)
	if len(days) == 0 {
		return "", nil
	}
	const w, h, left, top, bottom = 900.0, 240.0, 70.0, 10.0, 24.0
	s := newSVG(id, w, h, "waste by day and group")
	pw, ph := w-left-10, h-top-bottom
	peak := 0.0
	for i := range days {
		sum := 0.0
		for _, b := range bands {
			sum += b.vals[i]
		}
		peak = math.Max(peak, sum)
	}
	y := func(v float64) float64 { return top + ph*(1-v/math.Max(peak, 1e-9)) }
	for _, g := range []float64{0, peak / 2, peak} {
		s.add(`<line class="grid" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, left, w-10, y(g), y(g))
		s.text(left-6, y(g)+4, "end", "axis", money(g))
	}
	bw := pw / float64(len(days))
	every := int(math.Ceil(56 / bw)) // a date label is about 40 px wide
	for i, d := range days {
		below := 0.0
		for k, b := range bands {
			if v := b.vals[i]; v > 0 {
				s.add(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s, %s: %s</title></rect>`,
					left+bw*float64(i)+1, y(below+v), math.Max(1, bw-2), y(below)-y(below+v), stackColors[min(k, len(stackColors)-1)], esc(d), esc(b.name), money(v))
				below += v
			}
		}
		if i%every == 0 {
			s.text(left+bw*(float64(i)+0.5), h-6, "middle", "axis", d[5:])
		}
	}
	legend := make([]legendItem, len(bands))
	for k, b := range bands {
		legend[k] = legendItem{stackColors[min(k, len(stackColors)-1)], b.name}
	}
	return s.String(), legend
}
