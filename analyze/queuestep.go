package analyze

import (
	"sort"

	"github.com/seedance/seedance/profile"
)

// step is a step function of time: v[i] GPUs on [t[i], t[i+1]), 0 before
// t[0] and from the last t on (docs/queues.md).
type step struct{ t, v []float64 }

// stepOf is the GPUs that the spans hold at each time: their sum.
func stepOf(spans []profile.QueueSpan) step {
	type ev struct{ t, d float64 }
	evs := make([]ev, 0, 2*len(spans))
	for _, s := range spans {
		if s.EndS > s.StartS {
			evs = append(evs, ev{s.StartS, s.GPUs}, ev{s.EndS, -s.GPUs})
		}
	}
	sort.Slice(evs, func(i, j int) bool { return evs[i].t < evs[j].t })
	var out step
	level := 0.0
	for i, e := range evs {
		level += e.d
		if i+1 < len(evs) && evs[i+1].t == e.t {
			continue // the same time: one step
		}
		if len(out.t) > 0 && out.t[len(out.t)-1] == e.t {
			out.v[len(out.v)-1] = level
			continue
		}
		out.t, out.v = append(out.t, e.t), append(out.v, max(0, level))
	}
	return out
}

// integral is the function's GPU-seconds.
func (s step) integral() float64 {
	sum := 0.0
	for i := 0; i+1 < len(s.t); i++ {
		sum += s.v[i] * (s.t[i+1] - s.t[i])
	}
	return sum
}

// between is the function's integral over [lo, hi).
func (s step) between(lo, hi float64) float64 {
	i := sort.Search(len(s.t), func(i int) bool { return s.t[i] > lo }) // the first step after lo
	sum, from := 0.0, lo
	v := 0.0
	if i > 0 {
		v = s.v[i-1]
	}
	for ; i < len(s.t) && s.t[i] < hi; i++ {
		sum += v * (s.t[i] - from)
		from, v = s.t[i], s.v[i]
	}
	return sum + v*(hi-from)
}

// at is the value at t for a walk in ascending t, *i its position.
func (s step) at(i *int, t float64) float64 {
	for *i < len(s.t) && s.t[*i] <= t {
		*i++
	}
	if *i == 0 {
		return 0
	}
	return s.v[*i-1]
}

// breaks are the sorted distinct times where any of the functions steps.
func breaks(fs ...step) []float64 {
	var ts []float64
	for _, f := range fs {
		ts = append(ts, f.t...)
	}
	sort.Float64s(ts)
	out := ts[:0]
	for i, t := range ts {
		if i == 0 || t != ts[i-1] {
			out = append(out, t)
		}
	}
	return out
}

// stretches calls fn for each stretch of dt seconds between two
// consecutive steps of any of the functions, with each one's value in it
// (v[i] of fs[i]; v is reused from call to call).
func stretches(fn func(dt float64, v []float64), fs ...step) {
	ts := breaks(fs...)
	pos, v := make([]int, len(fs)), make([]float64, len(fs))
	for k := 0; k+1 < len(ts); k++ {
		for i, f := range fs {
			v[i] = f.at(&pos[i], ts[k])
		}
		fn(ts[k+1]-ts[k], v)
	}
}

// cohortsOf groups the queues by cohort, each group's members in order;
// a queue of no cohort is alone in its group.
func cohortsOf(accs map[string]*queueAcc, order []string) map[string][]*queueAcc {
	out := map[string][]*queueAcc{}
	for _, name := range order {
		c := accs[name]
		key := "\x00" + name
		if c.q.Cohort != "" {
			key = c.q.Cohort
		}
		out[key] = append(out[key], c)
	}
	return out
}

// borrowLend integrates each member's borrowed GPU-hours (its
// reservations above its quota) and lent GPU-hours: at each time the
// cohort's borrowed GPUs, up to its members' unreserved quota, shared
// among the lenders in proportion to their unreserved quota. A member
// without a known quota neither borrows nor lends.
func borrowLend(members []*queueAcc) {
	fs := make([]step, len(members))
	for i, m := range members {
		fs[i] = m.reserved
	}
	borrowed, unused := make([]float64, len(members)), make([]float64, len(members))
	stretches(func(dt float64, reserved []float64) {
		var sumB, sumU float64
		for i, m := range members {
			borrowed[i], unused[i] = 0, 0
			if m.q.NominalGPUs != nil {
				borrowed[i], unused[i] = max(0, reserved[i]-*m.q.NominalGPUs), max(0, *m.q.NominalGPUs-reserved[i])
				if l := m.q.LendingLimitGPUs; l != nil { // it lends no more of its unreserved quota than its lending limit
					unused[i] = min(unused[i], *l)
				}
			}
			sumB, sumU = sumB+borrowed[i], sumU+unused[i]
		}
		lent := min(sumB, sumU)
		for i, m := range members {
			m.borrowedH += borrowed[i] * dt / 3600
			if sumU > 0 {
				m.lentH += lent * unused[i] / sumU * dt / 3600
			}
		}
	}, fs...)
}

// hoarding gives the verdict on each queue (QueueParams) and ranks those
// it names by the dollars of idle-held quota others waited for.
func hoarding(figs map[string]QueueFigures, accs map[string]*queueAcc, cohorts map[string][]*queueAcc, qp QueueParams) []Hoarding {
	out := []Hoarding{}
	for name, c := range accs {
		f := figs[name]
		if f.HeldOfQuota == nil || f.Efficiency == nil || *f.HeldOfQuota < qp.HeldPct/100 || *f.Efficiency >= qp.UsedPct/100 {
			continue
		}
		var waits []profile.QueueSpan
		var waiting []string
		for _, p := range peersOf(c, accs, cohorts) {
			if p.demandH > 0 {
				forGPUs, _ := p.q.Waits()
				waits = append(waits, forGPUs...)
				waiting = append(waiting, p.q.Name)
			}
		}
		if len(waiting) == 0 {
			continue
		}
		sort.Strings(waiting)
		h := Hoarding{Queue: name, Cohort: c.q.Cohort, Waiting: waiting, HeldOfQuota: *f.HeldOfQuota, Efficiency: *f.Efficiency}
		if len(c.q.Admitted) > 0 {
			gpuH := contested(c.reserved, stepOf(waits), 1-*f.Efficiency) / 3600
			h.ContestedGPUHours, h.ContestedUSD = num(gpuH), num(gpuH*f.USDPerGPUHour)
		}
		f.Hoarding, f.ContestedGPUHours, f.ContestedUSD = true, h.ContestedGPUHours, h.ContestedUSD
		figs[name] = f
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].ContestedUSD, out[j].ContestedUSD
		if (a == nil) != (b == nil) {
			return a != nil
		}
		if a != nil && *a != *b {
			return *a > *b
		}
		return out[i].Queue < out[j].Queue
	})
	return out
}

// peersOf are the queues of c's cohort but c, or of the cluster when c
// has none.
func peersOf(c *queueAcc, accs map[string]*queueAcc, cohorts map[string][]*queueAcc) []*queueAcc {
	var out []*queueAcc
	if c.q.Cohort != "" {
		for _, m := range cohorts[c.q.Cohort] {
			if m != c {
				out = append(out, m)
			}
		}
		return out
	}
	for _, m := range accs {
		if m != c {
			out = append(out, m)
		}
	}
	return out
}

// contested is the GPU-seconds of reserved quota held idle (reserved ×
// unused, the queue's window share of it idle) while others waited for
// as many GPUs: ∫ min(reserved(t) × unused, waiting(t)) dt.
func contested(reserved, waiting step, unused float64) float64 {
	sum := 0.0
	stretches(func(dt float64, v []float64) { sum += min(v[0]*unused, v[1]) * dt }, reserved, waiting)
	return sum
}

// cohortFigures sums each named cohort's members: a quota null when any
// member's is.
func cohortFigures(queues map[string]QueueFigures, cohorts map[string][]*queueAcc) map[string]QueueFigures {
	out := map[string]QueueFigures{}
	for name, members := range cohorts {
		if len(name) > 0 && name[0] == 0 {
			continue
		}
		var c QueueFigures
		for i, m := range members {
			f := queues[m.q.Name]
			c.Workloads += f.Workloads
			c.PendingGPUHours += f.PendingGPUHours
			c.HeldPendingGPUHours += f.HeldPendingGPUHours
			c.PendingWorkloads, c.LongestWaitS = combine(c.PendingWorkloads, f.PendingWorkloads, i == 0, plus), combine(c.LongestWaitS, f.LongestWaitS, i == 0, larger)
			c.PendingUSD += f.PendingUSD
			for _, p := range []struct{ dst, src **float64 }{{&c.NominalGPUs, &f.NominalGPUs}, {&c.NominalGPUHours, &f.NominalGPUHours},
				{&c.ReservedGPUHours, &f.ReservedGPUHours}, {&c.BorrowedGPUHours, &f.BorrowedGPUHours}, {&c.LentGPUHours, &f.LentGPUHours}, {&c.NominalUSD, &f.NominalUSD},
				{&c.AllocatedGPUHours, &f.AllocatedGPUHours}, {&c.UsedGPUHours, &f.UsedGPUHours}, {&c.IdleHeldGPUHours, &f.IdleHeldGPUHours},
				{&c.AllocatedUSD, &f.AllocatedUSD}, {&c.UsedUSD, &f.UsedUSD}, {&c.IdleHeldUSD, &f.IdleHeldUSD}} {
				*p.dst = combine(*p.dst, *p.src, i == 0, plus)
			}
		}
		c.cohortShares()
		out[name] = c
	}
	return out
}

// cohortShares sets a cohort's held of quota, efficiency and price from
// its sums (none where what its members held is unknown).
func (c *QueueFigures) cohortShares() {
	if c.AllocatedGPUHours == nil || c.UsedGPUHours == nil || c.AllocatedUSD == nil {
		return
	}
	if c.NominalGPUHours != nil && *c.NominalGPUHours > 0 {
		c.HeldOfQuota = num(*c.AllocatedGPUHours / *c.NominalGPUHours)
	}
	if *c.AllocatedGPUHours > 0 {
		c.Efficiency = num(*c.UsedGPUHours / *c.AllocatedGPUHours)
		c.USDPerGPUHour = sig(*c.AllocatedUSD / *c.AllocatedGPUHours)
	}
}

// combine folds v into acc by f, null when either is (acc is taken as
// none when first): a cohort's sum or maximum of its members' figures.
func combine[T int | float64](acc, v *T, first bool, f func(a, b T) T) *T {
	if v == nil || acc == nil && !first {
		return nil
	}
	x := *v
	if acc != nil {
		x = f(*acc, x)
	}
	return &x
}

func plus[T int | float64](a, b T) T { return a + b }

func larger(a, b float64) float64 { return max(a, b) }
