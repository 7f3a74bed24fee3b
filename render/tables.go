package render

import (
	"html/template"
	"slices"
	"strconv"
	"strings"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/report"
)

// foldRows is how many rows of the node table the page shows before
// folding the rest (with its script on; without it, every row shows).
const foldRows = 50

// foldSuggestions is how many suggestions show before the rest fold (a
// details element: it opens without script).
const foldSuggestions = 20

// nodeRow is one row of the node table. ID is the row's anchor
// ("node-3"), which suggestions link to.
type nodeRow struct {
	ID, Name, Pool, GPUText, Verdict, CostText, UtilText, ShareText string
	Util, Share, IdleH, Cost                                        float64
	Pending                                                         int
}

// nodeAnchor is a node's row anchor: by position, so that no name reaches
// an id.
func nodeAnchor(i int) string { return "node-" + strconv.Itoa(i) }

// nodeTable is the node table's rows, in the report's order (by idle
// cost), and the values its filters offer.
func nodeTable(r *report.Result) (rows []nodeRow, pools, verdicts []string) {
	for i := range r.Nodes {
		n := &r.Nodes[i]
		rows = append(rows, nodeRow{nodeAnchor(i), n.Name, poolOf(n), gpusText(*n), n.Verdict, money(n.IdleCostUSD), pct(n.AvgGPUUtilPct), share(n.IdleShare),
			sortKey(n.AvgGPUUtilPct), sortKey(n.IdleShare), n.IdleGPUHours, n.IdleCostUSD, n.PendingWorkloads})
		pools = append(pools, poolOf(n))
		verdicts = append(verdicts, n.Verdict)
	}
	slices.Sort(pools)
	slices.Sort(verdicts)
	return rows, slices.Compact(pools), slices.Compact(verdicts)
}

// suggestionView is a suggestion with the anchor of its node's row ("" when
// it names no node of the table).
type suggestionView struct {
	analyze.Suggestion
	NodeID string
}

func suggestionViews(r *report.Result) []suggestionView {
	at := make(map[string]int, len(r.Nodes))
	for i, n := range r.Nodes {
		if _, ok := at[n.Name]; !ok {
			at[n.Name] = i
		}
	}
	out := make([]suggestionView, 0, len(r.Suggestions))
	for _, s := range r.Suggestions {
		v := suggestionView{Suggestion: s}
		if i, ok := at[s.Node]; ok && s.Node != "" {
			v.NodeID = nodeAnchor(i)
		}
		out = append(out, v)
	}
	return out
}

// legendHTML is a chart's legend: a swatch and a name per entry.
func legendHTML(id string, items []legendItem) template.HTML {
	var b strings.Builder
	b.WriteString(`<div class="legend" id="` + esc(id) + `">`)
	for _, it := range items {
		b.WriteString(`<span class="item"><span class="sw" style="background:` + esc(it.Color) + `"></span>` + esc(it.Name) + `</span>`)
	}
	b.WriteString(`</div>`)
	return template.HTML(b.String())
}

// idleLegend names the colours of a pool's idle share, gaps included.
func idleLegend() []legendItem {
	return []legendItem{{idleSteps[0], "no node idle"}, {idleSteps[3], "some"}, {idleSteps[len(idleSteps)-1], "every node idle"}, {noDataColor, "no data (a gap)"}}
}

// utilLegend names the colours of utilization, gaps included.
func utilLegend() []legendItem {
	return []legendItem{{utilColor(ptr(0)), "idle (0%)"}, {utilColor(ptr(50)), "50%"}, {utilColor(ptr(100)), "busy (100%)"}, {noDataColor, "no data (a gap)"}}
}

func ptr(v float64) *float64 { return &v }
