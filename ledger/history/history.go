// Package history holds the ledger's reports as types (docs/ledger.md):
// what "seedance ledger report" answers, for the renderers and the
// combined report. It is the ledger's output without its database: the
// packages that only read a report link neither SQLite nor PostgreSQL.
package history

import (
	"strings"
	"time"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/chargeback"
)

// Schema names the shape of a ledger report's JSON.
const Schema = "seedance-ledger-report/v1"

// Report answers from the ledger alone. Its summary and attribution have
// the keys and meaning of analyze's report for the same window.
type Report struct {
	SchemaVersion string `json:"schema_version"`
	Window        Window `json:"window"`
	// Watermark: the rows before it are settled; those after it are
	// provisional (the next update counts them again, with more data).
	Watermark time.Time `json:"watermark"`
	// Clusters are the clusters the report covers, and DataEnds where each
	// one's data ends (a cluster that lags shows here, and in Warnings).
	Clusters []string             `json:"clusters"`
	DataEnds map[string]time.Time `json:"data_ends"`
	// EnergyByGroup is each attribution group's energy (its workloads'
	// shares of their GPUs' energy), by GroupKey, and the unallocated
	// time's under "(unallocated)"; null where a row has no energy.
	EnergyByGroup map[string]*float64  `json:"energy_kwh_by_group,omitempty"`
	Summary       Summary              `json:"summary"`
	Attribution   *analyze.Attribution `json:"attribution"`
	Daily         []Day                `json:"daily"`
	// DailyWaste is each day's waste by group (the attribution's keys),
	// for a daily stacked chart; absent when grouping by workload.
	DailyWaste []DayWaste `json:"daily_waste,omitempty"`
	Prices     []Price    `json:"prices"`
	// Jobs are the per-workload figures: energy per finished job, and the
	// utilization of training apart from inference.
	Jobs *Jobs `json:"jobs"`
	// Comparison is this window against the baseline window, when one is
	// asked for.
	Comparison *Comparison `json:"comparison,omitempty"`
	// Chargeback is the window's charges by group, when asked for
	// (Query.ShareIdle): reserved and used, the unallocated cost shared,
	// adding up to the bill (docs/chargeback.md).
	Chargeback *chargeback.Report `json:"chargeback,omitempty"`
	// Budgets are the budgets' month-to-date charges and forecasts, when
	// asked for (Query.Budgets).
	Budgets []chargeback.Status `json:"budgets,omitempty"`
	// Units, UnitGroups, UnitModels and UnitWorkloads are what each unit
	// of work cost in the window, as analyze's report has them
	// (docs/units.md), when asked for (Query.Units).
	Units         map[string]analyze.UnitFigures `json:"units,omitempty"`
	UnitGroups    []analyze.UnitGroup            `json:"unit_groups,omitempty"`
	UnitModels    []analyze.UnitGroup            `json:"unit_models,omitempty"`
	UnitWorkloads []analyze.UnitWorkload         `json:"unit_workloads,omitempty"`
	// Queues, Cohorts, Hoarding and QuotaWhatIf are the queues' figures
	// of the window from the hourly rows (docs/queues.md, Over time), when
	// asked for (Query.Queues).
	Queues      map[string]analyze.QueueFigures `json:"queues,omitempty"`
	Cohorts     map[string]analyze.QueueFigures `json:"cohorts,omitempty"`
	Hoarding    []analyze.Hoarding              `json:"hoarding,omitempty"`
	QuotaWhatIf []analyze.QuotaChange           `json:"quota_what_if,omitempty"`
	// Reclaimed is what reclaim's actions freed within the window
	// (docs/reclaim.md): absent when none acted.
	Reclaimed *Reclaimed `json:"reclaimed,omitempty"`
	// Warnings are what the updates that counted the window warned of
	// (each cluster's, named when the report covers several), and the
	// clusters whose data stops well before the others'.
	Warnings []string `json:"warnings,omitempty"`
}

// Reclaimed is the GPU-hours reclaim's actions freed within the window —
// from each action to the workload's restore or the window's end — and
// their price at the notice's price of a GPU-hour, in all and by team
// (the owner's team label, else its namespace or Slurm account).
type Reclaimed struct {
	Actions  int             `json:"actions"`
	GPUHours float64         `json:"gpu_hours"`
	USD      float64         `json:"usd"`
	ByTeam   []ReclaimedTeam `json:"by_team"`
	// Capacity is what became of the freed GPUs.
	Capacity *FreedCapacity `json:"capacity,omitempty"`
}

// FreedCapacity is what became of the GPUs reclaim freed, over the whole
// buckets after each action (ledger.FreedCapacity): GPUHours of them in
// all, reused by other work on the same nodes, released (no longer
// observed: a node scaled away) or idle; Unknown counts the episodes whose
// nodes the ledger does not know.
type FreedCapacity struct {
	GPUHours         float64 `json:"gpu_hours"`
	ReusedGPUHours   float64 `json:"reused_gpu_hours"`
	ReleasedGPUHours float64 `json:"released_gpu_hours"`
	IdleGPUHours     float64 `json:"idle_gpu_hours"`
	Unknown          int     `json:"unknown_episodes"`
}

// ReclaimedTeam is one team's part of Reclaimed.
type ReclaimedTeam struct {
	Team     string  `json:"team"`
	GPUHours float64 `json:"gpu_hours"`
	USD      float64 `json:"usd"`
}

// Window is the buckets a report covers.
type Window struct {
	Start   time.Time `json:"start"`
	End     time.Time `json:"end"`
	BucketS int64     `json:"bucket_s"`
}

// Summary holds the figures of analyze's summary that the ledger keeps,
// under the same names; a figure with no measurement behind it is null.
type Summary struct {
	Nodes           int      `json:"nodes"`
	GPUHours        float64  `json:"gpu_hours"`
	AvgGPUUtilPct   *float64 `json:"avg_gpu_util_pct"`
	IdleGPUHours    *float64 `json:"idle_gpu_hours"`
	IdleRatio       *float64 `json:"idle_ratio"`
	IdleCostUSD     *float64 `json:"idle_cost_usd"`
	EnergyKWh       *float64 `json:"energy_kwh"`
	EnergyCostUSD   *float64 `json:"energy_cost_usd"`
	ProvisionalFrom *string  `json:"provisional_from,omitempty"`
}

// Day is one UTC day of the window, for charts.
type Day struct {
	Date     string  `json:"date"`
	GPUHours float64 `json:"gpu_hours"`
	// UsedGPUHours is the GPU time × measured utilization.
	UsedGPUHours float64  `json:"used_gpu_hours"`
	IdleGPUHours float64  `json:"idle_gpu_hours"`
	IdleCostUSD  float64  `json:"idle_cost_usd"`
	EnergyKWh    *float64 `json:"energy_kwh"`
	// Units are the day's unit figures, the fleet's (with --units,
	// docs/units.md): the trend of what a unit costs.
	Units map[string]analyze.UnitFigures `json:"units,omitempty"`
}

// DayWaste is one group's waste on one UTC day: the cost of the idle GPU
// time its workloads held (the attribution's waste_cost_usd, by day).
type DayWaste struct {
	Date         string   `json:"date"`
	Key          []string `json:"key"`
	WasteCostUSD float64  `json:"waste_cost_usd"`
}

// Price is a model's price per GPU-hour and where it came from, over the
// window (a price that changed has one entry per price).
type Price struct {
	Model       string  `json:"model"`
	USDPerHour  float64 `json:"usd_per_hour"`
	Source      string  `json:"source"`
	FirstBucket string  `json:"first_bucket"`
}

// Jobs are the per-workload figures of a window: the workloads that
// finished in it, by group and kind, with their energy and GPU-hours over
// their whole tenure; and the utilization of each class of workload over
// the window.
type Jobs struct {
	Finished []JobGroup     `json:"finished"`
	Classes  []ClassFigures `json:"classes"`
	// EnergyPerJobKWh is the mean energy of the workloads that finished in
	// the window, over their tenure; null when none did or none was
	// measured.
	EnergyPerJobKWh *float64 `json:"energy_per_job_kwh"`
}

// JobGroup is the workloads of one group and kind that finished in the
// window: how many, and their mean energy and GPU-hours held.
type JobGroup struct {
	Key           []string `json:"key"`
	Kind          string   `json:"kind"`
	Finished      int      `json:"finished"`
	MeanEnergyKWh *float64 `json:"mean_energy_kwh"`
	MeanGPUHours  float64  `json:"mean_gpu_hours"`
}

// ClassFigures is one class's use of its GPUs over the window.
type ClassFigures struct {
	Class          string   `json:"class"`
	Workloads      int      `json:"workloads"`
	HeldGPUHours   float64  `json:"held_gpu_hours"`
	UsedGPUHours   float64  `json:"used_gpu_hours"`
	UtilizationPct *float64 `json:"utilization_pct"`
	// EnergyKWh is null when a row of the window has no energy (counted
	// before the ledger kept it per workload).
	EnergyKWh *float64 `json:"energy_kwh"`
}

// Comparison is a window against a baseline window: the headline figures
// of a change (a new scheduler, a policy) before and after.
type Comparison struct {
	Baseline               Window `json:"baseline"`
	EnergyPerJobKWh        Change `json:"energy_per_job_kwh"`
	TrainingUtilizationPct Change `json:"training_utilization_pct"`
	IdleCostUSD            Change `json:"idle_cost_usd"`
	IdleRatio              Change `json:"idle_ratio"`
}

// Change is a figure before (the baseline) and after (the window), and
// the relative change in percent; null where a side is.
type Change struct {
	Before    *float64 `json:"before"`
	After     *float64 `json:"after"`
	ChangePct *float64 `json:"change_pct"`
}

// GroupKey is an attribution group's key in EnergyByGroup: its levels'
// keys joined by " / ".
func GroupKey(key []string) string { return strings.Join(key, " / ") }

// UnallocatedKey is the unallocated time's key in EnergyByGroup.
const UnallocatedKey = "(unallocated)"
