package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/seedance/seedance/report"

	"github.com/seedance/seedance/analyze"
)

// mdEscape makes a name safe inside Markdown text and table cells: no
// table breaks, no HTML, no emphasis.
var mdEscape = strings.NewReplacer(`\`, `\\`, "|", `\|`, "<", "&lt;", ">", "&gt;", "&", "&amp;", "*", `\*`, "_", `\_`, "`", "\\`", "[", `\[`, "]", `\]`, "~", `\~`, "\n", " ", "\r", " ")

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
func Markdown(w io.Writer, r *report.Result, o Options) error {
	s := r.Summary
	ew := &errWriter{w: w}
	ew.printf("### seedance: %s\n\n", reportName(o))
	ew.printf("Window %s, %d GPUs on %d nodes.\n\n", windowText(r.Window, "2006-01-02 15:04"), s.GPUs, s.Nodes)
	for _, n := range s.Notes {
		ew.printf("> **Note:** %s\n\n", mdEscape.Replace(n))
	}
	mdSummary(ew, r)
	if o.has("nodes") {
		mdNodes(ew, r)
	}
	if o.has("suggestions") && len(r.Suggestions) > 0 {
		ew.printf("\n**Suggestions**\n\n")
		for _, sg := range r.Suggestions {
			ew.printf("- %s%s", severityTag(sg), mdEscape.Replace(sg.Text))
			if sg.Command != "" {
				ew.printf("<br>%s", code(sg.Command))
			}
			ew.printf("\n")
		}
	}
	if r.Migration != nil && o.has("migration") {
		ew.printf("\n**Migration plan**: %d move(s) release %d node(s), saving %s/h.\n", len(r.Migration.Moves), len(r.Migration.ReleasedNodes), money(r.Migration.SavingsUSDPerHour))
	}
	if a := r.Attribution; a != nil && o.has("attribution") {
		mdAttribution(ew, a)
	}
	if o.has("fragmentation") {
		fragmentationMarkdown(ew, r)
	}
	if o.has("units") {
		unitsMarkdown(ew, r)
	}
	if o.has("queues") {
		queuesMarkdown(ew, r)
	}
	if r.Scaling != nil && o.has("scaling") {
		ew.printf("\n| Pool | GPUs | Static GPU-h | WMA GPU-h | WMA saves | HPA GPU-h |\n|---|---:|---:|---:|---:|---:|\n")
		for _, p := range r.Scaling.Pools {
			ew.printf("| %s | %d | %.2f | %.2f | %s | %.2f |\n", mdEscape.Replace(p.Pool), p.GPUs, p.StaticGPUH, p.WMA.ProvisionedGPUH, money(p.WMA.SavingUSD), p.HPA.ProvisionedGPUH)
		}
	}
	mdGates(ew, r.Gates)
	for _, wmsg := range r.Warnings {
		ew.printf("\n> %s\n", mdEscape.Replace(wmsg))
	}
	return ew.err
}

// mdSummary is the summary's table, with the change from the baseline
// when there is one.
func mdSummary(ew *errWriter, r *report.Result) {
	s := r.Summary
	hasDelta := r.Delta != nil
	if hasDelta {
		ew.printf("| | value | vs baseline |\n|---|---:|---:|\n")
	} else {
		ew.printf("| | value |\n|---|---:|\n")
	}
	row := func(label, value, field string, format func(float64) string) {
		if !hasDelta {
			ew.printf("| %s | %s |\n", label, value)
			return
		}
		d := "n/a"
		if v, ok := r.Delta[field]; ok {
			d = format(v)
		}
		ew.printf("| %s | %s | %s |\n", label, value, d)
	}
	amount, basis := projection(r)
	row("Mean GPU utilization", pct(s.AvgGPUUtilPct), "avg_gpu_util_pct", pts)
	row("Mean memory-bandwidth utilization", pct(s.AvgMemBWUtilPct)+memBWCoverage(s), "avg_mem_bw_util_pct", pts)
	row("Node utilization spread (σ; variance)", ptsOpt(s.NodeUtilStddevPct)+"; "+numOpt(s.NodeUtilVariance, 3), "node_util_variance", variance)
	row("Idle GPU-hours", fmt.Sprintf("%s (%s)", numOpt(s.IdleGPUHours, 2), ratioPct(s.IdleRatio)), "idle_gpu_hours", hours)
	row("Idle cost", moneyOpt(s.IdleCostUSD), "idle_cost_usd", signedMoney)
	row("Energy", fmt.Sprintf("%s kWh (%s)", numOpt(s.EnergyKWh, 2), moneyOpt(s.EnergyCostUSD)), "energy_kwh", kwh)
	row("Projected monthly savings ("+basis+")", amount, "projected_monthly_savings_usd", signedMoney)
}

// mdNodes is the ten most expensive nodes' table.
func mdNodes(ew *errWriter, r *report.Result) {
	top := r.Nodes
	if len(top) > 10 {
		top = top[:10]
	}
	ew.printf("\n| Node | GPUs | Verdict | Util | Idle share | Idle cost |\n|---|---|---|---:|---:|---:|\n")
	for _, n := range top {
		ew.printf("| %s | %s | %s | %s | %s | %s |\n", mdEscape.Replace(n.Name), mdEscape.Replace(gpusText(n)), n.Verdict, pct(n.AvgGPUUtilPct), share(n.IdleShare), money(n.IdleCostUSD))
	}
	if len(r.Nodes) > len(top) {
		ew.printf("\n%d more nodes in the full report.\n", len(r.Nodes)-len(top))
	}
}

// mdAttribution is the ten largest groups' table and the unallocated row.
func mdAttribution(ew *errWriter, a *analyze.Attribution) {
	ew.printf("\n**Attribution** by %s\n\n| %s | Workloads | Held GPU-h | Used GPU-h | Efficiency | Idle-held GPU-h | Waste |\n|%s---:|---:|---:|---:|---:|---:|\n",
		mdEscape.Replace(strings.Join(a.GroupBy, ", then ")), strings.Join(mdCells(a.GroupBy), " | "), strings.Repeat("---|", len(a.GroupBy)))
	mdRow := func(key []string, workloads string, f analyze.AttributionFigures) {
		ew.printf("| %s | %s | %.2f | %.2f | %s | %.2f | %s |\n", strings.Join(mdCells(key), " | "), workloads, f.HeldGPUHours, f.UsedGPUHours,
			share(f.Efficiency), f.IdleHeldGPUHours, money(f.WasteCostUSD))
	}
	top := a.Groups
	if len(top) > 10 {
		top = top[:10]
	}
	for _, g := range top {
		mdRow(g.Key, fmt.Sprint(g.Workloads), g.AttributionFigures)
	}
	rest := make([]string, len(a.GroupBy))
	rest[0] = Unallocated
	mdRow(rest, "", a.Unallocated)
	if len(a.Groups) > len(top) {
		ew.printf("\n%d more groups in the full report.\n", len(a.Groups)-len(top))
	}
}

// mdGates lists the gates with their outcomes.
func mdGates(ew *errWriter, gates []report.Gate) {
	if len(gates) == 0 {
		return
	}
	ew.printf("\n**Gates**\n\n")
	for _, g := range gates {
		mark := "✅"
		if !g.Passed {
			mark = "❌"
		}
		ew.printf("- %s %s", mark, code(g.Expr))
		switch {
		case g.Error != "":
			ew.printf(" (%s)", mdEscape.Replace(g.Error))
		case g.Value != nil:
			ew.printf(" (was %s)", mdEscape.Replace(fmt.Sprint(g.Value)))
		}
		ew.printf("\n")
	}
}

// mdCells escapes each cell of a Markdown table row.
func mdCells(cells []string) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = mdEscape.Replace(c)
	}
	return out
}
