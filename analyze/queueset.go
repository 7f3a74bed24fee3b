package analyze

import "github.com/seedance/seedance/profile"

// QueueSections are the queue figures of a window: each queue's and
// cohort's, the hoarding verdict and the quota what-if (docs/queues.md).
type QueueSections struct {
	Queues, Cohorts map[string]QueueFigures
	Hoarding        []Hoarding
	WhatIf          []QuotaChange
}

// queueSet is the queues' accumulators, in the order first seen.
type queueSet struct {
	accs  map[string]*queueAcc
	order []string
}

// newQueueSet starts a set with the listed queues.
func newQueueSet(listed []profile.Queue) *queueSet {
	s := &queueSet{accs: map[string]*queueAcc{}}
	for _, q := range listed {
		acc := s.get(q.Name)
		acc.q, acc.listed = q, true
	}
	return s
}

func (s *queueSet) get(name string) *queueAcc {
	if s.accs[name] == nil {
		s.accs[name] = &queueAcc{q: profile.Queue{Name: name}, workloads: map[string]bool{}, pendingWorkloads: map[string]bool{}}
		s.order = append(s.order, name)
	}
	return s.accs[name]
}

// sections makes the figures of the set's accumulators, their timelines
// qt.
func (s *queueSet) sections(windowS, fleetPrice float64, qt *queueTimes, qp QueueParams) QueueSections {
	for _, name := range s.order {
		s.accs[name].spans(windowS)
	}
	cohorts := cohortsOf(s.accs, s.order)
	for _, members := range cohorts {
		borrowLend(members)
	}
	out := QueueSections{Queues: map[string]QueueFigures{}}
	for _, name := range s.order {
		f := s.accs[name].figures(fleetPrice)
		s.accs[name].timeline(&f, qt, windowS, qp)
		out.Queues[name] = f
	}
	out.Hoarding = hoarding(out.Queues, s.accs, cohorts, qp)
	out.Cohorts = cohortFigures(out.Queues, cohorts)
	out.WhatIf = whatIf(out.Queues, s.accs, cohorts, qp)
	return out
}

// QueueRow is one queue in one bucket of a span the ledger kept: the
// bucket's index from the span's start, the queue's quota, the
// GPU-seconds its workloads reserved, waited for, held and used, and what
// those held and used cost.
type QueueRow struct {
	Bucket                                          int
	Queue, Kind, Cohort, QuotaRef                   string
	NominalGPUs, BudgetGPUMinutes, LendingLimitGPUs *float64
	BudgetUse                                       *profile.BudgetUse
	// WorkloadsUnknown: the source did not say which workloads the queue
	// admitted (profile.Queue.WorkloadsUnknown).
	WorkloadsUnknown                                    bool
	ReservedS, PendingS, HeldS, UsedS, HeldUSD, UsedUSD float64
	// HeldPendingS is the part of PendingS that the workloads' own limits
	// or holds kept waiting.
	HeldPendingS float64
	// LargestGPUs is the most GPUs one workload reserved in the bucket.
	LargestGPUs float64
}

// QueuesOf are the queue figures of n buckets of bucketS seconds kept as
// rows (the ledger's), by the analysis' own arithmetic: each bucket's
// reservations and waits are taken as their mean over it, so that
// borrowed, lent and contested GPU-hours are of hourly means (docs/queues.md,
// Over time). workloads counts each queue's workloads; fleetPrice prices a
// queue that held nothing.
func QueuesOf(rows []QueueRow, n int, bucketS float64, workloads map[string]int, fleetPrice float64, qp QueueParams) QueueSections {
	s := &queueSet{accs: map[string]*queueAcc{}}
	windowS := float64(n) * bucketS
	qt := &queueTimes{bucketS: bucketS, n: n, held: map[string][]float64{}, used: map[string][]float64{}}
	for _, r := range rows {
		acc := s.get(r.Queue)
		if r.Kind != "" { // the latest bucket's quota and cohort
			acc.q.Kind, acc.q.Cohort, acc.q.NominalGPUs, acc.q.QuotaRef, acc.listed = r.Kind, r.Cohort, r.NominalGPUs, r.QuotaRef, true
			acc.q.BudgetGPUMinutes, acc.q.LendingLimitGPUs, acc.q.BudgetUse = r.BudgetGPUMinutes, r.LendingLimitGPUs, r.BudgetUse
		}
		acc.q.WorkloadsUnknown = acc.q.WorkloadsUnknown || r.WorkloadsUnknown
		acc.largest = max(acc.largest, r.LargestGPUs)
		lo, hi := float64(r.Bucket)*bucketS, float64(r.Bucket+1)*bucketS
		if r.ReservedS > 0 {
			acc.q.Admitted = append(acc.q.Admitted, profile.QueueSpan{Workload: "", GPUs: r.ReservedS / bucketS, StartS: lo, EndS: hi})
		}
		if w := r.PendingS - r.HeldPendingS; w > 0 {
			acc.q.Pending = append(acc.q.Pending, profile.QueueSpan{Workload: "", GPUs: w / bucketS, StartS: lo, EndS: hi})
		}
		if r.HeldPendingS > 0 { // the rows keep no reason
			acc.q.Pending = append(acc.q.Pending, profile.QueueSpan{Workload: "", GPUs: r.HeldPendingS / bucketS, StartS: lo, EndS: hi, HeldBy: "held"})
		}
		acc.held, acc.used, acc.heldCost, acc.usedCost = acc.held+r.HeldS/3600, acc.used+r.UsedS/3600, acc.heldCost+r.HeldUSD, acc.usedCost+r.UsedUSD
		if r.Bucket >= 0 && r.Bucket < n {
			qt.series(r.Queue)
			qt.held[r.Queue][r.Bucket] += r.HeldS
			qt.used[r.Queue][r.Bucket] += r.UsedS
		}
	}
	for name, k := range workloads {
		s.get(name).counted = k
	}
	return s.sections(windowS, fleetPrice, qt, qp)
}

// timeline adds the figures of the queue's timeline to f.
func (c *queueAcc) timeline(f *QueueFigures, qt *queueTimes, windowS float64, qp QueueParams) {
	width := func(b int) float64 { return qt.width(b, windowS) }
	used := qt.gpus(qt.used[c.q.Name], windowS)
	if qt.used[c.q.Name] == nil {
		used = make([]float64, qt.n) // it held nothing
	}
	peak := 0.0
	for _, u := range used {
		peak = max(peak, u)
	}
	c.peakUsed = peak
	if !c.q.WorkloadsUnknown {
		f.UsedGPUsPercentile, f.PeakUsedGPUs = num(nearestRank(used, qp.Percentile)), num(peak)
		f.DecayedUsedGPUs = num(decayed(used, width, qp.HalfLifeS))
	}
	if f.ReservedGPUHours != nil {
		f.DecayedReservedGPUs = num(decayed(qt.sampled(c.reserved, windowS), width, qp.HalfLifeS))
	}
}
