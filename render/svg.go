package render

import (
	"fmt"
	"html"
	"math"
	"strings"
	"time"

	"github.com/seedance/seedance/report"

	"github.com/seedance/seedance/analyze"
)

// svg builds an SVG document as text. Every text and attribute value from a
// report passes through esc: a node named <script> stays text.
type svg struct {
	b    strings.Builder
	w, h float64
}

func newSVG(id string, w, h float64, label string) *svg {
	s := &svg{w: w, h: h}
	fmt.Fprintf(&s.b, `<svg id="%s" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %g %g" width="%g" height="%g" role="img" aria-label="%s">`,
		esc(id), w, h, w, h, esc(label))
	return s
}

func esc(s string) string { return html.EscapeString(s) }

func (s *svg) add(format string, args ...any) { fmt.Fprintf(&s.b, format, args...) }

func (s *svg) text(x, y float64, anchor, class, text string) {
	s.add(`<text x="%.1f" y="%.1f" text-anchor="%s" class="%s">%s</text>`, x, y, anchor, class, esc(text))
}

func (s *svg) String() string { return s.b.String() + "</svg>" }

// utilColor maps utilization to a colour: idle is red, half is yellow,
// full is green (ColorBrewer RdYlGn), in 11 steps so equal cells merge.
func utilColor(v *float64) string {
	if v == nil {
		return "#ffffff"
	}
	steps := []string{"#a50026", "#d73027", "#f46d43", "#fdae61", "#fee08b", "#ffffbf", "#d9ef8b", "#a6d96a", "#66bd63", "#1a9850", "#006837"}
	i := int(math.Round(*v / 10))
	if i < 0 {
		i = 0
	}
	if i > 10 {
		i = 10
	}
	return steps[i]
}

// clockLabel labels a time axis tick.
func clockLabel(start time.Time, s float64) string {
	return start.Add(time.Duration(s * float64(time.Second))).UTC().Format("15:04")
}

// utilizationChart draws the cluster's mean utilization, the 10th–90th
// percentile band across GPUs, and shades the slices where nodes were idle.
func utilizationChart(r *report.Result) string {
	const w, h, left, top, bottom, strip = 900.0, 260.0, 44.0, 10.0, 48.0, 14.0
	tl := r.Timeline
	n := len(tl.MeanUtilPct)
	s := newSVG("chart-utilization", w, h, "cluster GPU utilization over time")
	pw, ph := w-left-10, h-top-bottom
	x := func(i float64) float64 { return left + pw*i/math.Max(1, float64(n)) }
	y := func(v float64) float64 { return top + ph*(1-v/100) }
	// Idle nodes: a strip under the plot, darker where more nodes idle.
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
	var band []string
	for i := 0; i < n; i++ {
		if tl.P90UtilPct[i] != nil {
			band = append(band, fmt.Sprintf("%.1f,%.1f", x(float64(i)+0.5), y(*tl.P90UtilPct[i])))
		}
	}
	for i := n - 1; i >= 0; i-- {
		if tl.P10UtilPct[i] != nil {
			band = append(band, fmt.Sprintf("%.1f,%.1f", x(float64(i)+0.5), y(*tl.P10UtilPct[i])))
		}
	}
	if len(band) > 2 {
		s.add(`<polygon class="band" points="%s"/>`, strings.Join(band, " "))
	}
	var line []string
	for i, v := range tl.MeanUtilPct {
		if v != nil {
			line = append(line, fmt.Sprintf("%.1f,%.1f", x(float64(i)+0.5), y(*v)))
		}
	}
	s.add(`<polyline class="mean" points="%s"/>`, strings.Join(line, " "))
	timeAxis(s, r, left, pw, h-6)
	return s.String()
}

// timeAxis labels five times along the bottom of a chart.
func timeAxis(s *svg, r *report.Result, left, pw, y float64) {
	for i := 0; i <= 4; i++ {
		f := float64(i) / 4
		anchor := "middle"
		if i == 4 {
			anchor = "end"
		}
		s.text(left+pw*f, y, anchor, "axis", clockLabel(r.Window.Start, f*r.Window.DurationS))
	}
}

// heatmapRow is one row of the heatmap.
type heatmapRow struct {
	label string
	vals  []*float64
}

// heatmap draws rows × time slices coloured by utilization. Equal
// neighbouring cells are merged into one rectangle to keep large clusters
// small.
func heatmap(r *report.Result, rows []heatmapRow) string {
	const w, left = 900.0, 150.0
	rowH := 14.0
	if len(rows) > 64 {
		rowH = 6
	}
	if len(rows) > 300 {
		rowH = 3
	}
	top := 4.0
	h := top + rowH*float64(len(rows)) + 24
	s := newSVG("chart-heatmap", w, h, "GPU utilization heatmap")
	pw := w - left - 10
	for ri, row := range rows {
		y := top + rowH*float64(ri)
		n := len(row.vals)
		cw := pw / math.Max(1, float64(n))
		s.add(`<g><title>%s</title>`, esc(row.label))
		for i := 0; i < n; {
			c := utilColor(row.vals[i])
			j := i + 1
			for j < n && utilColor(row.vals[j]) == c {
				j++
			}
			s.add(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`, left+cw*float64(i), y, cw*float64(j-i), rowH, c)
			i = j
		}
		s.add(`</g>`)
		if rowH >= 6 {
			s.text(left-6, y+rowH-2, "end", "label", row.label)
		}
	}
	timeAxis(s, r, left, pw, h-8)
	return s.String()
}

// bars draws a horizontal bar chart of labelled amounts in USD.
func bars(id, label string, items []barItem) string {
	const w, left, rowH = 440.0, 170.0, 20.0
	h := rowH*float64(len(items)) + 8
	s := newSVG(id, w, h, label)
	top := 0.0
	for _, it := range items {
		top = math.Max(top, it.value)
	}
	for i, it := range items {
		y := 4 + rowH*float64(i)
		bw := 0.0
		if top > 0 {
			bw = (w - left - 80) * it.value / top
		}
		s.text(left-6, y+14, "end", "label", it.label)
		s.add(`<rect class="bar" x="%.1f" y="%.1f" width="%.1f" height="%.1f"/>`, left, y+3, bw, rowH-6)
		s.text(left+bw+6, y+14, "start", "value", money(it.value))
	}
	return s.String()
}

type barItem struct {
	label string
	value float64
}

// capacityChart draws one pool's demand against what the WMA autoscaler and
// the HPA baseline would have provisioned, and the static size.
func capacityChart(id string, r *report.Result, p analyze.ScalingPool) string {
	const w, h, left, top, bottom = 440.0, 170.0, 36.0, 8.0, 22.0
	s := newSVG(id, w, h, "demand and capacity of "+p.Pool)
	n := len(p.Demand)
	pw, ph := w-left-8, h-top-bottom
	top2 := float64(p.GPUs)
	x := func(i int) float64 { return left + pw*float64(i)/math.Max(1, float64(n-1)) }
	y := func(v float64) float64 { return top + ph*(1-v/math.Max(1, top2)) }
	for _, g := range []float64{0, top2 / 2, top2} {
		s.add(`<line class="grid" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, left, w-8, y(g), y(g))
		s.text(left-4, y(g)+4, "end", "axis", fmt.Sprintf("%.0f", g))
	}
	line := func(class string, v func(i int) float64) {
		pts := make([]string, 0, n)
		for i := 0; i < n; i++ {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(i), y(v(i))))
		}
		s.add(`<polyline class="%s" points="%s"/>`, class, strings.Join(pts, " "))
	}
	line("demand", func(i int) float64 { return p.Demand[i] })
	line("wma", func(i int) float64 { return float64(p.WMA.Capacity[i]) })
	line("hpa", func(i int) float64 { return float64(p.HPA.Capacity[i]) })
	timeAxis(s, r, left, pw, h-6)
	return s.String()
}
