package render

import (
	"encoding/csv"
	"fmt"
	"github.com/seedance/seedance/internal/table"
	"io"
	"strconv"
	"strings"

	"github.com/seedance/seedance/report"

	"github.com/seedance/seedance/analyze"
)

// cell guards against spreadsheet formula injection (table.CSVCell); ESC,
// CR, NUL… are \x1b, never raw in a file a terminal may show.
func cell(s string) string { return table.CSVCell(s) }

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// optNum writes a number that may be null as "n/a" (which pandas and R read
// as missing), never 0.
func optNum(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return num(*v)
}

// deltaNum is a baseline delta, "n/a" where a side was null.
func deltaNum(d map[string]float64, k string) string {
	if v, ok := d[k]; ok {
		return num(v)
	}
	return "n/a"
}

// CSV writes one row per node, then a "(total)" row with the cluster's
// figures and, with a baseline, a "(delta vs baseline)" row. The spread
// of the nodes' utilization is a cluster figure: its two columns are empty
// on the node rows. The names in
// parentheses cannot be node names. The attribution report writes one row
// per group instead (attributionCSV), the fragmentation report one row
// per pool (fragmentationCSV).
func CSV(w io.Writer, r *report.Result, o Options) error {
	cw := csv.NewWriter(w)
	if o.Report == "attribution" && r.Attribution != nil {
		return attributionCSV(cw, r.Attribution)
	}
	if o.Report == "fragmentation" && r.Fragmentation != nil {
		return fragmentationCSV(cw, r.Fragmentation)
	}
	if o.Report == "units" {
		return unitsCSV(cw, r)
	}
	if o.Report == "queues" {
		return queuesCSV(cw, r)
	}
	cw.Write([]string{"node", "gpus", "models", "verdict", "avg_gpu_util_pct", "idle_share", "gpu_hours", "idle_gpu_hours",
		"idle_cost_usd", "energy_kwh", "price_usd_per_hour", "pending_workloads", "idle_intervals",
		"node_util_stddev_pct", "node_util_variance"})
	for _, n := range r.Nodes {
		ivs := make([]string, 0, len(n.IdleIntervals))
		for _, iv := range n.IdleIntervals {
			ivs = append(ivs, num(iv.StartS)+"-"+num(iv.EndS))
		}
		cw.Write([]string{cell(n.Name), strconv.Itoa(n.GPUs), cell(strings.Join(n.Models, "+")), n.Verdict,
			optNum(n.AvgGPUUtilPct), optNum(n.IdleShare), num(n.GPUHours), num(n.IdleGPUHours), num(n.IdleCostUSD), num(n.EnergyKWh),
			num(n.PriceUSDPerHour), fmt.Sprint(n.PendingWorkloads), strings.Join(ivs, ";"), "", ""})
	}
	s := r.Summary
	cw.Write([]string{"(total)", strconv.Itoa(s.GPUs), "", "", optNum(s.AvgGPUUtilPct), optNum(s.IdleRatio), num(s.GPUHours), optNum(s.IdleGPUHours),
		optNum(s.IdleCostUSD), optNum(s.EnergyKWh), "", "", "", optNum(s.NodeUtilStddevPct), optNum(s.NodeUtilVariance)})
	if r.Delta != nil {
		d := r.Delta
		cw.Write([]string{"(delta vs baseline)", deltaNum(d, "gpus"), "", "", deltaNum(d, "avg_gpu_util_pct"), deltaNum(d, "idle_ratio"), deltaNum(d, "gpu_hours"),
			deltaNum(d, "idle_gpu_hours"), deltaNum(d, "idle_cost_usd"), deltaNum(d, "energy_kwh"), "", "", "",
			deltaNum(d, "node_util_stddev_pct"), deltaNum(d, "node_util_variance")})
	}
	cw.Flush()
	return cw.Error()
}

// attributionCSV writes one row per group (a column per level), then the
// time held by no workload and the total, named in parentheses in the first
// column.
func attributionCSV(cw *csv.Writer, a *analyze.Attribution) error {
	head := append(append([]string(nil), a.GroupBy...), "workloads", "held_gpu_hours", "used_gpu_hours", "efficiency", "idle_held_gpu_hours", "waste_cost_usd", "basis")
	cw.Write(head)
	row := func(key []string, workloads string, f analyze.AttributionFigures, basis string) {
		cells := make([]string, 0, len(head))
		for _, k := range key {
			cells = append(cells, cell(k))
		}
		cw.Write(append(cells, workloads, num(f.HeldGPUHours), num(f.UsedGPUHours), optNum(f.Efficiency), num(f.IdleHeldGPUHours), num(f.WasteCostUSD), basis))
	}
	for _, g := range a.Groups {
		row(g.Key, strconv.Itoa(g.Workloads), g.AttributionFigures, g.Basis)
	}
	for _, extra := range []struct {
		name string
		f    analyze.AttributionFigures
	}{{Unallocated, a.Unallocated}, {"(total)", a.Total}} {
		key := make([]string, len(a.GroupBy))
		key[0] = extra.name
		row(key, "", extra.f, "")
	}
	cw.Flush()
	return cw.Error()
}
