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
// full is green (ColorBrewer RdYlGn), in 11 steps so equal cells merge; no
// sample is grey (noDataColor).
func utilColor(v *float64) string {
	if v == nil {
		return noDataColor
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
		s.text(left-6, y+14, "end", "label", shorten(it.label, barLabelPx))
		s.add(`<rect class="bar" x="%.1f" y="%.1f" width="%.1f" height="%.1f"/>`, left, y+3, bw, rowH-6)
		s.text(left+bw+6, y+14, "start", "value", money(it.value))
	}
	return s.String()
}

// barLabelPx is a bar's label's width; longer ones end in "…" (the tables
// name them in full).
const barLabelPx = 160

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
