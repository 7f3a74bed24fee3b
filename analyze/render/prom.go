package render

import (
	"io"
	"reflect"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/proto"

	"github.com/seedance/seedance/analyze"
)

// Prom writes the summary and per-node figures in the Prometheus text
// exposition format, for node_exporter's textfile collector.
func Prom(w io.Writer, r *analyze.Report, _ Options) error {
	var fams []*dto.MetricFamily
	gauge := func(name, help string, ms ...*dto.Metric) {
		fams = append(fams, &dto.MetricFamily{Name: proto.String(name), Help: proto.String(help), Type: dto.MetricType_GAUGE.Enum(), Metric: ms})
	}
	val := func(v float64, labels ...string) *dto.Metric {
		m := &dto.Metric{Gauge: &dto.Gauge{Value: proto.Float64(v)}}
		for i := 0; i+1 < len(labels); i += 2 {
			m.Label = append(m.Label, &dto.LabelPair{Name: proto.String(labels[i]), Value: proto.String(labels[i+1])})
		}
		return m
	}
	gauge("seedance_window_seconds", "Length of the analysed window.", val(r.Window.DurationS))
	gauge("seedance_window_end_timestamp_seconds", "End of the analysed window (Unix time).", val(float64(r.Window.End.Unix())))
	for _, f := range summaryFields(r.Summary) {
		gauge("seedance_"+f.name, "Summary: "+f.name+" (see docs/analysis.md).", val(f.value))
		if r.Delta != nil {
			gauge("seedance_delta_"+f.name, "Current minus baseline "+f.name+".", val(r.Delta[f.name]))
		}
	}
	nodeGauge := func(name, help string, get func(analyze.NodeReport) float64) {
		var ms []*dto.Metric
		for _, n := range r.Nodes {
			ms = append(ms, val(get(n), "node", n.Name))
		}
		gauge(name, help, ms...)
	}
	if len(r.Nodes) > 0 {
		nodeGauge("seedance_node_gpus", "GPUs on the node.", func(n analyze.NodeReport) float64 { return float64(n.GPUs) })
		nodeGauge("seedance_node_avg_gpu_util_pct", "Time-weighted mean GPU utilization of the node.", func(n analyze.NodeReport) float64 { return n.AvgGPUUtilPct })
		nodeGauge("seedance_node_idle_gpu_hours", "Idle GPU-hours on the node.", func(n analyze.NodeReport) float64 { return n.IdleGPUHours })
		nodeGauge("seedance_node_idle_cost_usd", "Cost of the node's idle GPU-hours.", func(n analyze.NodeReport) float64 { return n.IdleCostUSD })
		nodeGauge("seedance_node_pending_workloads", "Workloads pending on the node.", func(n analyze.NodeReport) float64 { return float64(n.PendingWorkloads) })
		var vs []*dto.Metric
		for _, n := range r.Nodes {
			vs = append(vs, val(1, "node", n.Name, "verdict", n.Verdict))
		}
		gauge("seedance_node_verdict", "The node's verdict (idle, stalled, underused, busy) as a label.", vs...)
	}
	if len(r.Gates) > 0 {
		var gs []*dto.Metric
		for _, g := range r.Gates {
			v := 0.0
			if g.Passed {
				v = 1
			}
			gs = append(gs, val(v, "gate", g.Expr))
		}
		gauge("seedance_gate_passed", "1 when the CI gate passed.", gs...)
	}
	enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, f := range fams {
		if len(f.Metric) == 0 {
			continue
		}
		if err := enc.Encode(f); err != nil {
			return err
		}
	}
	return nil
}

type field struct {
	name  string
	value float64
}

// summaryFields lists the summary's numbers by their JSON names.
func summaryFields(s analyze.Summary) []field {
	v := reflect.ValueOf(s)
	t := v.Type()
	var out []field
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		f := v.Field(i)
		x := 0.0
		if f.CanInt() {
			x = float64(f.Int())
		} else if f.CanFloat() {
			x = f.Float()
		}
		out = append(out, field{name, x})
	}
	return out
}
