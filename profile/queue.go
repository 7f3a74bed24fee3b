package profile

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"time"
)

// Queue is a queue or account of a scheduler that holds GPU quota (v1.3;
// docs/queues.md): a Kueue ClusterQueue, a Slurm account. Workloads name
// it by Workload.Queue. What the source read is the structure as it was
// when read (quota) and what its workloads reserved and waited for in the
// window (Admitted, Pending).
type Queue struct {
	// Name is how workloads name it: a ClusterQueue's name, a Slurm
	// account's.
	Name string `json:"name"`
	// Kind is QueueKueue, QueueSlurmAccount or QueueSlurmQOS (or another
	// scheduler's).
	Kind string `json:"kind"`
	// Cohort is the group it borrows from and lends to: a Kueue cohort,
	// a Slurm account's parent. "" when none.
	Cohort string `json:"cohort,omitempty"`
	// NominalGPUs is its GPU quota, summed over its flavors (Kueue's
	// nominalQuota of nvidia.com/gpu and kin); null when it has none the
	// source could read.
	NominalGPUs *float64 `json:"nominal_gpus,omitempty"`
	// BorrowingLimitGPUs and LendingLimitGPUs are Kueue's limits, summed
	// over flavors; null: no limit set.
	BorrowingLimitGPUs *float64 `json:"borrowing_limit_gpus,omitempty"`
	LendingLimitGPUs   *float64 `json:"lending_limit_gpus,omitempty"`
	// BudgetGPUMinutes is a GPU-minute budget: Slurm's GrpTRESMins
	// gres/gpu of the account (what its jobs may use before Slurm holds
	// them, against usage it decays); null: none.
	BudgetGPUMinutes *float64 `json:"budget_gpu_minutes,omitempty"`
	// BudgetUse is what Slurm counted against that budget when it was
	// read; null: not read (no budget, or Slurm counts none).
	BudgetUse *BudgetUse `json:"budget_use,omitempty"`
	// Flavors are the flavors its GPU quota is in.
	Flavors []string `json:"flavors,omitempty"`
	// QuotaRef says where the source set the GPU quota, for a patch of
	// it: Kueue's JSON pointer to the one nominalQuota of a GPU resource
	// (/spec/resourceGroups/0/flavors/0/resources/1/nominalQuota); ""
	// when the quota is spread over several.
	QuotaRef string `json:"quota_ref,omitempty"`
	// Admitted are its workloads' quota reservations in the window, and
	// Pending the times they waited for one.
	Admitted []QueueSpan `json:"admitted,omitempty"`
	Pending  []QueueSpan `json:"pending,omitempty"`
	// WorkloadsUnknown says that the source read the queue's own figures
	// (quota, reservations, waits) but not which workloads it admitted:
	// Kueue's metrics without the API server. Its spans then name no
	// workload, and what its workloads held and used is unknown.
	WorkloadsUnknown bool `json:"workloads_unknown,omitempty"`
}

// BudgetUse is what Slurm counts against an account's GPU-minute budget
// (GrpTRESMins gres/gpu) when it decides whether to start its next job
// (docs/queues.md, Budgets): sshare's GrpTRESRaw and TRESRunMins of
// gres/gpu, in GPU-minutes.
type BudgetUse struct {
	// UsedGPUMinutes is the account's GPU usage so far, as Slurm's
	// priority/multifactor plugin decays it (PriorityDecayHalfLife).
	UsedGPUMinutes float64 `json:"used_gpu_minutes"`
	// RunningGPUMinutes is what its running jobs still hold to their
	// time limits: GPUs × time left.
	RunningGPUMinutes float64 `json:"running_gpu_minutes"`
}

// Waits splits the queue's waits into those for GPUs and those its
// workloads' own limits or holds kept (QueueSpan.HeldBy).
func (q Queue) Waits() (forGPUs, held []QueueSpan) {
	for _, s := range q.Pending {
		if s.HeldBy == "" {
			forGPUs = append(forGPUs, s)
		} else {
			held = append(held, s)
		}
	}
	return forGPUs, held
}

// QueueSpan is one workload's reservation of (or wait for) GPUs of a
// queue, from StartS to EndS in seconds from started_at.
type QueueSpan struct {
	Workload string  `json:"workload"`
	GPUs     float64 `json:"gpus"`
	StartS   float64 `json:"start_s"`
	EndS     float64 `json:"end_s"`
	// HeldBy, on a wait, is the scheduler's reason when the workload's
	// own limits or holds kept it waiting, not a want of GPUs (Slurm's
	// QOSMaxGRESPerUser, AssocGrpGRESMinutes): a wait no other queue's
	// idle quota could have ended. "" for a wait for GPUs.
	HeldBy string `json:"held_by,omitempty"`
}

// Queue kinds.
const (
	QueueKueue        = "kueue"
	QueueSlurmAccount = "slurm-account"
	QueueSlurmQOS     = "slurm-qos"
)

// MaxQueues bounds a profile's queues, and MaxQueueSpans each queue's
// reservations and waits.
const (
	MaxQueues     = 4096
	MaxQueueSpans = 100_000
)

// checkQueues checks the queues' fields: a name given once, finite
// non-negative quotas, spans that are finite, ordered and within the
// bounds.
func checkQueues(qs []Queue) error {
	if len(qs) > MaxQueues {
		return fmt.Errorf("%w: %d queues, more than %d", ErrInvalid, len(qs), MaxQueues)
	}
	seen := make(map[string]bool, len(qs))
	for i, q := range qs {
		if q.Name == "" || len(q.Name) > MaxNameBytes || q.Kind == "" {
			return fmt.Errorf("%w: queues[%d]: a name of 1–%d bytes and a kind are required", ErrInvalid, i, MaxNameBytes)
		}
		if seen[q.Name] {
			return fmt.Errorf("%w: queues[%d]: queue %q appears twice", ErrInvalid, i, short(q.Name))
		}
		seen[q.Name] = true
		for _, v := range []*float64{q.NominalGPUs, q.BorrowingLimitGPUs, q.LendingLimitGPUs} {
			if v != nil && !(*v >= 0 && *v <= 1e9) {
				return fmt.Errorf("%w: queue %q: a quota of %v GPUs is outside 0–1e9", ErrInvalid, short(q.Name), *v)
			}
		}
		if v := q.BudgetGPUMinutes; v != nil && !(*v >= 0 && *v <= 1e15) {
			return fmt.Errorf("%w: queue %q: a budget of %v GPU-minutes is outside 0–1e15", ErrInvalid, short(q.Name), *v)
		}
		if u := q.BudgetUse; u != nil && !(u.UsedGPUMinutes >= 0 && u.UsedGPUMinutes <= 1e15 && u.RunningGPUMinutes >= 0 && u.RunningGPUMinutes <= 1e15) {
			return fmt.Errorf("%w: queue %q: a budget use of %v and %v GPU-minutes is outside 0–1e15", ErrInvalid, short(q.Name), u.UsedGPUMinutes, u.RunningGPUMinutes)
		}
		if len(q.Admitted)+len(q.Pending) > MaxQueueSpans {
			return fmt.Errorf("%w: queue %q: more than %d reservations and waits", ErrInvalid, short(q.Name), MaxQueueSpans)
		}
		for _, ss := range [][]QueueSpan{q.Admitted, q.Pending} {
			for _, s := range ss {
				if err := s.check(); err != nil {
					return fmt.Errorf("%w: queue %q: workload %q: %v", ErrInvalid, short(q.Name), short(s.Workload), err)
				}
			}
		}
	}
	return nil
}

func (s QueueSpan) check() error {
	finite := !math.IsNaN(s.StartS) && !math.IsInf(s.StartS, 0) && !math.IsNaN(s.EndS) && !math.IsInf(s.EndS, 0)
	switch {
	case !finite || s.EndS < s.StartS:
		return fmt.Errorf("a span %v–%v s is not finite and ordered", s.StartS, s.EndS)
	case !(s.GPUs > 0 && s.GPUs <= MaxGPUsPerNode*1e4):
		return fmt.Errorf("%v GPUs is not a positive count", s.GPUs)
	case len(s.HeldBy) > MaxNameBytes:
		return fmt.Errorf("a reason longer than %d bytes", MaxNameBytes)
	}
	return nil
}

// ShiftQueues gives qs with their spans moved by d seconds (a profile
// read into a window that starts d seconds before it), clipped to
// [0, spanS]; a span left empty goes.
func ShiftQueues(qs []Queue, d, spanS float64) []Queue {
	out := make([]Queue, len(qs))
	for i, q := range qs {
		out[i] = q
		out[i].Admitted, out[i].Pending = shiftSpans(q.Admitted, d, spanS), shiftSpans(q.Pending, d, spanS)
	}
	return out
}

// joinQueues is p's queues in a join that starts at start (Unix ms) and
// ends at to.
func joinQueues(p *Profile, start float64, to time.Time) []Queue {
	if p == nil || len(p.Queues) == 0 {
		return nil
	}
	return ShiftQueues(p.Queues, (float64(p.StartedAt.UnixMilli())-start)/1000, (float64(to.UnixMilli())-start)/1000)
}

func shiftSpans(ss []QueueSpan, d, spanS float64) []QueueSpan {
	var out []QueueSpan
	for _, s := range ss {
		s.StartS, s.EndS = max(0, s.StartS+d), min(spanS, s.EndS+d)
		if s.EndS > s.StartS {
			out = append(out, s)
		}
	}
	return out
}

// MergeQueues adds b's queues to a's (a is not changed): a queue in both
// takes b's quota, kind and cohort (the later read) and the union of the
// two's spans, workload by workload, so that inputs that overlap count a
// reservation once.
func MergeQueues(a, b []Queue) []Queue {
	out := slices.Clone(a)
	at := make(map[string]int, len(out))
	for i, q := range out {
		at[q.Name] = i
	}
	for _, q := range b {
		i, ok := at[q.Name]
		if !ok {
			at[q.Name] = len(out)
			out = append(out, q)
			continue
		}
		old := out[i]
		out[i] = q
		out[i].Admitted, out[i].Pending = unionSpans(old.Admitted, q.Admitted), unionSpans(old.Pending, q.Pending)
		out[i].WorkloadsUnknown = old.WorkloadsUnknown || q.WorkloadsUnknown
	}
	return out
}

// unionSpans is the spans of a and b, those of one workload and as many
// GPUs that overlap or meet joined into one, sorted by workload and start.
func unionSpans(a, b []QueueSpan) []QueueSpan {
	all := append(slices.Clone(a), b...)
	sort.Slice(all, func(i, j int) bool {
		x, y := all[i], all[j]
		if x.Workload != y.Workload {
			return x.Workload < y.Workload
		}
		if x.GPUs != y.GPUs {
			return x.GPUs < y.GPUs
		}
		return x.StartS < y.StartS
	})
	var out []QueueSpan
	for _, s := range all {
		if k := len(out) - 1; k >= 0 && out[k].Workload == s.Workload && out[k].GPUs == s.GPUs && s.StartS <= out[k].EndS {
			out[k].EndS = max(out[k].EndS, s.EndS)
			continue
		}
		out = append(out, s)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Workload < out[j].Workload })
	return out
}
