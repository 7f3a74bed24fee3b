package analyze

import (
	"math"
	"sort"

	"github.com/seedance/seedance/profile"
)

// MaxQueueBuckets bounds the buckets of a queue's timeline: a longer
// window gets wider buckets than the sampling interval.
const MaxQueueBuckets = 10_000

// queueTimes are each queue's GPU-seconds held and used in each bucket of
// the window, split among a GPU's holders exactly as attribution splits
// them (analysis.share) bucket by bucket.
type queueTimes struct {
	bucketS    float64
	n          int
	held, used map[string][]float64
}

// queueTimelines splits every GPU's time by bucket among its holders and
// sums it by their queues.
func (a *analysis) queueTimelines(samplingS float64) *queueTimes {
	bucketS := max(samplingS, a.windowS/MaxQueueBuckets)
	qt := &queueTimes{bucketS: bucketS, n: int(math.Ceil(a.windowS/bucketS - 1e-9)), held: map[string][]float64{}, used: map[string][]float64{}}
	for _, n := range a.order {
		for _, g := range n.gpus {
			if g.share == 0 {
				continue
			}
			holders := holdersOf(n, g)
			queued := false
			for _, w := range holders {
				queued = queued || w.Queue != ""
			}
			if !queued {
				continue
			}
			held, used := make([][]float64, len(holders)), make([][]float64, len(holders)) // each holder's queue's series
			bucketSplits(g, holders, a.tenures(n, holders), bucketS, qt.n, a.windowS, true, func(b int, sp split) {
				shareSplit(g, holders, sp, func(i int, t gpuTime, w float64, _ basis) {
					if i < 0 || holders[i].Queue == "" {
						return
					}
					if held[i] == nil {
						held[i], used[i] = qt.series(holders[i].Queue)
					}
					held[i][b] += t.observedS * g.share * w
					used[i][b] += t.utilSum / 100 * g.share * w
				})
			})
		}
	}
	return qt
}

// series is queue q's series of held and used GPU-seconds, made when
// first asked for.
func (qt *queueTimes) series(q string) (held, used []float64) {
	if qt.held[q] == nil {
		qt.held[q], qt.used[q] = make([]float64, qt.n), make([]float64, qt.n)
	}
	return qt.held[q], qt.used[q]
}

// width is bucket b's length in a window windowS long.
func (qt *queueTimes) width(b int, windowS float64) float64 {
	return min(windowS, float64(b+1)*qt.bucketS) - float64(b)*qt.bucketS
}

// gpus is a series of GPU-seconds per bucket as GPUs (÷ the bucket's
// length).
func (qt *queueTimes) gpus(s []float64, windowS float64) []float64 {
	out := make([]float64, len(s))
	for b, v := range s {
		out[b] = v / qt.width(b, windowS)
	}
	return out
}

// nearestRank is the nearest-rank p-th percentile of xs (0 < p ≤ 100),
// unrounded.
func nearestRank(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	k := int(math.Ceil(p/100*float64(len(s)) - 1e-9))
	return s[max(0, min(len(s), k)-1)]
}

// decayed is the series folded as Kueue's admission fair sharing folds a
// LocalQueue's usage at each sampling tick (kubernetes-sigs/kueue
// v0.19.2, pkg/util/admissionfairsharing: CalculateDecayedConsumed):
// c ← c × (1 − α) + x × α, α = 1 − 0.5^(elapsed ÷ half-life), from 0 at
// the window's start.
func decayed(xs []float64, widths func(int) float64, halfLifeS float64) float64 {
	c := 0.0
	for b, x := range xs {
		alpha := 1.0
		if halfLifeS > 0 {
			alpha = 1 - math.Pow(0.5, widths(b)/halfLifeS)
		}
		c = c*(1-alpha) + x*alpha
	}
	return c
}

// sampled is the step function's mean over each bucket: GPUs.
func (qt *queueTimes) sampled(f step, windowS float64) []float64 {
	out := make([]float64, qt.n)
	for b := range qt.n {
		out[b] = f.between(float64(b)*qt.bucketS, min(windowS, float64(b+1)*qt.bucketS)) / qt.width(b, windowS)
	}
	return out
}

// QueueCut is a queue in one piece of a cut analysis: its quota, and the
// GPU-seconds its workloads reserved and waited for in the piece (the
// ledger's rows of queues; what they held and used is in the holds).
type QueueCut struct {
	Piece                         int
	Queue, Kind, Cohort, QuotaRef string
	NominalGPUs, BudgetGPUMinutes *float64
	LendingLimitGPUs              *float64
	BudgetUse                     *profile.BudgetUse
	ReservedS, PendingS           float64
	// HeldPendingS is the part of PendingS the workloads' own limits or
	// holds kept waiting (QueueSpan.HeldBy).
	HeldPendingS float64
	// LargestGPUs is the most GPUs one workload reserved in the piece.
	LargestGPUs float64
	// WorkloadsUnknown is profile.Queue's.
	WorkloadsUnknown bool
}

// queueSteps are a queue's reservations, waits and held waits as step
// functions, made once for all the pieces of a cut.
type queueSteps struct {
	q                       *profile.Queue
	reserved, pending, held step
}

// queueSteps are the steps of every queue of the analysis.
func (a *analysis) queueSteps() []queueSteps {
	out := make([]queueSteps, len(a.queueList))
	for i := range a.queueList {
		q := &a.queueList[i]
		_, held := q.Waits()
		out[i] = queueSteps{q, stepOf(q.Admitted), stepOf(q.Pending), stepOf(held)}
	}
	return out
}

// cutQueues adds the queues' rows of the piece [lo, hi).
func cutQueues(c *Cuts, qs []queueSteps, piece int, lo, hi float64) {
	for _, s := range qs {
		q := s.q
		largest := 0.0
		for _, r := range q.Admitted {
			if r.StartS < hi && r.EndS > lo {
				largest = max(largest, r.GPUs)
			}
		}
		c.Queues = append(c.Queues, QueueCut{Piece: piece, Queue: q.Name, Kind: q.Kind, Cohort: q.Cohort, QuotaRef: q.QuotaRef, NominalGPUs: q.NominalGPUs,
			BudgetGPUMinutes: q.BudgetGPUMinutes, LendingLimitGPUs: q.LendingLimitGPUs, BudgetUse: q.BudgetUse, ReservedS: s.reserved.between(lo, hi),
			PendingS: s.pending.between(lo, hi), LargestGPUs: largest, WorkloadsUnknown: q.WorkloadsUnknown, HeldPendingS: s.held.between(lo, hi)})
	}
}
