package profile

// gob sends no zero value, not even one a pointer points to: a NUMA node
// 0, a queue's nominal quota of 0 GPUs and a sharing that asked for
// nothing would come back nil ("unknown"). The carried form therefore
// keeps a bit for each pointer of its metadata, set where it points to a
// zero value (TestCarriedPointersAllKept lists them).

// zeros writes (or, reading, restores) those bits, in a fixed order.
type zeros struct {
	bits    []byte
	i       int
	reading bool
}

// walk visits every pointer of p's metadata.
func (z *zeros) walk(p *Profile) {
	for ni := range p.Nodes {
		n := &p.Nodes[ni]
		for gi := range n.GPUs {
			keepZero(z, &n.GPUs[gi].NUMANode)
			keepZero(z, &n.GPUs[gi].MIG)
		}
		z.workloads(n.Workloads)
	}
	z.workloads(p.Unscheduled)
	for qi := range p.Queues {
		q := &p.Queues[qi]
		for _, f := range []**float64{&q.NominalGPUs, &q.BorrowingLimitGPUs, &q.LendingLimitGPUs, &q.BudgetGPUMinutes} {
			keepZero(z, f)
		}
		keepZero(z, &q.BudgetUse)
	}
}

func (z *zeros) workloads(ws []Workload) {
	for wi := range ws {
		keepZero(z, &ws[wi].Sharing)
	}
}

// keepZero writes whether *v points to a zero value, or, reading, makes it
// point to one where that was so (z.i past the bits: cut short).
func keepZero[T comparable](z *zeros, v **T) {
	at, bit := z.i/8, byte(1)<<(z.i%8)
	z.i++
	var zero T
	switch {
	case z.reading && at < len(z.bits) && z.bits[at]&bit != 0 && *v == nil:
		*v = new(T)
	case !z.reading:
		if at == len(z.bits) {
			z.bits = append(z.bits, 0)
		}
		if *v != nil && **v == zero {
			z.bits[at] |= bit
		}
	}
}
