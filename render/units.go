package render

import (
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/internal/table"
	"github.com/seedance/seedance/report"
)

// unitHeader and unitRows are the unit figures (docs/units.md) as rows:
// the fleet's, each group's and each model's, one row per unit.
var unitHeader = []string{"GROUP", "UNIT", "WORK", "HELD GPU-H", "COST", "PER", "USD", "IDLE SHARE", "WITHOUT IDLE", "KWH"}

func unitRows(r *report.Result) [][]string {
	return unitRowsOf(r.Units, r.UnitGroups, r.UnitModels)
}

// unitRowsOf are the rows of the fleet's, the groups' and the models' unit
// figures (an analysis' or a ledger's).
func unitRowsOf(fleet map[string]analyze.UnitFigures, groups, models []analyze.UnitGroup) [][]string {
	var out [][]string
	eachUnit(fleet, groups, models, func(of string, unit string, f analyze.UnitFigures) {
		out = append(out, []string{of, unit, numOpt(f.Work, 0), fmt.Sprintf("%.2f", f.HeldGPUHours), money(f.CostUSD), perText(f.Per),
			unitMoney(f.USDPer), ratioPct(f.IdleShare), unitMoney(f.BusyUSDPer), numOpt(f.KWhPer, 4)})
	}, "fleet", "model ")
	return out
}

// eachUnit calls fn with each unit's figures of the fleet (named fleet),
// of each group (its keys joined by "/") and of each model (model, then
// its name), units in order.
func eachUnit(fleet map[string]analyze.UnitFigures, groups, models []analyze.UnitGroup, fn func(of, unit string, f analyze.UnitFigures), fleetName, model string) {
	rows := func(of string, units map[string]analyze.UnitFigures) {
		for _, unit := range slices.Sorted(maps.Keys(units)) {
			fn(of, unit, units[unit])
		}
	}
	rows(fleetName, fleet)
	for _, g := range groups {
		rows(strings.Join(g.Key, "/"), g.Units)
	}
	for _, g := range models {
		rows(model+g.Key[0], g.Units)
	}
}

// unitsTable writes the unit figures as a table.
func unitsTable(w io.Writer, ew *errWriter, r *report.Result) error {
	if len(r.Units) == 0 {
		return nil
	}
	ew.printf("\nUnit costs: what the work the counters read cost, on the GPU time its workloads held (docs/units.md)\n")
	t := table.New(w, unitHeader...)
	for _, row := range unitRows(r) {
		t.Row(row...)
	}
	return t.Flush()
}

// unitsMarkdown writes the unit figures as a Markdown table.
func unitsMarkdown(ew *errWriter, r *report.Result) {
	if len(r.Units) == 0 {
		return
	}
	ew.printf("\n**Unit costs** (docs/units.md)\n\n| Group | Unit | Work | Held GPU-h | Cost | Per | USD | Idle share | Without idle | kWh |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, row := range unitRows(r) {
		ew.printf("| %s |\n", strings.Join(mdCells(row), " | "))
	}
}

// perText is a unit's scale: 1k, 1M or 1.
func perText(per float64) string {
	switch per {
	case 1e3:
		return "1k"
	case 1e6:
		return "1M"
	}
	return "1"
}

// unitMoney is a unit cost, to four decimals of a dollar, or n/a.
func unitMoney(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("$%.4f", *v)
}

// unitsCSV writes one row per unit of the fleet, each group, each model
// and each workload on a node (the first column says which), the figures
// in the units' own scale (per), nulls as n/a.
func unitsCSV(cw *csv.Writer, r *report.Result) error {
	cw.Write([]string{"of", "unit", "per", "workloads", "work", "held_gpu_hours", "idle_gpu_hours", "cost_usd", "energy_kwh",
		"usd_per", "idle_usd_per", "busy_usd_per", "idle_share", "kwh_per"})
	row := func(of, unit string, f analyze.UnitFigures) {
		cw.Write([]string{cell(of), cell(unit), num(f.Per), strconv.Itoa(f.Workloads), optNum(f.Work), num(f.HeldGPUHours), num(f.IdleGPUHours),
			num(f.CostUSD), optNum(f.EnergyKWh), optNum(f.USDPer), optNum(f.IdleUSDPer), optNum(f.BusyUSDPer), optNum(f.IdleShare), optNum(f.KWhPer)})
	}
	eachUnit(r.Units, r.UnitGroups, r.UnitModels, row, "(fleet)", "(model) ")
	for _, w := range r.UnitWorkloads {
		eachUnit(w.Units, nil, nil, row, "(workload) "+w.Workload+" on "+w.Node, "")
	}
	cw.Flush()
	return cw.Error()
}

// unitGauges writes the fleet's and the models' unit figures, one series
// per unit (and model), each per the unit's scale (a "scale" label:
// thousand, million or unit); a null figure has no series.
func unitGauges(p *promWriter, r *report.Result) {
	if len(r.Units) == 0 {
		return
	}
	type set struct {
		model string
		units map[string]analyze.UnitFigures
	}
	sets := []set{{"", r.Units}}
	for _, g := range r.UnitModels {
		sets = append(sets, set{g.Key[0], g.Units})
	}
	gauge := func(name, help string, get func(analyze.UnitFigures) *float64) {
		var ms []*dto.Metric
		for _, s := range sets {
			for _, unit := range slices.Sorted(maps.Keys(s.units)) {
				f := s.units[unit]
				if v := get(f); v != nil {
					ms = append(ms, val(*v, "unit", unit, "scale", analyze.ScaleWord(f.Per), "model", s.model))
				}
			}
		}
		p.gauge(name, help, ms...)
	}
	gauge("unit_work", "Work the counters read in the window, in the unit (model empty: the fleet's).", func(f analyze.UnitFigures) *float64 { return f.Work })
	gauge("unit_cost_usd", "Cost of a scale of the unit, on the GPU time its workloads held (docs/units.md).", func(f analyze.UnitFigures) *float64 { return f.USDPer })
	gauge("unit_idle_cost_usd", "The part of unit_cost_usd that idle time held makes.", func(f analyze.UnitFigures) *float64 { return f.IdleUSDPer })
	gauge("unit_energy_kwh", "Energy of a scale of the unit, its workloads' share of their GPUs'.", func(f analyze.UnitFigures) *float64 { return f.KWhPer })
}
