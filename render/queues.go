package render

import (
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/internal/table"
	"github.com/seedance/seedance/report"
)

// queueHeader and queueRows are the queue figures (docs/queues.md) as
// rows: each queue, the dearest idle-held first, then each cohort.
var queueHeader = []string{"QUEUE", "COHORT", "QUOTA GPUS", "QUOTA GPU-H", "RESERVED", "BORROWED", "LENT", "HELD", "USED", "IDLE-HELD",
	"IDLE-HELD $", "PENDING GPU-H", "LONGEST WAIT", "HELD/QUOTA", "EFFICIENCY", "VERDICT"}

// namedQueue is one row's name and figures.
type namedQueue struct {
	name string
	f    analyze.QueueFigures
}

// queueList is the queues, the dearest idle-held first, then the
// cohorts (named "cohort NAME").
func queueList(queues, cohorts map[string]analyze.QueueFigures) []namedQueue {
	var out []namedQueue
	for _, name := range slices.Sorted(maps.Keys(queues)) {
		out = append(out, namedQueue{name, queues[name]})
	}
	idle := func(q namedQueue) float64 { // unknown: last
		if q.f.IdleHeldUSD == nil {
			return -1
		}
		return *q.f.IdleHeldUSD
	}
	sort.SliceStable(out, func(i, j int) bool { return idle(out[i]) > idle(out[j]) })
	for _, name := range slices.Sorted(maps.Keys(cohorts)) {
		out = append(out, namedQueue{"cohort " + name, cohorts[name]})
	}
	return out
}

// pendingCell is a queue's pending GPU-hours, with the part its
// workloads' own limits or holds kept waiting when there is one.
func pendingCell(f analyze.QueueFigures) string {
	if f.HeldPendingGPUHours > 0 {
		return fmt.Sprintf("%.2f (%.2f held)", f.PendingGPUHours, f.HeldPendingGPUHours)
	}
	return fmt.Sprintf("%.2f", f.PendingGPUHours)
}

func queueRows(r *report.Result) [][]string { return queueRowsOf(r.Queues, r.Cohorts) }

// queueRowsOf are the rows of an analysis' or a ledger's queues.
func queueRowsOf(queues, cohorts map[string]analyze.QueueFigures) [][]string {
	var out [][]string
	for _, q := range queueList(queues, cohorts) {
		f := q.f
		verdict := ""
		if f.Hoarding {
			verdict = "hoarding"
			if f.ContestedUSD != nil {
				verdict += ": " + money(*f.ContestedUSD) + " others waited for"
			}
		}
		out = append(out, []string{q.name, f.Cohort, numOpt(f.NominalGPUs, 2), numOpt(f.NominalGPUHours, 2), numOpt(f.ReservedGPUHours, 2),
			numOpt(f.BorrowedGPUHours, 2), numOpt(f.LentGPUHours, 2), numOpt(f.AllocatedGPUHours, 2), numOpt(f.UsedGPUHours, 2),
			numOpt(f.IdleHeldGPUHours, 2), moneyOpt(f.IdleHeldUSD), pendingCell(f),
			waitText(f.LongestWaitS), ratioPct(f.HeldOfQuota), ratioPct(f.Efficiency), verdict})
	}
	return out
}

// useHeader and useRows are each queue's use over time, the fair-share
// input and the quota what-if (docs/queues.md).
var useHeader = []string{"QUEUE", "USED GPUS (PERCENTILE)", "PEAK USED", "DECAYED USED", "DECAYED RESERVED", "QUOTA", "BUDGET GPU-H", "OF BUDGET RESERVED / IDLE",
	"SLURM: USED / LEFT GPU-H", "PROPOSED", "PENDING IN QUOTA GPU-H", "WHY"}

func useRows(r *report.Result) [][]string { return useRowsOf(r.Queues, r.QuotaWhatIf) }

// useRowsOf are the rows of an analysis' or a ledger's queues over time.
func useRowsOf(queues map[string]analyze.QueueFigures, whatIf []analyze.QuotaChange) [][]string {
	changes := map[string]analyze.QuotaChange{}
	for _, c := range whatIf {
		changes[c.Queue] = c
	}
	var out [][]string
	for _, name := range slices.Sorted(maps.Keys(queues)) {
		f := queues[name]
		row := []string{name, numOpt(f.UsedGPUsPercentile, 2), numOpt(f.PeakUsedGPUs, 2), numOpt(f.DecayedUsedGPUs, 2), numOpt(f.DecayedReservedGPUs, 2), numOpt(f.NominalGPUs, 0),
			numOpt(f.BudgetGPUHours, 2), "", "", "", "", ""}
		if f.BudgetGPUHours != nil {
			row[7] = pct(f.BudgetReservedPct) + " / " + pct(f.BudgetIdlePct)
		}
		if f.BudgetUsedPct != nil {
			row[8] = pct(f.BudgetUsedPct) + " / " + numOpt(f.BudgetLeftGPUHours, 2)
		}
		if c, ok := changes[name]; ok {
			row[9], row[10], row[11] = fmt.Sprintf("%g", c.ProposedGPUs), fmt.Sprintf("%.2f → %.2f", c.PendingWithinQuotaGPUHours, c.ProposedPendingWithinQuotaGPUHours), c.Why
		}
		out = append(out, row)
	}
	return out
}

// queuesTable writes the queue figures as a table, and their use over
// time.
func queuesTable(w io.Writer, ew *errWriter, r *report.Result) error {
	if len(r.Queues) == 0 {
		return nil
	}
	for _, sec := range []struct {
		title  string
		header []string
		rows   [][]string
	}{{"Queues: quota against measured use, in GPU-hours over the window (docs/queues.md)", queueHeader, queueRows(r)},
		{"Queues over time: used GPUs, decayed as Kueue's admission fair sharing decays usage, and the quotas right-sized from them", useHeader, useRows(r)}} {
		ew.printf("\n%s\n", sec.title)
		t := table.New(w, sec.header...)
		for _, row := range sec.rows {
			t.Row(row...)
		}
		if err := t.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// queuesMarkdown writes the queue figures as a Markdown table.
func queuesMarkdown(ew *errWriter, r *report.Result) {
	if len(r.Queues) == 0 {
		return
	}
	ew.printf("\n**Queues: quota against measured use** (GPU-hours; docs/queues.md)\n\n| %s |\n|---|---|%s\n", strings.Join(mdCells(queueHeader), " | "), strings.Repeat("---:|", len(queueHeader)-3)+"---|")
	for _, row := range queueRows(r) {
		ew.printf("| %s |\n", strings.Join(mdCells(row), " | "))
	}
	ew.printf("\n**Queues over time** (fair-share input, quota what-if)\n\n| %s |\n|---|%s---|\n", strings.Join(mdCells(useHeader), " | "), strings.Repeat("---:|", len(useHeader)-2))
	for _, row := range useRows(r) {
		ew.printf("| %s |\n", strings.Join(mdCells(row), " | "))
	}
}

// queuesCSV writes one row per queue and cohort, every figure, nulls as
// n/a.
func queuesCSV(cw *csv.Writer, r *report.Result) error {
	cw.Write([]string{"queue", "kind", "cohort", "workloads", "nominal_gpus", "nominal_gpu_hours", "reserved_gpu_hours", "borrowed_gpu_hours", "lent_gpu_hours",
		"allocated_gpu_hours", "used_gpu_hours", "idle_held_gpu_hours", "pending_gpu_hours", "pending_workloads", "longest_wait_s", "held_of_quota", "efficiency",
		"usd_per_gpu_hour", "nominal_usd", "allocated_usd", "used_usd", "idle_held_usd", "pending_usd", "hoarding", "contested_gpu_hours", "contested_usd",
		"used_gpus_percentile", "peak_used_gpus", "decayed_used_gpus", "decayed_reserved_gpus", "budget_gpu_hours", "budget_reserved_pct", "budget_idle_pct",
		"budget_used_pct", "budget_left_gpu_hours", "held_pending_gpu_hours"})
	for _, q := range queueList(r.Queues, r.Cohorts) {
		f := q.f
		cw.Write([]string{cell(q.name), cell(f.Kind), cell(f.Cohort), fmt.Sprint(f.Workloads), optNum(f.NominalGPUs), optNum(f.NominalGPUHours), optNum(f.ReservedGPUHours),
			optNum(f.BorrowedGPUHours), optNum(f.LentGPUHours), optNum(f.AllocatedGPUHours), optNum(f.UsedGPUHours), optNum(f.IdleHeldGPUHours), num(f.PendingGPUHours),
			optInt(f.PendingWorkloads), optNum(f.LongestWaitS), optNum(f.HeldOfQuota), optNum(f.Efficiency), num(f.USDPerGPUHour), optNum(f.NominalUSD),
			optNum(f.AllocatedUSD), optNum(f.UsedUSD), optNum(f.IdleHeldUSD), num(f.PendingUSD), fmt.Sprint(f.Hoarding), optNum(f.ContestedGPUHours), optNum(f.ContestedUSD),
			optNum(f.UsedGPUsPercentile), optNum(f.PeakUsedGPUs), optNum(f.DecayedUsedGPUs), optNum(f.DecayedReservedGPUs),
			optNum(f.BudgetGPUHours), optNum(f.BudgetReservedPct), optNum(f.BudgetIdlePct), optNum(f.BudgetUsedPct), optNum(f.BudgetLeftGPUHours),
			num(f.HeldPendingGPUHours)})
	}
	cw.Flush()
	return cw.Error()
}

// queueGauges writes each queue's figures, one series per queue; a null
// figure has no series.
func queueGauges(p *promWriter, r *report.Result) {
	if len(r.Queues) == 0 {
		return
	}
	names := slices.Sorted(maps.Keys(r.Queues))
	gauge := func(name, help string, get func(analyze.QueueFigures) *float64) {
		var ms []*dto.Metric
		for _, q := range names {
			if v := get(r.Queues[q]); v != nil {
				ms = append(ms, val(*v, "queue", q, "cohort", r.Queues[q].Cohort))
			}
		}
		p.gauge(name, help, ms...)
	}
	of := func(v float64) *float64 { return &v }
	gauge("queue_nominal_gpus", "The queue's GPU quota (docs/queues.md).", func(f analyze.QueueFigures) *float64 { return f.NominalGPUs })
	gauge("queue_allocated_gpu_hours", "GPU-hours the queue's workloads held on nodes in the window.", func(f analyze.QueueFigures) *float64 { return f.AllocatedGPUHours })
	gauge("queue_used_gpu_hours", "GPU-hours the queue's workloads used, measured.", func(f analyze.QueueFigures) *float64 { return f.UsedGPUHours })
	gauge("queue_idle_held_usd", "Dollars of GPU time the queue's workloads held and did not use.", func(f analyze.QueueFigures) *float64 { return f.IdleHeldUSD })
	gauge("queue_pending_gpu_hours", "GPUs the queue's workloads waited for, times the wait.", func(f analyze.QueueFigures) *float64 { return of(f.PendingGPUHours) })
	gauge("queue_budget_idle_pct", "The share of the queue's GPU-minute budget (Slurm's GrpTRESMins) its idle-held GPU-hours took in the window, %.", func(f analyze.QueueFigures) *float64 { return f.BudgetIdlePct })
	gauge("queue_budget_used_pct", "What Slurm counted against the queue's GPU-minute budget when it was read (its decayed usage, sshare's GrpTRESRaw), % of the budget.",
		func(f analyze.QueueFigures) *float64 { return f.BudgetUsedPct })
	gauge("queue_budget_left_gpu_hours", "The queue's GPU-minute budget neither used nor held by running jobs to their time limits, in GPU-hours.",
		func(f analyze.QueueFigures) *float64 { return f.BudgetLeftGPUHours })
	gauge("queue_decayed_used_gpus", "The queue's measured use decayed as Kueue's admission fair sharing decays usage (docs/queues.md): who got the cluster by work done.", func(f analyze.QueueFigures) *float64 { return f.DecayedUsedGPUs })
	gauge("queue_decayed_reserved_gpus", "The queue's reservations decayed the same way: who got the cluster by allocation.", func(f analyze.QueueFigures) *float64 { return f.DecayedReservedGPUs })
	gauge("queue_hoarding", "1 when the queue held quota idle while another of its cohort waited.", func(f analyze.QueueFigures) *float64 {
		if f.Hoarding {
			return of(1)
		}
		return of(0)
	})
}

// waitText is a wait's length, or n/a.
func waitText(s *float64) string {
	if s == nil {
		return "n/a"
	}
	return analyze.FormatDuration(secondsDur(*s))
}

func optInt(v *int) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprint(*v)
}
