package analyze

import (
	"time"

	"github.com/seedance/seedance/profile"
)

// ReportSchema is the value of "schema_version" in a JSON report.
const ReportSchema = "seedance.report/v1"

// Report is what an analysis computes. The JSON report
// (docs/report-v1.schema.json) is report.Result, which adds what later
// stages make of it: the plan, the rules' matches, the gates, the delta.
type Report struct {
	SchemaVersion string       `json:"schema_version"`
	Window        Window       `json:"window"`
	Params        ReportParams `json:"params"`
	Inputs        []Input      `json:"inputs"`
	Summary       Summary      `json:"summary"`
	Timeline      Timeline     `json:"timeline"`
	Scaling       *Scaling     `json:"scaling,omitempty"`
	Attribution   *Attribution `json:"attribution,omitempty"`
	// Units is what each unit of work cost, fleet-wide, by unit; UnitGroups
	// by attribution group, UnitModels by the model served, UnitWorkloads
	// by workload (docs/units.md). Absent when no workload counts work.
	Units         map[string]UnitFigures `json:"units,omitempty"`
	UnitGroups    []UnitGroup            `json:"unit_groups,omitempty"`
	UnitModels    []UnitGroup            `json:"unit_models,omitempty"`
	UnitWorkloads []UnitWorkload         `json:"unit_workloads,omitempty"`
	// Queues are each queue's quota against its measured use, by name;
	// Cohorts their sums by cohort; Hoarding the queues that held quota
	// idle while others waited, dearest first (docs/queues.md). Absent
	// when no input names a queue.
	Queues   map[string]QueueFigures `json:"queues,omitempty"`
	Cohorts  map[string]QueueFigures `json:"cohorts,omitempty"`
	Hoarding []Hoarding              `json:"hoarding,omitempty"`
	// QuotaWhatIf is each quota right-sized from measured use, with what
	// the change would have done to the window's pending demand.
	QuotaWhatIf []QuotaChange `json:"quota_what_if,omitempty"`
	// StrandedMemory is each GPU's memory held during its idle runs, with
	// Params.Fragmentation.
	StrandedMemory []StrandedGPU `json:"stranded_memory,omitempty"`
	// GPUFigures is each GPU's figures, with Params.GPUFigures.
	GPUFigures  []GPUReport  `json:"gpu_figures,omitempty"`
	Nodes       []NodeReport `json:"nodes"`
	Suggestions []Suggestion `json:"suggestions"`
	Warnings    []string     `json:"warnings,omitempty"`
	// PendingUnknown says why the work waiting for GPUs is unknown (an
	// input's pending_unknown); no suggestion then drains or releases a
	// node.
	PendingUnknown string `json:"pending_unknown,omitempty"`
	// Fleet is what a migration planner needs of the nodes: each GPU's
	// mean utilization, the workloads, the topology. Kept only with
	// Params.KeepFleet; never written.
	Fleet *Fleet `json:"-"`
}

// Window is the time span of the merged inputs. CoveredS is the length of
// the union of every sample's coverage: two one-hour profiles a day apart
// span 25 h but cover 2 h.
type Window struct {
	Start     time.Time `json:"start"`
	End       time.Time `json:"end"`
	DurationS float64   `json:"duration_s"`
	CoveredS  float64   `json:"covered_s"`
}

// ReportParams records the parameters the numbers were computed with.
type ReportParams struct {
	IdleThresholdPct   float64            `json:"idle_threshold_pct"`
	IdleWindowS        float64            `json:"idle_window_s"`
	IdleNodeShare      float64            `json:"idle_node_share"`
	UnderusedPct       float64            `json:"underused_pct"`
	EnergyUSDPerKWh    float64            `json:"energy_usd_per_kwh"`
	Prices             map[string]float64 `json:"prices"`
	DefaultGPUHourUSD  float64            `json:"default_gpu_hour_usd"`
	DefaultPricesUsed  []string           `json:"default_prices_used"`
	UnpricedModelsUsed []string           `json:"models_at_default_price,omitempty"`
	// PoolBy is the node label that names the pools (NodeReport.Pool); ""
	// when they are GPU models.
	PoolBy string `json:"pool_by,omitempty"`
}

// Input describes one profile that went into the report.
type Input struct {
	Name      string    `json:"name"`
	Source    string    `json:"source,omitempty"`
	StartedAt time.Time `json:"started_at"`
	EndedAt   time.Time `json:"ended_at"`
	Complete  bool      `json:"complete"`
}

// Summary holds the cluster-wide figures. Every field but Notes is a number
// so that gates and baselines can use them; a mean of a metric that no GPU
// reported is null, never 0.
type Summary struct {
	Nodes           int      `json:"nodes"`
	GPUs            int      `json:"gpus"`
	GPUHours        float64  `json:"gpu_hours"`
	AvgGPUUtilPct   *float64 `json:"avg_gpu_util_pct"`
	AvgMemBWUtilPct *float64 `json:"avg_mem_bw_util_pct"`
	// NodeUtilStddevPct and NodeUtilVariance are the spread of the nodes'
	// mean GPU utilization: the population standard deviation in
	// percentage points, and the variance in 0–1 units (the white paper's
	// 0.38 → 0.19); null when no node reported utilization.
	NodeUtilStddevPct *float64 `json:"node_util_stddev_pct"`
	NodeUtilVariance  *float64 `json:"node_util_variance"`
	// MemBWGPUs counts the GPUs that reported memory bandwidth.
	MemBWGPUs int `json:"mem_bw_gpus"`
	// The idle figures are null when no GPU reported utilization, the
	// energy figures when none reported power or energy: a figure
	// computed from no measurement is null, and a gate over it fails.
	IdleGPUHours               *float64 `json:"idle_gpu_hours"`
	IdleRatio                  *float64 `json:"idle_ratio"`
	IdleCostUSD                *float64 `json:"idle_cost_usd"`
	EnergyKWh                  *float64 `json:"energy_kwh"`
	EnergyCostUSD              *float64 `json:"energy_cost_usd"`
	ProjectedMonthlySavingsUSD *float64 `json:"projected_monthly_savings_usd"`
	// NodesFullWindow counts the nodes with a GPU whose utilization was
	// observed for at least one idle window: the basis of the idle
	// figures (a run shorter than the window can count nothing as idle).
	NodesFullWindow int `json:"nodes_observed_full_window"`
	// IdleNodes counts the idle nodes that run no workload at the window's
	// end; IdleHeldNodes the idle ones a running workload still holds.
	IdleNodes      int `json:"idle_nodes"`
	IdleHeldNodes  int `json:"idle_held_nodes"`
	StalledNodes   int `json:"stalled_nodes"`
	UnderusedNodes int `json:"underused_nodes"`
	BusyNodes      int `json:"busy_nodes"`
	// Notes say what limits the figures (a window shorter than the idle
	// window, for instance); they are for people, not gates.
	Notes []string `json:"notes,omitempty"`
}

// Node verdicts.
const (
	VerdictIdle      = "idle"
	VerdictStalled   = "stalled"
	VerdictUnderused = "underused"
	VerdictBusy      = "busy"
)

// NodeReport holds one node's figures.
type NodeReport struct {
	Name   string   `json:"name"`
	GPUs   int      `json:"gpus"`
	Models []string `json:"models"`
	// Pool is the node's pool: the value of its Params.PoolBy label
	// ("(no LABEL)" when it has none), or its GPU model when PoolBy is "".
	Pool          string   `json:"pool"`
	Verdict       string   `json:"verdict"`
	AvgGPUUtilPct *float64 `json:"avg_gpu_util_pct"`
	// ObservedS is the length of the union of the node's GPUs' coverage;
	// IdleShare is the length of its idle intervals over that (null when
	// nothing was observed). IdleNow: the last idle interval reaches the
	// end of the observed time.
	ObservedS float64  `json:"observed_s"`
	IdleShare *float64 `json:"idle_share"`
	IdleNow   bool     `json:"idle_now"`
	// DataAgeS is how long before the window's end the node's newest
	// sample ends; Stale when that is more than the idle window (or
	// analyze.stale_after): the node is not "idle now", and no command
	// acts on it.
	DataAgeS float64 `json:"data_age_s"`
	Stale    bool    `json:"stale,omitempty"`
	// WaitingFor lists the unscheduled work (profile.Unscheduled) this idle
	// node could run: it is stalled, not releasable (placeUnscheduled).
	WaitingFor []string `json:"waiting_for,omitempty"`
	// RunningWorkloads counts the workloads running on the node at the
	// window's end (their tenure reaches it).
	RunningWorkloads int        `json:"running_workloads"`
	GPUHours         float64    `json:"gpu_hours"`
	IdleGPUHours     float64    `json:"idle_gpu_hours"`
	IdleCostUSD      float64    `json:"idle_cost_usd"`
	EnergyKWh        float64    `json:"energy_kwh"`
	PriceUSDPerHour  float64    `json:"price_usd_per_hour"`
	IdleIntervals    []Interval `json:"idle_intervals"`
	PendingWorkloads int        `json:"pending_workloads"`
	// UtilSparkline is the node's mean utilization in equal slices of the
	// window (null where it has no sample), for sparklines.
	UtilSparkline []*float64 `json:"util_timeline"`
	// GPUTimelines are the same per GPU, for clusters of at most
	// MaxGPUTimelines GPUs.
	GPUTimelines [][]*float64 `json:"gpu_util_timelines,omitempty"`
}

// Timeline is the cluster's utilization over the window, in equal slices.
type Timeline struct {
	BucketS     float64    `json:"bucket_s"`
	MeanUtilPct []*float64 `json:"mean_util_pct"`
	P10UtilPct  []*float64 `json:"p10_util_pct"`
	P90UtilPct  []*float64 `json:"p90_util_pct"`
	// IdleNodeFraction is the share of nodes inside an idle interval.
	IdleNodeFraction []float64 `json:"idle_node_fraction"`
}

// Interval is a span of the window in seconds from its start.
type Interval struct {
	StartS float64 `json:"start_s"`
	EndS   float64 `json:"end_s"`
}

// Suggestion kinds.
const (
	SuggestReleaseNode   = "release-node"
	SuggestScheduleNode  = "schedule-node"
	SuggestRebindPending = "rebind-pending"
)

// Suggestion is one thing to do, with a command to do it when a dialect is
// chosen and every name in it is valid. Analysis leaves Command empty and
// says in Action what a command would act on; recommend.Commands writes
// it in the dialect.
type Suggestion struct {
	Kind    string `json:"kind"`
	Node    string `json:"node"`
	Text    string `json:"text"`
	Command string `json:"command,omitempty"`
	// Workloads lists every workload a suggestion about several pods of
	// one owner covers (the text gives the count).
	Workloads         []string `json:"workloads,omitempty"`
	SavingsUSDPerHour float64  `json:"savings_usd_per_hour"`
	// Severity and Priority are a policy rule's (docs/rules.md).
	Severity string `json:"severity,omitempty"`
	Priority int    `json:"priority,omitempty"`
	// Action is what a command would act on, beyond the node: never
	// written.
	Action *Action `json:"-"`
}

// Action is what a suggestion's command acts on beyond its node, for the
// dialect that writes it.
type Action struct {
	// Pending are the workloads waiting on the node (rebind-pending).
	Pending []profile.Workload
	// CPUs and PIDs: bind the processes to the CPUs (rebind-numa).
	CPUs string
	PIDs []int
	// Cancel is the Slurm job to cancel (idle-holder).
	Cancel string
}
