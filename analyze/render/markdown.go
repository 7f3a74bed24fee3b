package render

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/seedance/seedance/analyze"
)

// mdEscape makes a name safe inside Markdown text and table cells: no
// table breaks, no HTML, no emphasis.
var mdEscape = strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;", "&", "&amp;", "*", `\*`, "_", `\_`, "`", "\\`", "[", `\[`, "]", `\]`, "\n", " ", "\r", " ")

// code wraps s in a code span whose fence is longer than any run of
// backticks inside it.
func code(s string) string {
	s = strings.NewReplacer("\n", " ", "\r", " ").Replace(s)
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	pad := ""
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		pad = " "
	}
	return fence + pad + s + pad + fence
}

// Markdown writes a compact summary fit for a pull-request comment.
func Markdown(w io.Writer, r *analyze.Report, o Options) error {
	s := r.Summary
	ew := &errWriter{w: w}
	ew.printf("### seedance: %s\n\n", reportName(o))
	ew.printf("Window %s → %s (%s), %d GPUs on %d nodes.\n\n", r.Window.Start.Format("2006-01-02 15:04"), r.Window.End.Format("15:04 MST"),
		analyze.FormatDuration(time.Duration(r.Window.DurationS*float64(time.Second))), s.GPUs, s.Nodes)
	hasDelta := r.Delta != nil
	if hasDelta {
		ew.printf("| | value | vs baseline |\n|---|---:|---:|\n")
	} else {
		ew.printf("| | value |\n|---|---:|\n")
	}
	row := func(label, value, field, format string) {
		if hasDelta {
			ew.printf("| %s | %s | %s |\n", label, value, signed(r.Delta[field], format))
		} else {
			ew.printf("| %s | %s |\n", label, value)
		}
	}
	row("Mean GPU utilization", fmt.Sprintf("%.1f%%", s.AvgGPUUtilPct), "avg_gpu_util_pct", "%.1f pts")
	row("Idle GPU-hours", fmt.Sprintf("%.2f (%.1f%%)", s.IdleGPUHours, 100*s.IdleRatio), "idle_gpu_hours", "%.2f")
	row("Idle cost", money(s.IdleCostUSD), "idle_cost_usd", "%.2f")
	row("Energy", fmt.Sprintf("%.2f kWh (%s)", s.EnergyKWh, money(s.EnergyCostUSD)), "energy_kwh", "%.2f kWh")
	row("Projected monthly savings (extrapolated)", money(s.ProjectedMonthlySavingsUSD), "projected_monthly_savings_usd", "%.2f")
	if o.has("nodes") {
		top := r.Nodes
		if len(top) > 10 {
			top = top[:10]
		}
		ew.printf("\n| Node | GPUs | Verdict | Util | Idle cost |\n|---|---|---|---:|---:|\n")
		for _, n := range top {
			ew.printf("| %s | %s | %s | %.1f%% | %s |\n", mdEscape.Replace(n.Name), mdEscape.Replace(gpusText(n)), n.Verdict, n.AvgGPUUtilPct, money(n.IdleCostUSD))
		}
		if len(r.Nodes) > len(top) {
			ew.printf("\n%d more nodes in the full report.\n", len(r.Nodes)-len(top))
		}
	}
	if o.has("suggestions") && len(r.Suggestions) > 0 {
		ew.printf("\n**Suggestions**\n\n")
		for _, sg := range r.Suggestions {
			ew.printf("- %s", mdEscape.Replace(sg.Text))
			if sg.Command != "" {
				ew.printf("<br>%s", code(sg.Command))
			}
			ew.printf("\n")
		}
	}
	if r.Migration != nil && o.has("migration") {
		ew.printf("\n**Migration plan**: %d move(s) release %d node(s), saving %s/h.\n", len(r.Migration.Moves), len(r.Migration.ReleasedNodes), money(r.Migration.SavingsUSDPerHour))
	}
	if r.Scaling != nil && o.has("scaling") {
		ew.printf("\n| Pool | GPUs | Static GPU-h | WMA GPU-h | WMA saves | HPA GPU-h |\n|---|---:|---:|---:|---:|---:|\n")
		for _, p := range r.Scaling.Pools {
			ew.printf("| %s | %d | %.2f | %.2f | %s | %.2f |\n", mdEscape.Replace(p.Pool), p.GPUs, p.StaticGPUH, p.WMA.ProvisionedGPUH, money(p.WMA.SavingUSD), p.HPA.ProvisionedGPUH)
		}
	}
	if len(r.Gates) > 0 {
		ew.printf("\n**Gates**\n\n")
		for _, g := range r.Gates {
			mark := "✅"
			if !g.Passed {
				mark = "❌"
			}
			ew.printf("- %s %s\n", mark, code(g.Expr))
		}
	}
	for _, wmsg := range r.Warnings {
		ew.printf("\n> %s\n", mdEscape.Replace(wmsg))
	}
	return ew.err
}
