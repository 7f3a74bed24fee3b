package render

import (
	"fmt"
	"html/template"
	"strings"
	"time"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/recommend"
	"github.com/seedance/seedance/report"
)

// The page's optional sections, each adding its values to the template's
// data d when the report has it.

// attributionView: who held the idle GPUs, a table and the top wasters.
func attributionView(d map[string]any, r *report.Result) {
	if a := r.Attribution; a != nil {
		type attrRow struct {
			Key               []string
			Workloads         string
			F                 analyze.AttributionFigures
			Efficiency, Waste string
		}
		var rows []attrRow
		var top []barItem
		for _, g := range a.Groups {
			rows = append(rows, attrRow{g.Key, fmt.Sprint(g.Workloads), g.AttributionFigures, share(g.Efficiency), money(g.WasteCostUSD)})
			if g.WasteCostUSD > 0 && len(top) < 10 {
				top = append(top, barItem{strings.Join(g.Key, " / "), g.WasteCostUSD})
			}
		}
		unalloc := make([]string, len(a.GroupBy))
		unalloc[0] = Unallocated
		rows = append(rows, attrRow{unalloc, "", a.Unallocated, share(a.Unallocated.Efficiency), money(a.Unallocated.WasteCostUSD)})
		d["Attribution"], d["AttributionRows"], d["AttributionBy"] = a, rows, strings.Join(a.GroupBy, ", then ")
		d["AttributionChart"] = template.HTML(bars("chart-attribution", "idle cost held, by "+strings.Join(a.GroupBy, ", "), top))
	}
}

// historyView: the ledger's month to date, waste by day and group.
func historyView(d map[string]any, r *report.Result) {
	if h := r.History; h != nil {
		if chart, legend := dailyChart("chart-history", h.DailyWaste); chart != "" {
			d["History"] = fmt.Sprintf("Waste (the cost of idle GPU time the workloads held) by day and by %s, %s to %s UTC, from the ledger this run counted into.",
				strings.Join(h.Attribution.GroupBy, ", then "), h.Window.Start.Format(time.DateOnly), h.Window.End.Format("2006-01-02 15:04"))
			d["HistoryChart"], d["HistoryLegend"] = template.HTML(chart), legendHTML("legend-history", legend)
		}
	}
}

// fragmentationView: free and stranded GPUs per pool, and the memory held
// while idle.
func fragmentationView(d map[string]any, r *report.Result) {
	if f := r.Fragmentation; f != nil {
		type fragRow struct {
			P                  recommend.FragPool
			Hist, Ratio, After string
		}
		type strandedRow struct {
			analyze.StrandedGPU
			Idle string
		}
		var rows []fragRow
		for _, p := range f.Pools {
			rows = append(rows, fragRow{p, histogram(p.FreePerNode), ratioText(p.Ratio), afterText(p)})
		}
		var stranded []strandedRow
		for i, s := range r.StrandedMemory {
			if i == 50 {
				break
			}
			stranded = append(stranded, strandedRow{s, formatS(s.IdleS)})
		}
		d["Fragmentation"], d["FragRows"], d["Stranded"] = f, rows, stranded
	}
}
