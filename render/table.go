package render

import (
	"fmt"
	"io"
	"time"

	"github.com/seedance/seedance/report"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/internal/table"
)

// Table writes the report for a person at a terminal: a summary block, the
// nodes sorted by idle cost, then the suggestions with their commands.
func Table(w io.Writer, r *report.Result, o Options) error {
	s := r.Summary
	ew := &errWriter{w: w}
	ew.printf("seedance %s report\n\n", reportName(o))
	ew.printf("window     %s\n", windowText(r.Window, "2006-01-02 15:04:05"))
	ew.printf("GPUs       %d on %d nodes, %.2f GPU-hours observed\n", s.GPUs, s.Nodes, s.GPUHours)
	ew.printf("util       %s GPU, %s memory bandwidth%s (time-weighted mean)%s\n", pct(s.AvgGPUUtilPct), pct(s.AvgMemBWUtilPct), memBWCoverage(s), delta(r, "avg_gpu_util_pct", pts))
	ew.printf("spread     nodes' mean GPU utilization: σ %s, variance %s%s\n", ptsOpt(s.NodeUtilStddevPct), numOpt(s.NodeUtilVariance, 3), delta(r, "node_util_variance", variance))
	ew.printf("idle       %s GPU-hours (%s of observed), %s%s\n", numOpt(s.IdleGPUHours, 2), ratioPct(s.IdleRatio), moneyOpt(s.IdleCostUSD), delta(r, "idle_cost_usd", signedMoney))
	ew.printf("energy     %s kWh, %s%s\n", numOpt(s.EnergyKWh, 2), moneyOpt(s.EnergyCostUSD), delta(r, "energy_kwh", kwh))
	ew.printf("nodes      %d idle%s, %d stalled (idle with work pending), %d under-used, %d busy\n", s.IdleNodes, idleHeld(s), s.StalledNodes, s.UnderusedNodes, s.BusyNodes)
	ew.printf("projected  %s, if this window's idle cost continued%s\n", projected(r), delta(r, "projected_monthly_savings_usd", signedMoney))
	for _, n := range s.Notes {
		ew.printf("note       %s\n", n)
	}
	for _, wmsg := range r.Warnings {
		ew.printf("warning    %s\n", wmsg)
	}
	if ew.err != nil {
		return ew.err
	}
	if o.has("nodes") && len(r.Nodes) > 0 {
		ew.printf("\n")
		header := []string{"NODE", "GPUS", "VERDICT", "UTIL", "IDLE SHARE", "IDLE GPU-H", "IDLE COST", "PENDING"}
		if o.has("intervals") {
			header = append(header, "IDLE INTERVALS")
		}
		// Sparklines on a terminal, and always in the utilization report.
		if o.Terminal || o.Report == "utilization" {
			header = append(header, "UTILIZATION")
		}
		t := table.New(w, header...)
		for _, n := range r.Nodes {
			row := []string{n.Name, gpusText(n), n.Verdict, pct(n.AvgGPUUtilPct), share(n.IdleShare),
				fmt.Sprintf("%.2f", n.IdleGPUHours), money(n.IdleCostUSD), fmt.Sprint(n.PendingWorkloads)}
			if o.has("intervals") {
				row = append(row, intervals(n.IdleIntervals))
			}
			if len(header) > len(row) {
				row = append(row, Sparkline(n.UtilSparkline))
			}
			t.Row(row...)
		}
		if err := t.Flush(); err != nil {
			return err
		}
	}
	if o.has("suggestions") {
		ew.printf("\nSuggestions\n")
		if len(r.Suggestions) == 0 {
			ew.printf("  none: no node was idle for the whole idle window\n")
		}
		for i, sg := range r.Suggestions {
			ew.printf("%2d. %s%s\n", i+1, severityTag(sg), sg.Text)
			if sg.Command != "" {
				ew.printf("    $ %s\n", sg.Command)
			}
		}
	}
	if o.has("scaling") {
		if err := scalingTable(w, ew, r); err != nil {
			return err
		}
	}
	if o.has("migration") {
		migrationText(ew, r)
	}
	for _, sec := range []struct {
		name  string
		table func(io.Writer, *errWriter, *report.Result) error
	}{{"attribution", attributionTable}, {"fragmentation", fragmentationTable}, {"units", unitsTable}, {"queues", queuesTable}} {
		if o.has(sec.name) {
			if err := sec.table(w, ew, r); err != nil {
				return err
			}
		}
	}
	gatesText(ew, r)
	return ew.err
}

func secondsDur(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func gatesText(ew *errWriter, r *report.Result) {
	if len(r.Gates) == 0 {
		return
	}
	ew.printf("\nGates\n")
	for _, g := range r.Gates {
		ew.printf("  %s\n", report.GateLine(g))
	}
}

func reportName(o Options) string {
	if o.Report == "" {
		return "cost-savings"
	}
	return o.Report
}

// delta writes "  (+x vs baseline)" when the report has a baseline and the
// field has a delta (a null on either side has none).
func delta(r *report.Result, field string, format func(float64) string) string {
	if r.Delta == nil {
		return ""
	}
	v, ok := r.Delta[field]
	if !ok {
		return "  (n/a vs baseline)"
	}
	return fmt.Sprintf("  (%s vs baseline)", format(v))
}

func pts(v float64) string   { return signed(v, "%.1f pts") }
func kwh(v float64) string   { return signed(v, "%.2f kWh") }
func hours(v float64) string { return signed(v, "%.2f") }

// memBWCoverage is " (from 1 of 25 GPUs)" when not every GPU reported
// memory bandwidth.
func memBWCoverage(s analyze.Summary) string {
	if s.MemBWGPUs == 0 || s.MemBWGPUs == s.GPUs {
		return ""
	}
	return fmt.Sprintf(" (from %d of %d GPUs)", s.MemBWGPUs, s.GPUs)
}

// errWriter keeps the first write error so a renderer checks once. It is
// the writer of the human formats (table, Markdown): every string argument
// goes through table.Visible, so that no name from the input can move the
// cursor, colour the terminal, end a line and fake the next one, or reverse
// the text; only the format strings, which are seedance's, write control
// characters.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err != nil {
		return
	}
	for i, a := range args {
		if s, ok := a.(string); ok {
			args[i] = table.Visible(s)
		}
	}
	_, e.err = fmt.Fprintf(e.w, format, args...)
}
