package render

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

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
	rows := func(group string, units map[string]analyze.UnitFigures) {
		for _, unit := range slices.Sorted(maps.Keys(units)) {
			f := units[unit]
			out = append(out, []string{group, unit, numOpt(f.Work, 0), fmt.Sprintf("%.2f", f.HeldGPUHours), money(f.CostUSD), perText(f.Per),
				unitMoney(f.USDPer), ratioPct(f.IdleShare), unitMoney(f.BusyUSDPer), numOpt(f.KWhPer, 4)})
		}
	}
	rows("fleet", fleet)
	for _, g := range groups {
		rows(strings.Join(g.Key, "/"), g.Units)
	}
	for _, g := range models {
		rows("model "+g.Key[0], g.Units)
	}
	return out
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
