// Package recommend turns what analyze found into a plan of moves: which
// workloads to migrate so that whole nodes can be released, and where pending
// work can run. The plan is checked by replaying it before anyone sees it;
// rendering it as kubectl, Slurm or JSON is a separate, small step.
package recommend

import "time"

// planSchema is the value of "schema_version" in a JSON plan.
const planSchema = "seedance.plan/v1"

// Plan is a list of moves in execution order and what they release.
type Plan struct {
	SchemaVersion      string   `json:"schema_version"`
	Moves              []Move   `json:"moves"`
	ReleasedNodes      []string `json:"released_nodes"`
	SavingsUSDPerHour  float64  `json:"savings_usd_per_hour"`
	SavingsUSDPerMonth float64  `json:"savings_usd_per_month"`
	// Unplaced lists pending workloads no node could take.
	Unplaced []string `json:"unplaced,omitempty"`
	// Refused says why there is no plan at all: the profile's pending
	// work is unknown (pending_unknown), so no node may be released.
	Refused string `json:"refused,omitempty"`
	// Blockers are the workloads that kept a node from being emptied:
	// pods whose move would lose something (no controller, a Job, a
	// StatefulSet), unless migration.move_blockers allows it.
	Blockers []Blocker `json:"blockers,omitempty"`
	// MoveBlockers is migration.move_blockers: the kubectl script then
	// moves pods that lose something, and says what.
	MoveBlockers bool `json:"move_blockers,omitempty"`
	// DataUntil is the end of the data the plan was made from (the
	// analysis' window); MaxAgeS is migration.max_plan_age: the scripts
	// refuse to execute a plan run longer than that after DataUntil, and
	// warn in a dry run (docs/recommend.md, A plan's age). Absent when the
	// window or the age is unknown (0: no limit).
	DataUntil *time.Time `json:"data_until,omitempty"`
	MaxAgeS   float64    `json:"max_age_s,omitempty"`
	// NodePriceUSDPerHour is each released node's price, for renderers
	// that release only some of them.
	NodePriceUSDPerHour map[string]float64 `json:"-"`
}

// Blocker is a workload that kept its node from being emptied, and why.
type Blocker struct {
	Workload string `json:"workload"`
	Node     string `json:"node"`
	Reason   string `json:"reason"`
}

// Move is one workload moved, or one pending workload placed.
type Move struct {
	Workload string  `json:"workload"`
	From     *string `json:"from"` // nil for pending work
	To       string  `json:"to"`
	GPUs     []int   `json:"gpus"`
	// Sharing is nil for whole GPUs, else "mps", "time-slicing" or
	// "mig:<profile>".
	Sharing           *string `json:"sharing"`
	Reason            string  `json:"reason"`
	SavingsUSDPerHour float64 `json:"savings_usd_per_hour"`
	// HigherNVLink marks pending work placed where its GPUs have more
	// NVLink bandwidth than the node it waits on.
	HigherNVLink bool `json:"-"`
	// Name and Namespace say how to move it (for the renderers).
	Name      string `json:"-"`
	Namespace string `json:"-"`
	// Kind is the workload's (pod, job); Blocker, when set, what moving
	// it loses (with migration.move_blockers).
	Kind    string `json:"-"`
	Blocker string `json:"blocker,omitempty"`
}

// hoursPerMonth converts hourly savings to monthly ones (365 × 24 / 12).
const hoursPerMonth = 730
