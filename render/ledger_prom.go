package render

import (
	"io"

	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/chargeback"
	"github.com/seedance/seedance/ledger/history"
)

// LedgerProm writes a ledger report of settled rows as Prometheus
// counters, by attribution group (all levels empty: held by no workload):
// scraped after each update, or written for node_exporter's textfile
// collector, they keep the history in Prometheus too, and rate() or
// increase() over them is the waste of any range.
func LedgerProm(w io.Writer, r *history.Report) error {
	p := &promWriter{}
	names := levelNames(r.Attribution.GroupBy)
	rows := []analyze.AttributionGroup{{Key: make([]string, len(names)), AttributionFigures: r.Attribution.Unallocated}}
	rows = append(rows, r.Attribution.Groups...)
	counter := func(name, help string, get func(analyze.AttributionFigures) float64) {
		var ms []*dto.Metric
		for _, g := range rows {
			labels := make([]string, 0, 2*len(names))
			for i, n := range names {
				labels = append(labels, n, g.Key[i])
			}
			ms = append(ms, counterVal(get(g.AttributionFigures), labels...))
		}
		p.counter(name, help, ms...)
	}
	counter("idle_gpu_seconds_total", "GPU-seconds in counted idle runs that the group held, settled in the ledger.", func(f analyze.AttributionFigures) float64 { return f.IdleHeldGPUHours * 3600 })
	counter("idle_cost_usd_total", "Cost of the idle GPU time the group held, settled in the ledger, in US dollars.", func(f analyze.AttributionFigures) float64 { return f.WasteCostUSD })
	counter("held_gpu_seconds_total", "GPU-seconds the group's workloads held, settled in the ledger.", func(f analyze.AttributionFigures) float64 { return f.HeldGPUHours * 3600 })
	counter("used_gpu_seconds_total", "Held GPU-seconds times utilization, settled in the ledger.", func(f analyze.AttributionFigures) float64 { return f.UsedGPUHours * 3600 })
	if e := r.Summary.EnergyKWh; e != nil {
		p.counter("energy_joules_total", "Energy the GPUs drew, settled in the ledger, in joules.", counterVal(*e*3.6e6))
	}
	p.gauge("ledger_watermark_timestamp_seconds", "Where the ledger's settled rows end (Unix time).", val(float64(r.Watermark.Unix())))
	p.budgets(r.Budgets)
	p.emissions(r.Chargeback)
	return p.write(w)
}

// emissions adds the charges' emissions by group, when a grid intensity
// priced them (rows whose emissions are null are left out).
func (p *promWriter) emissions(cb *chargeback.Report) {
	if cb == nil || !cb.Carbon {
		return
	}
	names := levelNames(cb.GroupBy)
	var ms []*dto.Metric
	for _, row := range append(append([]chargeback.Row{}, cb.Rows...), cb.Unallocated) {
		if row.EmissionsKgCO2e == nil {
			continue
		}
		key := row.Key
		if key == nil {
			key = make([]string, len(names)) // unallocated: every level empty
		}
		labels := make([]string, 0, 2*len(names))
		for i, n := range names {
			labels = append(labels, n, key[i])
		}
		ms = append(ms, val(*row.EmissionsKgCO2e, labels...))
	}
	p.gauge("emissions_kg_co2e", "The group's GPU energy at the grid intensity of its hours, idle energy included, in kg CO2e.", ms...)
}

// BudgetProm writes the budgets' gauges alone: what a loop serves on
// /metrics beside its report's series.
func BudgetProm(w io.Writer, bs []chargeback.Status) error {
	p := &promWriter{}
	p.budgets(bs)
	return p.write(w)
}

// budgets adds the budgets' gauges, by level (by) and key, for
// Alertmanager: the amount, the month's charges so far, the month-end
// forecast (absent when null) and their ratios to the amount.
func (p *promWriter) budgets(bs []chargeback.Status) {
	if len(bs) == 0 {
		return
	}
	gauge := func(name, help string, get func(chargeback.Status) *float64) {
		var ms []*dto.Metric
		for _, b := range bs {
			if v := get(b); v != nil {
				ms = append(ms, val(*v, "by", b.By, "key", b.Key, "month", b.Month))
			}
		}
		if len(ms) > 0 {
			p.gauge(name, help, ms...)
		}
	}
	ratio := func(v *float64) *float64 {
		if v == nil {
			return nil
		}
		r := *v / 100
		return &r
	}
	gauge("budget_usd", "The group's monthly budget, in US dollars.", func(b chargeback.Status) *float64 { return &b.Monthly })
	gauge("budget_actual_usd", "What the group was charged this month so far, in US dollars.", func(b chargeback.Status) *float64 { return &b.ActualUSD })
	gauge("budget_forecast_usd", "The group's month-end forecast from the month's run rate, in US dollars.", func(b chargeback.Status) *float64 { return b.ForecastUSD })
	gauge("budget_actual_ratio", "The month's charges so far over the budget.", func(b chargeback.Status) *float64 { return ratio(&b.ActualPct) })
	gauge("budget_forecast_ratio", "The month-end forecast over the budget.", func(b chargeback.Status) *float64 { return ratio(b.ForecastPct) })
	gauge("budget_forecast_unknown", "1 when the budget's forecast is null (a cluster it bears on lags, too little of the month observed, no data yet): its forecast gauges are absent; 0 otherwise.",
		func(b chargeback.Status) *float64 {
			if b.NotYet {
				return nil
			}
			v := 0.0
			if b.ForecastPct == nil {
				v = 1
			}
			return &v
		})
}

func (p *promWriter) counter(name, help string, ms ...*dto.Metric) {
	if len(ms) > 0 {
		p.fams = append(p.fams, &dto.MetricFamily{Name: proto.String("seedance_" + name), Help: proto.String(help), Type: dto.MetricType_COUNTER.Enum(), Metric: ms})
	}
}

func counterVal(v float64, labels ...string) *dto.Metric {
	m := val(v, labels...)
	m.Counter, m.Gauge = &dto.Counter{Value: m.Gauge.Value}, nil
	return m
}
