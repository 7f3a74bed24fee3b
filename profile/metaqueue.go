package profile

// A profile's queues (format v1.3) read with the scanner, as encoding/json
// would read them into []Queue (FuzzStreamAgreesWithRead): a fleet's
// queues carry a span per reservation and wait, tens of thousands of
// them, which encoding/json's reflection read at a fifth of the speed.

// queues reads the header's queues into dst (null: none).
func (r metaReader) queues(dst *[]Queue) error { return listOf(r, dst, r.queue) }

func (r metaReader) queue(q *Queue) error {
	return r.object(func(key string) error {
		switch key {
		case "name":
			return r.sc.String(&q.Name)
		case "kind":
			return r.sc.String(&q.Kind)
		case "cohort":
			return r.sc.String(&q.Cohort)
		case "quota_ref":
			return r.sc.String(&q.QuotaRef)
		case "nominal_gpus":
			return optional(r, &q.NominalGPUs, r.sc.Float)
		case "borrowing_limit_gpus":
			return optional(r, &q.BorrowingLimitGPUs, r.sc.Float)
		case "lending_limit_gpus":
			return optional(r, &q.LendingLimitGPUs, r.sc.Float)
		case "budget_gpu_minutes":
			return optional(r, &q.BudgetGPUMinutes, r.sc.Float)
		case "budget_use":
			return optional(r, &q.BudgetUse, r.budgetUse)
		case "flavors":
			return listOf(r, &q.Flavors, r.sc.String)
		case "admitted":
			return listOf(r, &q.Admitted, r.queueSpan)
		case "pending":
			return listOf(r, &q.Pending, r.queueSpan)
		case "workloads_unknown":
			return r.sc.Bool(&q.WorkloadsUnknown)
		}
		return r.sc.Skip()
	})
}

func (r metaReader) budgetUse(u *BudgetUse) error {
	return r.object(func(key string) error {
		switch key {
		case "used_gpu_minutes":
			return r.sc.Float(&u.UsedGPUMinutes)
		case "running_gpu_minutes":
			return r.sc.Float(&u.RunningGPUMinutes)
		}
		return r.sc.Skip()
	})
}

func (r metaReader) queueSpan(s *QueueSpan) error {
	return r.object(func(key string) error {
		switch key {
		case "workload":
			return r.sc.String(&s.Workload)
		case "gpus":
			return r.sc.Float(&s.GPUs)
		case "start_s":
			return r.sc.Float(&s.StartS)
		case "end_s":
			return r.sc.Float(&s.EndS)
		case "held_by":
			return r.sc.String(&s.HeldBy)
		}
		return r.sc.Skip()
	})
}
