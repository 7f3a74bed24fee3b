package render

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/chargeback"
	"github.com/seedance/seedance/internal/table"
	"github.com/seedance/seedance/internal/yamlout"
	"github.com/seedance/seedance/ledger/history"
)

// LedgerFormats are the formats of a ledger report.
var LedgerFormats = []string{"table", "json", "yaml", "csv", "markdown", "html", "prom"}

// Ledger writes a ledger report (seedance ledger report) in one of
// LedgerFormats; prom wants a report of settled rows (ledger.Query.Settled).
func Ledger(w io.Writer, r *history.Report, format string) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	case "yaml":
		return yamlout.Write(w, r)
	case "csv":
		return ledgerCSV(w, r)
	case "table", "markdown":
		return ledgerTable(w, r, format == "markdown")
	case "prom":
		return LedgerProm(w, r)
	case "html":
		return ledgerHTML(w, r)
	}
	return fmt.Errorf("unknown format %q for a ledger report (choose %s)", format, strings.Join(LedgerFormats, ", "))
}

// reclaimedLines say what reclaim's actions freed in the window, next to
// the idle figures, in all and by team.
func reclaimedLines(rc *history.Reclaimed) []string {
	if rc == nil {
		return nil
	}
	var teams []string
	for _, t := range rc.ByTeam {
		teams = append(teams, fmt.Sprintf("%s %.1f GPU-h %s", table.Visible(t.Team), t.GPUHours, money(t.USD)))
	}
	out := []string{fmt.Sprintf("Reclaimed: %.1f GPU-hours, %s, by %d action(s) of seedance reclaim (%s)", rc.GPUHours, money(rc.USD), rc.Actions, strings.Join(teams, "; "))}
	if c := rc.Capacity; c != nil && c.GPUHours > 0 {
		out = append(out, fmt.Sprintf("Freed capacity over the whole buckets after each action: %.1f GPU-hours; reused by other work %.1f, released %.1f, idle %.1f",
			c.GPUHours, c.ReusedGPUHours, c.ReleasedGPUHours, c.IdleGPUHours))
	}
	return out
}

// ledgerTable writes the window's summary and one row per group, as text
// or as Markdown.
func ledgerTable(w io.Writer, r *history.Report, markdown bool) error {
	s := r.Summary
	window := fmt.Sprintf("%s → %s", r.Window.Start.Format("2006-01-02 15:04"), r.Window.End.Format("2006-01-02 15:04 UTC"))
	lines := []string{
		"Ledger " + window,
		fmt.Sprintf("GPU-hours %.1f, %s idle (%s) costing %s; energy %s",
			s.GPUHours, numOpt(s.IdleGPUHours, 1), ratioPct(s.IdleRatio), moneyOpt(s.IdleCostUSD), energyText(s.EnergyKWh)),
	}
	if s.ProvisionalFrom != nil {
		lines = append(lines, "Provisional from "+*s.ProvisionalFrom+" (the next update counts it again)")
	}
	lines = append(lines, dataEndLine(r.DataEnds)...)
	lines = append(lines, priceLines(r.Prices)...)
	lines = append(lines, jobLines(r)...)
	lines = append(lines, budgetLines(r.Budgets)...)
	lines = append(lines, reclaimedLines(r.Reclaimed)...)
	for _, wn := range r.Warnings {
		lines = append(lines, "Warning: "+table.Visible(wn))
	}
	for _, l := range lines {
		prefix := ""
		if markdown {
			prefix = "- "
			if l == lines[0] {
				prefix = "## "
			}
		}
		if _, err := fmt.Fprintln(w, prefix+l); err != nil {
			return err
		}
	}
	fmt.Fprintln(w)
	a := r.Attribution
	header := append(groupHeader(a.GroupBy), "WORKLOADS", "HELD GPU-H", "USED GPU-H", "IDLE GPU-H", "WASTE", "EFFICIENCY")
	rows := [][]string{}
	for _, g := range a.Groups {
		rows = append(rows, append(append([]string{}, g.Key...), fmt.Sprint(g.Workloads), fmt.Sprintf("%.2f", g.HeldGPUHours), fmt.Sprintf("%.2f", g.UsedGPUHours),
			fmt.Sprintf("%.2f", g.IdleHeldGPUHours), money(g.WasteCostUSD), share(g.Efficiency)))
	}
	for _, extra := range []struct {
		name string
		f    analyze.AttributionFigures
	}{{Unallocated, a.Unallocated}, {"(total)", a.Total}} {
		key := make([]string, len(a.GroupBy))
		key[0] = extra.name
		rows = append(rows, append(key, "", fmt.Sprintf("%.2f", extra.f.HeldGPUHours), fmt.Sprintf("%.2f", extra.f.UsedGPUHours),
			fmt.Sprintf("%.2f", extra.f.IdleHeldGPUHours), money(extra.f.WasteCostUSD), share(extra.f.Efficiency)))
	}
	if err := writeTable(w, header, rows, markdown); err != nil {
		return err
	}
	if len(r.Units) > 0 {
		if _, err := fmt.Fprintf(w, "\nUnit costs: the work the counters read, on the GPU time its workloads held (docs/units.md)\n\n"); err != nil {
			return err
		}
		if err := writeTable(w, unitHeader, unitRowsOf(r.Units, r.UnitGroups, r.UnitModels), markdown); err != nil {
			return err
		}
	}
	if len(r.Queues) > 0 {
		for _, t := range []struct {
			title  string
			header []string
			rows   [][]string
		}{{"Queues: quota against measured use, in GPU-hours, from the hourly rows (docs/queues.md)", queueHeader, queueRowsOf(r.Queues, r.Cohorts)},
			{"Queues over time: used GPUs by the hour, decayed as Kueue decays usage, and the quotas right-sized from them", useHeader, useRowsOf(r.Queues, r.QuotaWhatIf)}} {
			if _, err := fmt.Fprintf(w, "\n%s\n\n", t.title); err != nil {
				return err
			}
			if err := writeTable(w, t.header, t.rows, markdown); err != nil {
				return err
			}
		}
	}
	if r.Chargeback == nil {
		return nil
	}
	fmt.Fprintln(w)
	cb := r.Chargeback
	if _, err := fmt.Fprintf(w, "Charges: unallocated cost shared %s by %s and day\n\n", orNone(cb.ShareIdle), cb.ShareIdleBy); err != nil {
		return err
	}
	header, rows = chargeRows(cb, func(v float64) string { return fmt.Sprintf("%.2f", v) }, money)
	return writeTable(w, header, rows, markdown)
}

// dataEndLine names where each cluster's data ends, in one line.
func dataEndLine(ends map[string]time.Time) []string {
	if len(ends) == 0 {
		return nil
	}
	return []string{"Data through: " + DataEnds(ends)}
}

// DataEnds names each cluster's data end, in the clusters' order, for a
// terminal.
func DataEnds(ends map[string]time.Time) string {
	var parts []string
	for _, c := range slices.Sorted(maps.Keys(ends)) {
		parts = append(parts, table.Visible(c)+" "+ends[c].UTC().Format(time.RFC3339))
	}
	return strings.Join(parts, ", ")
}

// priceLines name each price the window was counted at, with its source
// and the first bucket it priced, in one line.
func priceLines(prices []history.Price) []string {
	if len(prices) == 0 {
		return nil
	}
	parts := make([]string, len(prices))
	for i, p := range prices {
		parts[i] = fmt.Sprintf("%s $%.3f/GPU-h (%s, from %s)", table.Visible(p.Model), p.USDPerHour, p.Source, p.FirstBucket)
	}
	return []string{"Prices: " + strings.Join(parts, "; ")}
}

// writeTable writes rows under header as text or as Markdown.
func writeTable(w io.Writer, header []string, rows [][]string, markdown bool) error {
	if markdown {
		return markdownTable(w, header, rows)
	}
	t := table.New(w, header...)
	for _, row := range rows {
		t.Row(row...)
	}
	return t.Flush()
}

// chargeRows are the charges' header and rows (the groups', the
// unallocated row, the total), hours and money as the formats write them.
func chargeRows(cb *chargeback.Report, hours, usd func(float64) string) ([]string, [][]string) {
	header := append(groupHeader(cb.GroupBy), "RESERVED GPU-H", "USED GPU-H", "RESERVED", "USED", "UNUSED RESERVED", "SHARED IDLE", "CHARGE")
	if cb.Carbon {
		header = append(header, "KG CO2E")
	}
	var rows [][]string
	add := func(key []string, r chargeback.Row) {
		row := append(append([]string{}, key...), hours(r.ReservedGPUHours), hours(r.UsedGPUHours), usd(r.ReservedCostUSD), usd(r.UsedCostUSD),
			usd(r.UnusedReservedCostUSD), usd(r.SharedIdleCostUSD), usd(r.CostUSD))
		if cb.Carbon {
			row = append(row, optNum(r.EmissionsKgCO2e))
		}
		rows = append(rows, row)
	}
	for _, r := range cb.Rows {
		key := make([]string, len(r.Key))
		for i, k := range r.Key {
			key[i] = table.Visible(k)
		}
		add(key, r)
	}
	named := func(name string) []string { k := make([]string, len(cb.GroupBy)); k[0] = name; return k }
	add(named(Unallocated), cb.Unallocated)
	add(named("(total)"), cb.Total)
	return header, rows
}

// jobLines are the energy per finished job, each class's utilization and,
// with a baseline, the comparison.
func jobLines(r *history.Report) []string {
	var out []string
	if j := r.Jobs; j != nil {
		n := 0
		for _, g := range j.Finished {
			n += g.Finished
		}
		if n > 0 {
			out = append(out, fmt.Sprintf("Jobs finished: %d, energy per job %s", n, energyText(j.EnergyPerJobKWh)))
		}
		for _, c := range j.Classes {
			out = append(out, fmt.Sprintf("%s: %d workloads, %.1f GPU-hours held at %s utilization, energy %s", c.Class, c.Workloads, c.HeldGPUHours, pct(c.UtilizationPct), energyText(c.EnergyKWh)))
		}
	}
	if c := r.Comparison; c != nil {
		out = append(out, fmt.Sprintf("Against %s → %s:", c.Baseline.Start.Format("2006-01-02 15:04"), c.Baseline.End.Format("2006-01-02 15:04")),
			changeLine("average energy per job", c.EnergyPerJobKWh, "%.1f kWh"),
			changeLine("training GPU utilization", c.TrainingUtilizationPct, "%.0f %%"),
			changeLine("idle cost", c.IdleCostUSD, "$%.2f"))
	}
	return out
}

// changeLine is "average energy per job 142.5 → 98.2 kWh (−31.1 %)".
func changeLine(what string, c history.Change, format string) string {
	side := func(v *float64) string {
		if v == nil {
			return "n/a"
		}
		return fmt.Sprintf(format, *v)
	}
	line := fmt.Sprintf("  %s %s → %s", what, side(c.Before), side(c.After))
	if c.ChangePct != nil {
		line += fmt.Sprintf(" (%+.1f %%)", *c.ChangePct)
	}
	return line
}

func groupHeader(levels []string) []string {
	out := make([]string, len(levels))
	for i, l := range levels {
		out[i] = strings.ToUpper(l)
	}
	return out
}

func energyText(v *float64) string {
	if v == nil {
		return "not measured"
	}
	return fmt.Sprintf("%.1f kWh", *v)
}

// markdownTable writes a Markdown table, its cells escaped.
func markdownTable(w io.Writer, header []string, rows [][]string) error {
	esc := func(s string) string {
		return strings.NewReplacer("|", `\|`, "\n", " ", "<", "&lt;", ">", "&gt;").Replace(table.Visible(s))
	}
	line := func(cells []string) string {
		out := make([]string, len(cells))
		for i, c := range cells {
			out[i] = esc(c)
		}
		return "| " + strings.Join(out, " | ") + " |"
	}
	sep := make([]string, len(header))
	for i := range sep {
		sep[i] = "---"
	}
	if _, err := fmt.Fprintln(w, line(header)+"\n"+"| "+strings.Join(sep, " | ")+" |"); err != nil {
		return err
	}
	for _, r := range rows {
		if _, err := fmt.Fprintln(w, line(r)); err != nil {
			return err
		}
	}
	return nil
}

// ledgerCSV writes one row per group, then the unallocated and total rows,
// then one row per day ("(day)" in the first level).
func ledgerCSV(w io.Writer, r *history.Report) error {
	cw := csv.NewWriter(w)
	if cb := r.Chargeback; cb != nil { // the charges' table instead
		_, rows := chargeRows(cb, num, num)
		header := append(append([]string{}, cb.GroupBy...), "reserved_gpu_hours", "used_gpu_hours", "reserved_cost_usd", "used_cost_usd",
			"unused_reserved_cost_usd", "shared_idle_cost_usd", "cost_usd")
		if cb.Carbon {
			header = append(header, "emissions_kg_co2e")
		}
		_ = cw.Write(header)
		for _, row := range rows {
			for i := range cb.GroupBy {
				row[i] = cell(row[i])
			}
			_ = cw.Write(row)
		}
		cw.Flush()
		return cw.Error()
	}
	a := r.Attribution
	levels := len(a.GroupBy)
	_ = cw.Write(append(append([]string{}, a.GroupBy...), "workloads", "held_gpu_hours", "used_gpu_hours", "idle_held_gpu_hours", "waste_cost_usd", "efficiency", "energy_kwh"))
	row := func(key []string, workloads string, f analyze.AttributionFigures, energy string) {
		cells := make([]string, 0, levels+7)
		for _, k := range key {
			cells = append(cells, cell(k))
		}
		_ = cw.Write(append(cells, workloads, num(f.HeldGPUHours), num(f.UsedGPUHours), num(f.IdleHeldGPUHours), num(f.WasteCostUSD), optNum(f.Efficiency), energy))
	}
	named := func(name string) []string { k := make([]string, levels); k[0] = name; return k }
	for _, g := range a.Groups {
		row(g.Key, fmt.Sprint(g.Workloads), g.AttributionFigures, optNum(r.EnergyByGroup[history.GroupKey(g.Key)]))
	}
	row(named(Unallocated), "", a.Unallocated, optNum(r.EnergyByGroup[history.UnallocatedKey]))
	row(named("(total)"), "", a.Total, optNum(r.Summary.EnergyKWh))
	for _, d := range r.Daily {
		row(named("(day) "+d.Date), "", analyze.AttributionFigures{HeldGPUHours: d.GPUHours, UsedGPUHours: d.UsedGPUHours, IdleHeldGPUHours: d.IdleGPUHours, WasteCostUSD: d.IdleCostUSD}, optNum(d.EnergyKWh))
	}
	cw.Flush()
	return cw.Error()
}

// budgetLines are a line per budget: the month so far and the forecast.
func budgetLines(bs []chargeback.Status) []string {
	var out []string
	for _, b := range bs {
		forecast := "no forecast (no data of the month yet)"
		if b.ForecastUSD != nil {
			forecast = fmt.Sprintf("forecast %s (%.0f%%)", money(*b.ForecastUSD), *b.ForecastPct)
		}
		out = append(out, fmt.Sprintf("Budget %s=%s, %s a month: %s in %s so far (%.0f%%), %s",
			table.Visible(b.By), table.Visible(b.Key), money(b.Monthly), money(b.ActualUSD), b.Month, b.ActualPct, forecast))
	}
	return out
}

// orNone is a sharing mode, "none" when unset.
func orNone(m chargeback.Mode) chargeback.Mode {
	if m == "" {
		return chargeback.None
	}
	return m
}
