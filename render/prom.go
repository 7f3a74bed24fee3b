package render

import (
	"fmt"
	"github.com/seedance/seedance/internal/table"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/seedance/seedance/report"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/protobuf/proto"

	"github.com/seedance/seedance/analyze"
)

// promSummary maps the summary's fields to metrics in base units: seconds,
// joules and 0–1 ratios (Prometheus naming conventions; promtool check
// metrics finds nothing to say). Money stays in US dollars.
var promSummary = []struct {
	field, name, help string
	scale             float64
}{
	{"nodes", "nodes", "Nodes in the analysed profiles.", 1},
	{"gpus", "gpus", "Physical GPUs in the analysed profiles.", 1},
	{"gpu_hours", "observed_gpu_seconds", "GPU-seconds observed: the sum over GPUs of their samples' coverage.", 3600},
	{"avg_gpu_util_pct", "gpu_utilization_ratio", "Time-weighted mean GPU utilization, 0 to 1; absent when no GPU reported it.", 0.01},
	{"avg_mem_bw_util_pct", "memory_bandwidth_utilization_ratio", "Time-weighted mean memory-bandwidth utilization, 0 to 1; absent when no GPU reported it.", 0.01},
	{"idle_gpu_hours", "idle_gpu_seconds", "GPU-seconds in idle runs that lasted at least the idle window.", 3600},
	{"idle_ratio", "idle_ratio", "Idle GPU-seconds over observed GPU-seconds, 0 to 1.", 1},
	{"idle_cost_usd", "idle_cost_usd", "Cost of the idle GPU time at the report's prices, in US dollars.", 1},
	{"energy_kwh", "energy_joules", "Energy drawn by the GPUs in the window, in joules (3.6e6 J = 1 kWh).", 3.6e6},
	{"energy_cost_usd", "energy_cost_usd", "Cost of that energy at the report's energy price, in US dollars.", 1},
	{"projected_monthly_savings_usd", "projected_monthly_savings_usd", "Idle cost per covered hour times 730, in US dollars: an extrapolation.", 1},
	{"node_util_stddev_pct", "node_utilization_stddev_ratio", "Population standard deviation of the nodes' mean GPU utilization, 0 to 1; absent when no node reported it.", 0.01},
	{"node_util_variance", "node_utilization_variance", "Population variance of the nodes' mean GPU utilization, in 0–1 units squared; absent when no node reported it.", 1},
	{"mem_bw_gpus", "memory_bandwidth_gpus", "GPUs that reported memory-bandwidth utilization.", 1},
	{"idle_nodes", "idle_nodes", "Nodes whose verdict is idle.", 1},
	{"stalled_nodes", "stalled_nodes", "Nodes whose verdict is stalled: idle while work was pending.", 1},
	{"underused_nodes", "underused_nodes", "Nodes whose verdict is underused.", 1},
	{"busy_nodes", "busy_nodes", "Nodes whose verdict is busy.", 1},
}

// verdicts are the states of seedance_node_verdict, one series each.
var verdicts = []string{analyze.VerdictIdle, analyze.VerdictStalled, analyze.VerdictUnderused, analyze.VerdictBusy, analyze.VerdictUnknown}

// promWriter collects gauge families.
type promWriter struct{ fams []*dto.MetricFamily }

func (p *promWriter) gauge(name, help string, ms ...*dto.Metric) {
	if len(ms) > 0 {
		p.fams = append(p.fams, &dto.MetricFamily{Name: proto.String("seedance_" + name), Help: proto.String(help), Type: dto.MetricType_GAUGE.Enum(), Metric: ms})
	}
}

func val(v float64, labels ...string) *dto.Metric {
	m := &dto.Metric{Gauge: &dto.Gauge{Value: proto.Float64(clean(v))}}
	for i := 0; i+1 < len(labels); i += 2 {
		// A label's control characters (ESC, CR, NUL…) as \x1b, as the
		// terminal formats write them.
		m.Label = append(m.Label, &dto.LabelPair{Name: proto.String(labels[i]), Value: proto.String(table.Visible(labels[i+1]))})
	}
	return m
}

// clean drops the binary noise that scaling to base units adds
// (0.278425 × 0.01 → 0.0027842500000000003) by keeping 12 significant digits.
func clean(v float64) float64 {
	x, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64)
	return x
}

// Prom writes the summary and per-node figures in the Prometheus text
// exposition format, for node_exporter's textfile collector. A figure that
// was not measured is left out (absent), never written as 0; node verdicts
// are one 0/1 series per state, as node_exporter writes states.
func Prom(w io.Writer, r *report.Result, _ Options) error {
	p := &promWriter{}
	p.gauge("window_seconds", "Length of the analysed window, from the earliest profile start to the latest end.", val(r.Window.DurationS))
	p.gauge("window_covered_seconds", "Time within the window covered by at least one sample.", val(r.Window.CoveredS))
	p.gauge("window_end_timestamp_seconds", "End of the analysed window, as Unix time.", val(float64(r.Window.End.Unix())))
	fields := analyze.SummaryNumbers(r.Summary)
	for _, f := range promSummary {
		if v, ok := fields[f.field]; ok {
			p.gauge(f.name, f.help, val(v*f.scale))
		}
	}
	if r.Delta != nil {
		for _, f := range promSummary {
			if v, ok := r.Delta[f.field]; ok {
				p.gauge("baseline_delta_"+f.name, "Current minus baseline: "+f.help, val(v*f.scale))
			}
		}
	}
	nodeGauge := func(name, help string, get func(analyze.NodeReport) *float64) {
		gaugeEach(p, name, help, r.Nodes, func(n analyze.NodeReport) []string { return []string{"node", n.Name} }, get)
	}
	num := func(v float64) *float64 { return &v }
	nodeGauge("node_gpus", "Physical GPUs on the node.", func(n analyze.NodeReport) *float64 { return num(float64(n.GPUs)) })
	nodeGauge("node_gpu_utilization_ratio", "Time-weighted mean GPU utilization of the node, 0 to 1.", func(n analyze.NodeReport) *float64 {
		if n.AvgGPUUtilPct == nil {
			return nil
		}
		return num(*n.AvgGPUUtilPct / 100)
	})
	nodeGauge("node_observed_seconds", "Time the node was observed: the union of its GPUs' sample coverage.", func(n analyze.NodeReport) *float64 { return num(n.ObservedS) })
	nodeGauge("node_idle_ratio", "Share of the node's observed time inside its idle intervals, 0 to 1.", func(n analyze.NodeReport) *float64 { return n.IdleShare })
	nodeGauge("node_idle_gpu_seconds", "Idle GPU-seconds on the node.", func(n analyze.NodeReport) *float64 { return num(n.IdleGPUHours * 3600) })
	nodeGauge("node_idle_cost_usd", "Cost of the node's idle GPU time, in US dollars.", func(n analyze.NodeReport) *float64 { return num(n.IdleCostUSD) })
	nodeGauge("node_pending_workloads", "Workloads pending on the node.", func(n analyze.NodeReport) *float64 { return num(float64(n.PendingWorkloads)) })
	var vs []*dto.Metric
	for _, n := range r.Nodes {
		for _, v := range verdicts {
			x := 0.0
			if n.Verdict == v {
				x = 1
			}
			vs = append(vs, val(x, "node", n.Name, "verdict", v))
		}
	}
	p.gauge("node_verdict", "1 for the node's verdict (idle, stalled, underused, busy, unknown), 0 for the others.", vs...)
	if a := r.Attribution; a != nil {
		attributionGauges(p, a)
	}
	unitGauges(p, r)
	queueGauges(p, r)
	fragmentationGauges(p, r)
	var rm []*dto.Metric
	for _, name := range sortedKeys(r.RuleMatches) {
		rm = append(rm, val(float64(r.RuleMatches[name]), "rule", name))
	}
	p.gauge("rule_matches", "Matches of each policy rule (docs/rules.md).", rm...)
	var gs []*dto.Metric
	for _, g := range r.Gates {
		v := 0.0
		if g.Passed {
			v = 1
		}
		gs = append(gs, val(v, "gate", g.Expr))
	}
	p.gauge("gate_passed", "1 when the CI gate passed, 0 when it failed.", gs...)
	return p.write(w)
}

// write encodes the families in the text exposition format.
func (p *promWriter) write(w io.Writer) error {
	enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, f := range p.fams {
		if err := enc.Encode(f); err != nil {
			return err
		}
	}
	return nil
}

// levelNames are the label names of attribution levels: the level, or the
// team label's name, else levelN.
func levelNames(groupBy []string) []string {
	names := make([]string, len(groupBy))
	for i, l := range groupBy {
		names[i] = strings.TrimPrefix(l, "team=")
		if !model.LegacyValidation.IsValidLabelName(names[i]) || slices.Contains(names[:i], names[i]) {
			names[i] = fmt.Sprintf("level%d", i+1)
		}
	}
	return names
}

// attributionGauges writes one series per attribution group, labelled by
// its levels (namespace, workload, controller, or the team label's name),
// for a "waste by team" panel; the time held by no workload has every
// level label empty.
func attributionGauges(p *promWriter, a *analyze.Attribution) {
	names := levelNames(a.GroupBy)
	type row struct {
		key []string
		f   analyze.AttributionFigures
	}
	rows := []row{{make([]string, len(names)), a.Unallocated}}
	for _, g := range a.Groups {
		rows = append(rows, row{g.Key, g.AttributionFigures})
	}
	gauge := func(name, help string, get func(analyze.AttributionFigures) *float64) {
		var ms []*dto.Metric
		for _, r := range rows {
			v := get(r.f)
			if v == nil {
				continue
			}
			labels := make([]string, 0, 2*len(names))
			for i, n := range names {
				labels = append(labels, n, r.key[i])
			}
			ms = append(ms, val(*v, labels...))
		}
		p.gauge(name, help, ms...)
	}
	sec := func(h float64) *float64 { v := h * 3600; return &v }
	gauge("attribution_held_gpu_seconds", "GPU-seconds the group's workloads held (all levels empty: held by no workload).", func(f analyze.AttributionFigures) *float64 { return sec(f.HeldGPUHours) })
	gauge("attribution_used_gpu_seconds", "Held GPU-seconds times utilization.", func(f analyze.AttributionFigures) *float64 { return sec(f.UsedGPUHours) })
	gauge("attribution_idle_held_gpu_seconds", "The group's share of its GPUs' counted idle runs, in GPU-seconds.", func(f analyze.AttributionFigures) *float64 { return sec(f.IdleHeldGPUHours) })
	gauge("attribution_waste_usd", "Cost of the idle GPU time the group held, in US dollars.", func(f analyze.AttributionFigures) *float64 { v := f.WasteCostUSD; return &v })
	gauge("attribution_efficiency_ratio", "Used over held GPU-seconds, 0 to 1; absent when nothing was held.", func(f analyze.AttributionFigures) *float64 { return f.Efficiency })
}

func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// gaugeEach writes one series per item that has a value, labelled by
// labels(item).
func gaugeEach[T any](p *promWriter, name, help string, items []T, labels func(T) []string, get func(T) *float64) {
	var ms []*dto.Metric
	for _, x := range items {
		if v := get(x); v != nil {
			ms = append(ms, val(*v, labels(x)...))
		}
	}
	p.gauge(name, help, ms...)
}
