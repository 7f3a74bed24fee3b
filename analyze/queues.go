package analyze

import (
	"fmt"
	"sort"
	"strings"

	"github.com/seedance/seedance/profile"
)

// QueueParams are the hoarding verdict's thresholds (docs/queues.md): a
// queue hoards when it held at least HeldPct % of its quota's GPU-hours,
// used less than UsedPct % of what it held, while another queue of its
// cohort (of the cluster, without one) waited for GPUs.
//
// The timelines are cut into buckets of SamplingS seconds (Kueue's
// usageSamplingInterval); the right-sized quota is the Percentile of a
// queue's used GPUs plus HeadroomPct %, never below its peak; the
// fair-share input decays use with a half-life of HalfLifeS seconds.
type QueueParams struct {
	HeldPct, UsedPct                              float64
	Percentile, HeadroomPct, HalfLifeS, SamplingS float64
}

// DefaultQueueParams are the documented defaults.
func DefaultQueueParams() QueueParams {
	return QueueParams{HeldPct: 50, UsedPct: 20, Percentile: 95, HeadroomPct: 25, HalfLifeS: 86400, SamplingS: 300}
}

// QueueFigures are a queue's (or a cohort's) figures over the window, in
// GPU-hours and dollars (docs/queues.md). A figure the source gave
// nothing to compute from is null: the quota of a queue the profile does
// not list, the reservations of a source that read none.
type QueueFigures struct {
	Kind      string `json:"kind,omitempty"`
	Cohort    string `json:"cohort,omitempty"`
	Workloads int    `json:"workloads"`
	// NominalGPUs is the quota; NominalGPUHours it over the window.
	NominalGPUs      *float64 `json:"nominal_gpus"`
	NominalGPUHours  *float64 `json:"nominal_gpu_hours"`
	ReservedGPUHours *float64 `json:"reserved_gpu_hours"`
	// BorrowedGPUHours is the reservations above the quota; LentGPUHours
	// the quota others of the cohort borrowed, shared among the lenders
	// by their unreserved quota.
	BorrowedGPUHours *float64 `json:"borrowed_gpu_hours"`
	LentGPUHours     *float64 `json:"lent_gpu_hours"`
	// AllocatedGPUHours is what its workloads held on nodes, UsedGPUHours
	// what they used (measured, as attribution splits shared GPUs), and
	// IdleHeldGPUHours the difference; null when the source could not say
	// which workloads the queue admitted (Kueue's metrics alone).
	AllocatedGPUHours *float64 `json:"allocated_gpu_hours"`
	UsedGPUHours      *float64 `json:"used_gpu_hours"`
	IdleHeldGPUHours  *float64 `json:"idle_held_gpu_hours"`
	// PendingGPUHours is the GPUs its workloads waited for, times the
	// wait; PendingWorkloads counts them and LongestWaitS is the longest
	// one wait in the window (null from the ledger, whose hourly rows name
	// no workload).
	PendingGPUHours  float64  `json:"pending_gpu_hours"`
	PendingWorkloads *int     `json:"pending_workloads"`
	LongestWaitS     *float64 `json:"longest_wait_s"`
	// HeldPendingGPUHours is the part of PendingGPUHours that the
	// workloads' own limits or holds kept waiting (QueueSpan.HeldBy): not
	// demand another queue's idle quota could have met, so the hoarding
	// verdict and the what-if leave it out.
	HeldPendingGPUHours float64 `json:"held_pending_gpu_hours"`
	// BudgetGPUHours is its GPU-minute budget (Slurm's GrpTRESMins) in
	// GPU-hours; BudgetReservedPct what the window's reservations took of
	// it, BudgetIdlePct what its idle-held GPU-hours took, in % (null
	// without a budget, or reservations not known; a cohort's are null).
	BudgetGPUHours    *float64 `json:"budget_gpu_hours"`
	BudgetReservedPct *float64 `json:"budget_reserved_pct"`
	BudgetIdlePct     *float64 `json:"budget_idle_pct"`
	// BudgetUsedPct is what Slurm counted against the budget when it was
	// read (its decayed usage, sshare's GrpTRESRaw) in % of it, and
	// BudgetLeftGPUHours what is neither used nor held by running jobs to
	// their time limits (TRESRunMins), never below 0 (null when Slurm's
	// use was not read).
	BudgetUsedPct      *float64 `json:"budget_used_pct"`
	BudgetLeftGPUHours *float64 `json:"budget_left_gpu_hours"`
	// HeldOfQuota is allocated ÷ nominal GPU-hours; Efficiency used ÷
	// allocated.
	HeldOfQuota *float64 `json:"held_of_quota"`
	Efficiency  *float64 `json:"efficiency"`
	// USDPerGPUHour prices its GPU-hours: what its workloads' GPUs cost
	// (the fleet's mean where it held none).
	USDPerGPUHour     float64  `json:"usd_per_gpu_hour"`
	NominalUSD        *float64 `json:"nominal_usd"`
	AllocatedUSD      *float64 `json:"allocated_usd"`
	UsedUSD           *float64 `json:"used_usd"`
	IdleHeldUSD       *float64 `json:"idle_held_usd"`
	PendingUSD        float64  `json:"pending_usd"`
	ContestedGPUHours *float64 `json:"contested_gpu_hours"`
	ContestedUSD      *float64 `json:"contested_usd"`
	Hoarding          bool     `json:"hoarding"`
	// UsedGPUsPercentile and PeakUsedGPUs are of its used GPUs bucket by
	// bucket; DecayedUsedGPUs and DecayedReservedGPUs its use and its
	// reservations folded as Kueue's admission fair sharing folds usage
	// (null for a cohort, and without reservations).
	UsedGPUsPercentile  *float64 `json:"used_gpus_percentile"`
	PeakUsedGPUs        *float64 `json:"peak_used_gpus"`
	DecayedUsedGPUs     *float64 `json:"decayed_used_gpus"`
	DecayedReservedGPUs *float64 `json:"decayed_reserved_gpus"`
}

// Hoarding is one queue the verdict names, ranked by the dollars of its
// idle-held quota others waited for.
type Hoarding struct {
	Queue  string `json:"queue"`
	Cohort string `json:"cohort,omitempty"`
	// Waiting are the queues of its cohort (or cluster) that waited.
	Waiting           []string `json:"waiting"`
	HeldOfQuota       float64  `json:"held_of_quota"`
	Efficiency        float64  `json:"efficiency"`
	ContestedGPUHours *float64 `json:"contested_gpu_hours"`
	ContestedUSD      *float64 `json:"contested_usd"`
}

// queueAcc accumulates a queue's figures from the holdings.
type queueAcc struct {
	q                              profile.Queue
	listed                         bool
	workloads, pendingWorkloads    map[string]bool
	held, used, heldCost, usedCost float64
	reserved, pending              step
	reservedH, borrowedH, lentH    float64
	pendingH, longestS             float64
	// demand is the waits for GPUs (pending but the held ones), demandH
	// its integral.
	demand   step
	demandH  float64
	nominalH *float64
	peakUsed float64
	// counted is the workloads the ledger counted (its rows name none),
	// largest the most GPUs one of them reserved.
	counted int
	largest float64
}

// queues fills r's queue figures from the holdings and the profile's
// queues.
func (a *analysis) queues(r *Report, hs []*holding, fleet figures, qp QueueParams) {
	if len(a.queueList) == 0 && !anyQueued(hs) {
		return
	}
	set := newQueueSet(a.queueList)
	var unknown []string
	for _, h := range hs {
		if h.w.Queue == "" || h.n > 0 {
			continue
		}
		acc := set.get(h.w.Queue)
		if !acc.listed && !acc.workloads[h.w.ID] {
			unknown = append(unknown, fmt.Sprintf("%s (queue %s)", h.w.ID, h.w.Queue))
		}
		acc.workloads[h.w.ID] = true
		acc.held += h.f.held
		acc.used += h.f.used
		acc.heldCost += h.f.heldCost
		if h.f.held > 0 {
			acc.usedCost += h.f.heldCost * h.f.used / h.f.held
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		r.Warnings = append(r.Warnings, fmt.Sprintf("workload(s) admitted through a queue the profile does not list, their quota unknown: %s", strings.Join(unknown, ", ")))
	}
	fleetPrice := 0.0
	if fleet.held > 0 {
		fleetPrice = fleet.heldCost / fleet.held
	}
	qt := a.queueTimelines(qp.SamplingS)
	q := set.sections(a.windowS, fleetPrice, qt, qp)
	r.Queues, r.Cohorts, r.Hoarding, r.QuotaWhatIf = q.Queues, q.Cohorts, q.Hoarding, q.WhatIf
}

func anyQueued(hs []*holding) bool {
	for _, h := range hs {
		if h.w.Queue != "" {
			return true
		}
	}
	return false
}

// spans turns the queue's reservations and waits into step functions and
// their integrals.
func (c *queueAcc) spans(windowS float64) {
	c.reserved, c.pending = stepOf(c.q.Admitted), stepOf(c.q.Pending)
	c.reservedH, c.pendingH = c.reserved.integral()/3600, c.pending.integral()/3600
	c.demand, c.demandH = c.pending, c.pendingH
	if waits, held := c.q.Waits(); len(held) > 0 {
		c.demand = stepOf(waits)
		c.demandH = c.demand.integral() / 3600
	}
	for _, s := range c.q.Pending {
		if s.Workload != "" { // the ledger's rows name none
			c.pendingWorkloads[s.Workload] = true
			c.longestS = max(c.longestS, s.EndS-s.StartS)
		}
	}
	if c.q.NominalGPUs != nil {
		h := *c.q.NominalGPUs * windowS / 3600
		c.nominalH = &h
	}
}

// figures are the queue's QueueFigures, its GPU-hours priced at its own
// workloads' mean price (fleetPrice where they held none).
func (c *queueAcc) figures(fleetPrice float64) QueueFigures {
	f := QueueFigures{Kind: c.q.Kind, Cohort: c.q.Cohort, Workloads: len(c.workloads) + c.counted, NominalGPUs: c.q.NominalGPUs, NominalGPUHours: sigP(c.nominalH),
		PendingGPUHours: sig(c.pendingH), HeldPendingGPUHours: sig(max(0, c.pendingH-c.demandH))}
	known := !c.q.WorkloadsUnknown
	if known {
		f.AllocatedGPUHours, f.UsedGPUHours, f.IdleHeldGPUHours = num(c.held), num(c.used), num(max(0, c.held-c.used))
		f.AllocatedUSD, f.UsedUSD, f.IdleHeldUSD = num(c.heldCost), num(c.usedCost), num(c.heldCost-c.usedCost)
	}
	if c.counted == 0 && known { // not the ledger's, and its spans name workloads
		n := len(c.pendingWorkloads)
		f.PendingWorkloads, f.LongestWaitS = &n, num(c.longestS)
	}
	price := fleetPrice
	if c.held > 0 {
		price = c.heldCost / c.held
	}
	f.USDPerGPUHour = sig(price)
	f.PendingUSD = sig(c.pendingH * price)
	if c.listed && len(c.q.Admitted) > 0 || c.reservedH > 0 {
		f.ReservedGPUHours, f.BorrowedGPUHours = num(c.reservedH), num(c.borrowedH)
		if c.q.NominalGPUs == nil {
			f.BorrowedGPUHours = nil
		}
		f.LentGPUHours = num(c.lentH)
	}
	if c.nominalH != nil {
		f.NominalUSD = num(sig(*c.nominalH * price))
		if *c.nominalH > 0 && known {
			f.HeldOfQuota = num(c.held / *c.nominalH)
		}
	}
	if c.held > 0 && known {
		f.Efficiency = num(c.used / c.held)
	}
	c.budget(&f)
	return f
}

// budget gives f the queue's budget figures (docs/queues.md, Budgets).
func (c *queueAcc) budget(f *QueueFigures) {
	if c.q.BudgetGPUMinutes == nil {
		return
	}
	h := *c.q.BudgetGPUMinutes / 60
	f.BudgetGPUHours = num(sig(h))
	if u := c.q.BudgetUse; u != nil {
		f.BudgetLeftGPUHours = num(sig(max(0, *c.q.BudgetGPUMinutes-u.UsedGPUMinutes-u.RunningGPUMinutes) / 60))
		if h > 0 {
			f.BudgetUsedPct = num(sig(100 * u.UsedGPUMinutes / *c.q.BudgetGPUMinutes))
		}
	}
	if h <= 0 {
		return
	}
	if f.ReservedGPUHours != nil {
		f.BudgetReservedPct = num(sig(100 * *f.ReservedGPUHours / h))
	}
	if f.IdleHeldGPUHours != nil {
		f.BudgetIdlePct = num(sig(100 * *f.IdleHeldGPUHours / h))
	}
}

// sigP is *p to 9 significant digits, null when p is.
func sigP(p *float64) *float64 {
	if p == nil {
		return nil
	}
	return num(*p)
}
