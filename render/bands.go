package render

import (
	"fmt"
	"math"
	"strings"

	"github.com/seedance/seedance/report"
)

// utilBand is a range of utilization the bands chart counts GPUs (or
// nodes) in; the last band holds those without a sample (a gap).
type utilBand struct {
	name, color string
	lo, hi      float64 // [lo, hi) in percent; the last band: NaN
}

// utilBands are the chart's bands, bottom up: below the idle threshold,
// two steps of partial use, and busy; then no data.
func utilBands(threshold float64) []utilBand {
	return []utilBand{
		{fmt.Sprintf("idle (below %g%%)", threshold), "#a50026", math.Inf(-1), threshold},
		{fmt.Sprintf("%g–50%%", threshold), "#fdae61", threshold, 50},
		{"50–80%", "#a6d96a", 50, 80},
		{"80% and more", "#1a9850", 80, math.Inf(1)},
		{"no data (a gap)", noDataColor, math.NaN(), math.NaN()},
	}
}

// bandOf is the band of a value (the no-data band for nil).
func bandOf(bands []utilBand, v *float64) int {
	if v == nil {
		return len(bands) - 1
	}
	for i, b := range bands[:len(bands)-1] {
		if *v >= b.lo && *v < b.hi {
			return i
		}
	}
	return len(bands) - 2
}

// bandUnit is what the bands chart counts: GPUs when every node has its
// GPU timelines, nodes otherwise.
func bandUnit(r *report.Result) string {
	if perGPU(r) {
		return "GPUs"
	}
	return "nodes"
}

// bandCounts counts, per slice, the units (bandUnit) in each band.
func bandCounts(r *report.Result, bands []utilBand) [][]int {
	slices := len(r.Timeline.MeanUtilPct)
	counts := make([][]int, slices)
	for i := range counts {
		counts[i] = make([]int, len(bands))
	}
	add := func(tl []*float64) {
		for i := 0; i < slices; i++ {
			var v *float64
			if i < len(tl) {
				v = tl[i]
			}
			counts[i][bandOf(bands, v)]++
		}
	}
	if perGPU(r) {
		for _, n := range r.Nodes {
			for _, tl := range n.GPUTimelines {
				add(tl)
			}
		}
		return counts
	}
	for _, n := range r.Nodes {
		add(n.UtilSparkline)
	}
	return counts
}

// utilizationChart stacks, per time slice, the share of GPUs (or nodes) in
// each utilization band, gaps included, under the cluster's mean
// utilization (line), with a strip below darker where more nodes were
// inside an idle interval. Its legend is the page's (bandLegend).
func utilizationChart(r *report.Result) string {
	const w, h, left, top, bottom, strip = 900.0, 260.0, 44.0, 10.0, 48.0, 14.0
	tl := r.Timeline
	n := len(tl.MeanUtilPct)
	s := newSVG("chart-utilization", w, h, "cluster GPU utilization over time")
	pw, ph := w-left-10, h-top-bottom
	x := func(i float64) float64 { return left + pw*i/math.Max(1, float64(n)) }
	y := func(v float64) float64 { return top + ph*(1-v/100) }
	bands := utilBands(r.Params.IdleThresholdPct)
	counts, unit := bandCounts(r, bands), bandUnit(r)
	for i, c := range counts {
		total, below := 0, 0
		for _, k := range c {
			total += k
		}
		for b, k := range c {
			if k == 0 || total == 0 {
				continue
			}
			lo, hi := 100*float64(below)/float64(total), 100*float64(below+k)/float64(total)
			s.add(`<rect class="b%d" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%d %s %s</title></rect>`,
				b, x(float64(i)), y(hi), x(float64(i+1))-x(float64(i)), y(lo)-y(hi), bands[b].color, k, unit, esc(bands[b].name))
			below += k
		}
	}
	stripY := top + ph + 6
	s.text(left-6, stripY+11, "end", "axis", "idle")
	for i, f := range tl.IdleNodeFraction {
		if f > 0 {
			s.add(`<rect class="idle" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill-opacity="%.2f"><title>%.0f%% of nodes idle</title></rect>`,
				x(float64(i)), stripY, x(float64(i+1))-x(float64(i)), strip, 0.2+0.8*f, 100*f)
		}
	}
	for _, g := range []float64{0, 25, 50, 75, 100} {
		s.add(`<line class="grid" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, left, w-10, y(g), y(g))
		s.text(left-6, y(g)+4, "end", "axis", fmt.Sprintf("%.0f%%", g))
	}
	var line []string
	for i, v := range tl.MeanUtilPct {
		if v != nil {
			line = append(line, fmt.Sprintf("%.1f,%.1f", x(float64(i)+0.5), y(*v)))
		}
	}
	s.add(`<polyline class="halo" points="%s"/><polyline class="mean" points="%s"/>`, strings.Join(line, " "), strings.Join(line, " "))
	timeAxis(s, r, left, pw, h-6)
	return s.String()
}

// legendItem is one entry of a chart's legend.
type legendItem struct{ Color, Name string }

// bandLegend names the utilization chart's bands, gaps included.
func bandLegend(r *report.Result) []legendItem {
	var out []legendItem
	for _, b := range utilBands(r.Params.IdleThresholdPct) {
		out = append(out, legendItem{b.color, b.name})
	}
	return out
}
