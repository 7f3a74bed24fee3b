package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/seedance/seedance/report"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/internal/table"
)

// scalingTable writes the scaling what-if: per pool, what the WMA autoscaler
// and the HPA-style baseline would have provisioned against the static size.
func scalingTable(w io.Writer, ew *errWriter, r *report.Result) error {
	if r.Scaling == nil {
		return nil
	}
	ew.printf("\nScaling what-if (periods of %s; docs/scaling.md)\n", analyze.FormatDuration(secondsDur(r.Scaling.PeriodS)))
	t := table.New(w, "POOL", "GPUS", "PEAK DEMAND", "STATIC GPU-H", "WMA GPU-H", "WMA SAVES", "EVENTS", "UNDER", "HPA GPU-H", "HPA SAVES", "EVENTS", "UNDER")
	for _, p := range r.Scaling.Pools {
		peak := 0.0
		for _, d := range p.Demand {
			peak = max(peak, d)
		}
		t.Row(p.Pool, fmt.Sprint(p.GPUs), fmt.Sprintf("%.1f", peak), fmt.Sprintf("%.2f", p.StaticGPUH),
			fmt.Sprintf("%.2f", p.WMA.ProvisionedGPUH), money(p.WMA.SavingUSD), fmt.Sprint(p.WMA.ScaleEvents), fmt.Sprint(p.WMA.UnderProvisioned),
			fmt.Sprintf("%.2f", p.HPA.ProvisionedGPUH), money(p.HPA.SavingUSD), fmt.Sprint(p.HPA.ScaleEvents), fmt.Sprint(p.HPA.UnderProvisioned))
	}
	return t.Flush()
}

// migrationText writes the plan's outcome and moves.
func migrationText(ew *errWriter, r *report.Result) {
	p := r.Migration
	if p == nil {
		return
	}
	ew.printf("\nMigration plan: %d move(s), releases %d node(s) (%s), saves %s/h (%s/month)\n", len(p.Moves), len(p.ReleasedNodes),
		strings.Join(p.ReleasedNodes, ", "), money(p.SavingsUSDPerHour), money(p.SavingsUSDPerMonth))
	for i, m := range p.Moves {
		from := "pending"
		if m.From != nil {
			from = *m.From
		}
		ew.printf("%3d. %s: %s → %s GPUs %v (%s)\n", i+1, m.Workload, from, m.To, m.GPUs, m.Reason)
	}
	if len(p.Unplaced) > 0 {
		ew.printf("     pending work that fits nowhere else: %s\n", strings.Join(p.Unplaced, ", "))
	}
}

// attributionTable writes who held the GPU time, by waste: one row per
// group (its SPLIT the rule that split its shared GPUs, docs/sharing.md),
// then the time nobody held and the total.
func attributionTable(w io.Writer, ew *errWriter, r *report.Result) error {
	a := r.Attribution
	if a == nil {
		return nil
	}
	ew.printf("\nAttribution by %s (docs/analysis.md, Attribution)\n", strings.Join(a.GroupBy, ", then "))
	head := append(upper(a.GroupBy), "WORKLOADS", "HELD GPU-H", "USED GPU-H", "EFFICIENCY", "IDLE-HELD GPU-H", "WASTE", "SPLIT")
	t := table.New(w, head...)
	row := func(key []string, workloads string, f analyze.AttributionFigures, split string) {
		eff := "n/a"
		if f.Efficiency != nil {
			eff = fmt.Sprintf("%.0f%%", 100**f.Efficiency)
		}
		t.Row(append(key, workloads, fmt.Sprintf("%.2f", f.HeldGPUHours), fmt.Sprintf("%.2f", f.UsedGPUHours), eff,
			fmt.Sprintf("%.2f", f.IdleHeldGPUHours), money(f.WasteCostUSD), split)...)
	}
	for _, g := range a.Groups {
		row(append([]string(nil), g.Key...), fmt.Sprint(g.Workloads), g.AttributionFigures, g.Basis)
	}
	blank := func(first string) []string {
		k := make([]string, len(a.GroupBy))
		k[0] = first
		return k
	}
	row(blank(Unallocated), "-", a.Unallocated, "-")
	row(blank("total"), "-", a.Total, "-")
	return t.Flush()
}

func upper(levels []string) []string {
	out := make([]string, len(levels))
	for i, l := range levels {
		out[i] = strings.ToUpper(l)
	}
	return out
}
