// Package render writes a report.Result (an analysis report and what later
// stages made of it) in the formats people, CI and monitoring read: table (terminal), json, markdown (pull requests), csv
// (spreadsheets) and prom (node_exporter's textfile collector). One file per
// format; each is a Func.
package render

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/report"
)

// Options shape the human-readable formats.
type Options struct {
	// Report picks the sections: cost-savings, idle, utilization or all.
	Report string
	// Terminal adds sparklines to the table format.
	Terminal bool
}

// Reports and formats.
var (
	Reports = []string{"cost-savings", "idle", "utilization", "scaling", "migration", "attribution", "fragmentation", "units", "queues", "all"}
	Formats = []string{"table", "json", "yaml", "markdown", "csv", "prom", "html"}
)

// Func writes a report.
type Func func(w io.Writer, r *report.Result, o Options) error

// For returns the writer of a format.
func For(format string) (Func, error) {
	switch format {
	case "table":
		return Table, nil
	case "json":
		return JSON, nil
	case "yaml":
		return YAML, nil
	case "markdown", "md":
		return Markdown, nil
	case "csv":
		return CSV, nil
	case "prom":
		return Prom, nil
	case "html":
		return HTML, nil
	}
	return nil, fmt.Errorf("unknown format %q (choose %s)", format, strings.Join(Formats, ", "))
}

// ValidReport reports whether name is a report name.
func ValidReport(name string) bool {
	for _, r := range Reports {
		if r == name {
			return true
		}
	}
	return false
}

func (o Options) has(section string) bool {
	switch o.Report {
	case "all":
		return true
	case "":
		return section != "scaling" && section != "migration" && section != "attribution" && section != "fragmentation" && section != "units" && section != "queues"
	case "cost-savings":
		return section == "nodes" || section == "suggestions"
	case "idle":
		return section == "nodes" || section == "intervals"
	case "utilization":
		return section == "nodes"
	case "scaling":
		return section == "scaling"
	case "migration":
		return section == "migration" || section == "suggestions"
	case "attribution":
		return section == "attribution" || section == "units"
	case "units":
		return section == "units"
	case "queues":
		return section == "queues"
	case "fragmentation":
		return section == "fragmentation" || section == "suggestions"
	}
	return false
}

// money formats USD with thousands separators: $89,356.10.
func money(v float64) string {
	neg := v < 0
	if neg {
		v = -v
	}
	s := fmt.Sprintf("%.2f", v)
	intPart, frac := s[:len(s)-3], s[len(s)-3:]
	var b strings.Builder
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	out := "$" + b.String() + frac
	if neg {
		out = "-" + out
	}
	return out
}

// signed formats a delta with its sign.
func signed(v float64, format string) string {
	s := fmt.Sprintf(format, v)
	if v >= 0 {
		s = "+" + s
	}
	return s
}

var sparkChars = []rune("▁▂▃▄▅▆▇█")

// Sparkline draws utilization values (0–100, nil for no data) as a line of
// block characters.
func Sparkline(vals []*float64) string {
	var b strings.Builder
	for _, v := range vals {
		if v == nil {
			b.WriteRune(' ')
			continue
		}
		i := int(*v / 100 * float64(len(sparkChars)))
		if i >= len(sparkChars) {
			i = len(sparkChars) - 1
		}
		if i < 0 {
			i = 0
		}
		b.WriteRune(sparkChars[i])
	}
	return b.String()
}

// intervals writes idle intervals as "0:30–1:40, 5:00–9:00" (minutes:seconds
// from the window's start).
// maxIntervals is how many idle intervals a cell lists; past it, a
// summary (the JSON report has them all).
const maxIntervals = 3

func intervals(ivs []analyze.Interval) string {
	if len(ivs) > maxIntervals {
		longest, total := ivs[0], 0.0
		for _, iv := range ivs {
			total += iv.EndS - iv.StartS
			if iv.EndS-iv.StartS > longest.EndS-longest.StartS {
				longest = iv
			}
		}
		last := ivs[len(ivs)-1]
		return fmt.Sprintf("%d stretches, %s in all; longest %s; last %s", len(ivs),
			analyze.FormatDuration(secondsDur(total)), clock(longest.StartS)+"–"+clock(longest.EndS), clock(last.StartS)+"–"+clock(last.EndS))
	}
	parts := make([]string, 0, len(ivs))
	for _, iv := range ivs {
		parts = append(parts, clock(iv.StartS)+"–"+clock(iv.EndS))
	}
	return strings.Join(parts, ", ")
}

func clock(s float64) string {
	t := int(s + 0.5)
	if t >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", t/3600, t/60%60, t%60)
	}
	return fmt.Sprintf("%d:%02d", t/60, t%60)
}

// gpusText is "8 × H100 80GB HBM3".
func gpusText(n analyze.NodeReport) string {
	return fmt.Sprintf("%d × %s", n.GPUs, strings.Join(n.Models, "+"))
}

// pct writes a percentage, or "n/a" for a metric that nothing reported
// (never 0).
func pct(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.1f%%", *v)
}

// idleHeld is " (and 2 idle but held by a running workload)", or "".
func idleHeld(s analyze.Summary) string {
	if s.IdleHeldNodes == 0 {
		return ""
	}
	return fmt.Sprintf(" (and %d idle but held by a running workload)", s.IdleHeldNodes)
}

// moneyOpt writes an amount that may be null, or "n/a".
func moneyOpt(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return money(*v)
}

// ratioPct writes a 0–1 ratio as a percentage with one decimal, or "n/a".
func ratioPct(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.1f%%", 100**v)
}

// ptsOpt writes percentage points ("12.3 pts"), or "n/a".
func ptsOpt(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.1f pts", *v)
}

// numOpt writes a number with digits decimals, or "n/a".
func numOpt(v *float64, digits int) string {
	if v == nil {
		return "n/a"
	}
	return strconv.FormatFloat(*v, 'f', digits, 64)
}

// variance is a delta of a variance, with its sign.
func variance(v float64) string { return fmt.Sprintf("%+.3f", v) }

// share writes a 0–1 share as a percentage, or "n/a".
func share(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.0f%%", 100**v)
}

// signedMoney is a money delta with its sign: +$97,577.54.
func signedMoney(v float64) string {
	if v < 0 {
		return money(v)
	}
	return "+" + money(v)
}

// windowText is "2026-01-05 09:00 → 10:00 UTC (1h00m)", with the end's date
// when the window spans days, and the covered time when gaps leave less.
func windowText(w analyze.Window, layout string) string {
	end := w.End.Format(layout[len("2006-01-02 "):] + " MST")
	if w.End.Format("2006-01-02") != w.Start.Format("2006-01-02") {
		end = w.End.Format(layout + " MST")
	}
	s := fmt.Sprintf("%s → %s (%s", w.Start.Format(layout), end, analyze.FormatDuration(secondsDur(w.DurationS)))
	if w.CoveredS < w.DurationS-0.5 {
		s += ", " + analyze.FormatDuration(secondsDur(w.CoveredS)) + " observed"
	}
	return s + ")"
}

// projection is the monthly projection rounded to what its basis supports
// ("~$98,000") and that basis ("extrapolated from 2h00m observed").
func projection(r *report.Result) (amount, basis string) {
	if r.Summary.ProjectedMonthlySavingsUSD == nil {
		return "n/a", "no utilization measured"
	}
	v := analyze.RoundProjection(*r.Summary.ProjectedMonthlySavingsUSD, r.Window.CoveredS)
	amount = money(v)
	if r.Window.CoveredS < analyze.ExactProjectionS {
		amount = "~" + strings.TrimSuffix(amount, ".00")
	}
	return amount, "extrapolated from " + analyze.FormatDuration(secondsDur(r.Window.CoveredS)) + " observed"
}

// projected is "~$98,000 per month (extrapolated from 2h00m observed)".
func projected(r *report.Result) string {
	amount, basis := projection(r)
	return amount + " per month (" + basis + ")"
}

// severityTag is "[critical] " for a suggestion a policy rule ranked, ""
// for the others.
func severityTag(sg analyze.Suggestion) string {
	if sg.Severity == "" {
		return ""
	}
	return "[" + sg.Severity + "] "
}

// Unallocated names, in every table and format, the row of the GPU time
// that no workload held (an attribution's unallocated figures).
const Unallocated = "(unallocated)"
