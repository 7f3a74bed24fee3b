package analyze

import (
	"fmt"
	"math"
	"sort"
)

// QuotaChange is one queue's quota right-sized from its measured use
// (docs/queues.md, What-if), and the window replayed with it: the pending
// GPU-hours that fit in the queue's unreserved quota as the reservations
// were, now and with the proposed quota.
type QuotaChange struct {
	Queue        string  `json:"queue"`
	Cohort       string  `json:"cohort,omitempty"`
	Kind         string  `json:"kind"`
	NominalGPUs  float64 `json:"nominal_gpus"`
	ProposedGPUs float64 `json:"proposed_gpus"`
	// Why says how the proposal was made.
	Why string `json:"why"`
	// PendingWithinQuota… are ∫ min(pending, max(0, quota − reserved)) dt
	// with the quota now and the proposed one.
	PendingWithinQuotaGPUHours         float64 `json:"pending_within_quota_gpu_hours"`
	ProposedPendingWithinQuotaGPUHours float64 `json:"proposed_pending_within_quota_gpu_hours"`
	// QuotaRef is where the source set the quota, for a patch.
	QuotaRef string `json:"quota_ref,omitempty"`
}

// ceilGPUs is x rounded up to a whole GPU (a float's noise below it
// ignored).
func ceilGPUs(x float64) float64 { return math.Ceil(x - 1e-9) }

// whatIf proposes each quota of a queue that did not wait: the Percentile
// of its used GPUs plus HeadroomPct, never below its peak use, rounded up,
// never above its quota now. The GPUs that frees in a cohort go to the
// cohort's queues that waited, the most pending GPU-hours first, each up
// to its peak waiting GPUs. Only changed quotas are listed.
func whatIf(figs map[string]QueueFigures, accs map[string]*queueAcc, cohorts map[string][]*queueAcc, qp QueueParams) []QuotaChange {
	var out []QuotaChange
	for _, members := range cohorts {
		proposed := map[*queueAcc]float64{}
		why := map[*queueAcc]string{}
		freed := 0.0
		for _, c := range members {
			f := figs[c.q.Name]
			if c.q.NominalGPUs == nil || c.demandH > 0 || f.UsedGPUsPercentile == nil {
				continue
			}
			n, largest := *c.q.NominalGPUs, c.largestReservation()
			target := min(n, max(ceilGPUs(*f.UsedGPUsPercentile*(1+qp.HeadroomPct/100)), ceilGPUs(c.peakUsed), ceilGPUs(largest)))
			if target < n {
				proposed[c], freed = target, freed+n-target
				why[c] = fmt.Sprintf("p%g of its used GPUs %.2f + %g %% headroom; peak used %.2f; largest workload %g GPUs", qp.Percentile, *f.UsedGPUsPercentile, qp.HeadroomPct, c.peakUsed, largest)
			}
		}
		waiting := waitingMembers(members)
		for _, c := range waiting {
			if freed <= 0 || c.q.NominalGPUs == nil || len(members) < 2 {
				break
			}
			add := min(freed, ceilGPUs(c.shortfall(*c.q.NominalGPUs)))
			if add <= 0 {
				continue // its waits fit in its own quota: quota was not what held them
			}
			proposed[c], freed = *c.q.NominalGPUs+add, freed-add
			why[c] = fmt.Sprintf("%.2f pending GPU-hours beyond its unreserved quota: %g of the GPUs the cohort's right-sizing frees", c.demandH, add)
		}
		for c, p := range proposed {
			out = append(out, QuotaChange{Queue: c.q.Name, Cohort: c.q.Cohort, Kind: c.q.Kind, NominalGPUs: *c.q.NominalGPUs, ProposedGPUs: p, Why: why[c],
				PendingWithinQuotaGPUHours: sig(withinQuota(c, *c.q.NominalGPUs) / 3600), ProposedPendingWithinQuotaGPUHours: sig(withinQuota(c, p) / 3600), QuotaRef: c.q.QuotaRef})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Queue < out[j].Queue })
	return out
}

// waitingMembers are the members that waited, the most pending
// GPU-hours first.
func waitingMembers(members []*queueAcc) []*queueAcc {
	var out []*queueAcc
	for _, c := range members {
		if c.demandH > 0 {
			out = append(out, c)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].demandH > out[j].demandH })
	return out
}

// shortfall is the most GPUs the queue's workloads waited for beyond its
// unreserved quota at once: max over t of pending(t) − max(0, quota −
// reserved(t)).
func (c *queueAcc) shortfall(quota float64) float64 {
	most := 0.0
	stretches(func(_ float64, v []float64) { most = max(most, v[0]-max(0, quota-v[1])) }, c.demand, c.reserved)
	return most
}

// largestReservation is the most GPUs one of its workloads reserved: a
// quota below it could never admit that workload.
func (c *queueAcc) largestReservation() float64 {
	most := c.largest
	for _, s := range c.q.Admitted {
		if s.Workload != "" { // not a ledger's hourly mean
			most = max(most, s.GPUs)
		}
	}
	return most
}

// withinQuota is ∫ min(pending(t), max(0, quota − reserved(t))) dt: the
// waiting GPU-seconds the queue's own unreserved quota could have held.
func withinQuota(c *queueAcc, quota float64) float64 {
	sum := 0.0
	stretches(func(dt float64, v []float64) { sum += min(v[0], max(0, quota-v[1])) * dt }, c.demand, c.reserved)
	return sum
}
