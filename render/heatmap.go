package render

import (
	"fmt"
	"html/template"
	"math"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/report"
)

// The heatmap's sizes (docs/html-report.md): a labelled row is rowPx
// high, so its 11 px label never meets the next; a cluster of up to
// maxNodeRows nodes gets one labelled row per node; one of up to
// analyze.MaxGPUTimelines GPUs gets a row per GPU, labelled up to
// maxGPURows rows and thin past them (each node's first row labelled); a
// larger one gets a row per pool and the topNodes nodes that cost most
// while idle.
const (
	rowPx       = 14.0
	thinRowPx   = 6.0
	maxNodeRows = 48
	maxGPURows  = 64
	topNodes    = 20
	labelPx     = 168 // a row label's width; longer ones end in "…"
)

// noDataColor fills a cell without samples (a gap); the legends name it.
const noDataColor = "#d0d7de"

// heatmapRow is one row of a heatmap: its label ("" for none) and its
// cells' colours, one per time slice.
type heatmapRow struct {
	label, title string
	cells        []string
}

// heatSection is the heatmap part of the page: its title, its note and
// its charts, each with its legend.
type heatSection struct {
	Title, Note string
	Charts      []heatChart
}

type heatChart struct{ Legend, SVG template.HTML }

// utilChart and idleChart are a heatmap with its legend.
func utilChart(id, label string, r *report.Result, rows []heatmapRow) heatChart {
	return heatChart{legendHTML("legend-"+id, utilLegend()), template.HTML(heatmap(id, label, r, rows))}
}

func idleChart(id, label string, r *report.Result, rows []heatmapRow) heatChart {
	return heatChart{legendHTML("legend-"+id, idleLegend()), template.HTML(heatmap(id, label, r, rows))}
}

// heatmaps picks the view that stays readable at the cluster's size:
// GPUs × time, nodes × time, or pools × time (pools: poolSummaries) with
// the top nodes.
func heatmaps(r *report.Result, pools []*poolSummary) heatSection {
	slice := analyze.FormatDuration(time.Duration(r.Timeline.BucketS * float64(time.Second)))
	if rows := gpuRows(r); rows != nil {
		return heatSection{"GPUs × time", fmt.Sprintf("Each cell is one GPU's mean utilization over %s; nodes sorted by idle cost.", slice),
			[]heatChart{utilChart("chart-heatmap", "GPU utilization heatmap", r, rows)}}
	}
	if len(r.Nodes) <= maxNodeRows {
		return heatSection{"Nodes × time", fmt.Sprintf("Each cell is a node's mean utilization over %s; nodes sorted by idle cost.", slice),
			[]heatChart{utilChart("chart-heatmap", "node utilization heatmap", r, nodeRows(r.Nodes))}}
	}
	by := "GPU model"
	if r.Params.PoolBy != "" {
		by = r.Params.PoolBy
	}
	top := r.Nodes[:min(topNodes, len(r.Nodes))]
	note := fmt.Sprintf("%d nodes: one row per pool (by %s, with its node count), each cell the share of the pool's node-time inside an idle interval over %s, pools sorted by idle cost; below, the %d nodes whose idle time cost most, each cell the node's mean utilization.",
		len(r.Nodes), by, slice, len(top))
	return heatSection{"Pools × time", note, []heatChart{
		idleChart("chart-heatmap", "share of each pool's nodes idle", r, poolRows(r, pools)),
		utilChart("chart-heatmap-top", "utilization of the nodes that cost most while idle", r, nodeRows(top))}}
}

// gpuRows are one row per GPU, when the report has every node's GPU
// timelines (small clusters); nil otherwise. Past maxGPURows rows a row
// is thin and only each node's first GPU is labelled.
func gpuRows(r *report.Result) []heatmapRow {
	if !perGPU(r) {
		return nil
	}
	var rows []heatmapRow
	for _, n := range r.Nodes {
		for i, tl := range n.GPUTimelines {
			rows = append(rows, heatmapRow{title: fmt.Sprintf("%s gpu%d", n.Name, i), cells: utilCells(tl)})
		}
	}
	thin := len(rows) > maxGPURows
	k := 0
	for _, n := range r.Nodes {
		for i := range n.GPUTimelines {
			switch {
			case !thin:
				rows[k].label = rows[k].title
			case i == 0:
				rows[k].label = n.Name
			}
			k++
		}
	}
	return rows
}

// perGPU says whether the report has every node's GPU timelines (a
// cluster of at most analyze.MaxGPUTimelines GPUs).
func perGPU(r *report.Result) bool {
	for _, n := range r.Nodes {
		if len(n.GPUTimelines) == 0 {
			return false
		}
	}
	return len(r.Nodes) > 0
}

func nodeRows(nodes []analyze.NodeReport) []heatmapRow {
	rows := make([]heatmapRow, 0, len(nodes))
	for _, n := range nodes {
		rows = append(rows, heatmapRow{label: n.Name, title: n.Name, cells: utilCells(n.UtilSparkline)})
	}
	return rows
}

func utilCells(vals []*float64) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = utilColor(v)
	}
	return out
}

// poolSummary is one pool's nodes and totals.
type poolSummary struct {
	Name                      string
	Nodes, GPUs, Idle         int
	IdleGPUHours, IdleCostUSD float64
	members                   []*analyze.NodeReport
}

// poolOf is a node's pool: NodeReport.Pool, or its models for a report
// written before it had one.
func poolOf(n *analyze.NodeReport) string {
	if n.Pool != "" {
		return n.Pool
	}
	return strings.Join(n.Models, "+")
}

// poolSummaries groups the nodes by pool, the costliest pool first.
func poolSummaries(r *report.Result) []*poolSummary {
	byName := map[string]*poolSummary{}
	var out []*poolSummary
	for i := range r.Nodes {
		n := &r.Nodes[i]
		p := byName[poolOf(n)]
		if p == nil {
			p = &poolSummary{Name: poolOf(n)}
			byName[p.Name] = p
			out = append(out, p)
		}
		p.Nodes++
		p.GPUs += n.GPUs
		p.IdleGPUHours += n.IdleGPUHours
		p.IdleCostUSD += n.IdleCostUSD
		if n.Verdict == "idle" {
			p.Idle++
		}
		p.members = append(p.members, n)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].IdleCostUSD != out[j].IdleCostUSD {
			return out[i].IdleCostUSD > out[j].IdleCostUSD
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// poolRows are one row per pool: per slice, the share of its nodes' time
// inside an idle interval, over the nodes with a sample in the slice (a
// slice where none has one is a gap).
func poolRows(r *report.Result, pools []*poolSummary) []heatmapRow {
	slices := len(r.Timeline.IdleNodeFraction)
	rows := make([]heatmapRow, 0, len(pools))
	for _, p := range pools {
		idle, seen := make([]float64, slices), make([]int, slices)
		for _, n := range p.members {
			for i := 0; i < slices && i < len(n.UtilSparkline); i++ {
				if n.UtilSparkline[i] != nil {
					seen[i]++
					idle[i] += idleShare(n.IdleIntervals, float64(i)*r.Timeline.BucketS, float64(i+1)*r.Timeline.BucketS)
				}
			}
		}
		cells := make([]string, slices)
		for i := range cells {
			cells[i] = noDataColor
			if seen[i] > 0 {
				cells[i] = idleColor(idle[i] / float64(seen[i]))
			}
		}
		label := fmt.Sprintf("%s (%d)", p.Name, p.Nodes)
		rows = append(rows, heatmapRow{label: label, title: fmt.Sprintf("%s: %d nodes, %s idle", p.Name, p.Nodes, money(p.IdleCostUSD)), cells: cells})
	}
	return rows
}

// idleShare is the share of [lo, hi) inside the intervals.
func idleShare(ivs []analyze.Interval, lo, hi float64) float64 {
	if hi <= lo {
		return 0
	}
	in := 0.0
	for _, iv := range ivs {
		in += math.Max(0, math.Min(hi, iv.EndS)-math.Max(lo, iv.StartS))
	}
	return math.Min(1, in/(hi-lo))
}

// idleSteps colour an idle share from none (pale) to all (dark red).
var idleSteps = []string{"#f6f8fa", "#fee0d2", "#fcbba1", "#fc9272", "#fb6a4a", "#ef3b2c", "#cb181d", "#99000d"}

func idleColor(f float64) string {
	i := int(math.Round(f * float64(len(idleSteps)-1)))
	return idleSteps[max(0, min(len(idleSteps)-1, i))]
}

// heatmap draws rows × time slices. Equal neighbouring cells are merged
// into one rectangle to keep large clusters small; each row's title (a
// tooltip) names it in full.
func heatmap(id, label string, r *report.Result, rows []heatmapRow) string {
	const w, left = 900.0, 180.0
	rowH := rowPx
	if len(rows) > max(maxNodeRows, maxGPURows) {
		rowH = thinRowPx
	}
	top := 4.0
	h := top + rowH*float64(len(rows)) + 24
	s := newSVG(id, w, h, label)
	pw := w - left - 10
	lastLabel := math.Inf(-1)
	for ri, row := range rows {
		y := top + rowH*float64(ri)
		n := len(row.cells)
		cw := pw / math.Max(1, float64(n))
		s.add(`<g><title>%s</title>`, esc(row.title))
		for i := 0; i < n; {
			j := i + 1
			for j < n && row.cells[j] == row.cells[i] {
				j++
			}
			s.add(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`, left+cw*float64(i), y, cw*float64(j-i), rowH, row.cells[i])
			i = j
		}
		s.add(`</g>`)
		// A label sits on its row's baseline, at least a line below the
		// previous one.
		if row.label != "" && y-lastLabel >= rowPx {
			s.text(left-6, y+11, "end", "label", shorten(row.label, labelPx))
			lastLabel = y
		}
	}
	timeAxis(s, r, left, pw, h-8)
	return s.String()
}

// shorten cuts s to what fits in px pixels of 11 px text, ending it in
// "…". Widths are generous (DejaVu Sans, the widest common fallback), so
// a label never reaches past its chart's edge.
func shorten(s string, px float64) string {
	used := 0.0
	for i, r := range s {
		used += glyphPx(r)
		if used > px {
			used = glyphPx('…')
			for j, r := range s[:i] {
				if used += glyphPx(r); used > px {
					return s[:j] + "…"
				}
			}
			return s[:i] + "…"
		}
	}
	return s
}

// glyphPx is a character's width at 11 px, rounded up.
func glyphPx(r rune) float64 {
	switch {
	case strings.ContainsRune(" ilj.,:;'|!Iftr()[]", r):
		return 4
	case strings.ContainsRune("WMmw@%…", r):
		return 11
	case unicode.IsUpper(r) || unicode.IsDigit(r):
		return 7.5
	case r < 128:
		return 7
	}
	return 11
}
