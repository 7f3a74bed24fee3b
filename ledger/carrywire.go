package ledger

import (
	"fmt"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/profile"
)

// carryWire is a carry as the state keeps it, in gob: plain values (gob
// drops a pointer to a zero value), each workload once and only what an
// update writes of it.
type carryWire struct {
	Bucket    int64
	Pieces    int
	GPUs      []analyze.GPUCut
	Holds     []holdWire
	Workloads []workloadWire
	Work      []analyze.WorkCut
	Queues    []queueWire
}

// holdWire is a hold row; W is its workload's index in Workloads plus one
// (0: what no workload held).
type holdWire struct {
	Piece                                          int
	Node, Model                                    string
	W                                              int
	HeldS, UsedS, IdleS, CostUSD, EnergyJ, HeldUSD float64
}

// workloadWire is what the ledger's rows keep of a workload: its names,
// kind and labels (its owner and class), and its queue.
type workloadWire struct {
	ID, Name, Kind, Queue string
	Labels                map[string]string
}

// queueWire is a queue row, its nominal quota, budget and lending limit
// apart (null: none).
type queueWire struct {
	Q                     analyze.QueueCut
	Nominal, Budget, Lend optFloat
}

// optFloat is a number that may be null, as gob keeps it.
type optFloat struct {
	V   float64
	Set bool
}

func optOf(p *float64) optFloat {
	if p == nil {
		return optFloat{}
	}
	return optFloat{*p, true}
}

func (o optFloat) ptr() *float64 {
	if !o.Set {
		return nil
	}
	return &o.V
}

func wireOf(c *carry) carryWire {
	w := carryWire{Bucket: c.Bucket, Pieces: c.Pieces, GPUs: c.Cuts.GPUs, Work: c.Cuts.Work}
	at := map[string]int{}
	for _, h := range c.Cuts.Holds {
		hw := holdWire{Piece: h.Piece, Node: h.Node, Model: h.Model, HeldS: h.HeldS, UsedS: h.UsedS, IdleS: h.IdleS, CostUSD: h.CostUSD, EnergyJ: h.EnergyJ, HeldUSD: h.HeldUSD}
		if x := h.Workload; x != nil {
			if at[x.ID] == 0 {
				w.Workloads = append(w.Workloads, workloadWire{ID: x.ID, Name: x.Name, Kind: x.Kind, Queue: x.Queue, Labels: x.Labels})
				at[x.ID] = len(w.Workloads)
			}
			hw.W = at[x.ID]
		}
		w.Holds = append(w.Holds, hw)
	}
	for _, q := range c.Cuts.Queues {
		qw := queueWire{Q: q, Nominal: optOf(q.NominalGPUs), Budget: optOf(q.BudgetGPUMinutes), Lend: optOf(q.LendingLimitGPUs)}
		qw.Q.NominalGPUs, qw.Q.BudgetGPUMinutes, qw.Q.LendingLimitGPUs = nil, nil, nil
		w.Queues = append(w.Queues, qw)
	}
	return w
}

// carry is the carry w keeps; one that names a piece or workload it does
// not hold is refused.
func (w carryWire) carry() (*carry, error) {
	c := &carry{Bucket: w.Bucket, Pieces: w.Pieces, Cuts: &analyze.Cuts{GPUs: w.GPUs, Work: w.Work}}
	ws := make([]*profile.Workload, len(w.Workloads))
	for i, x := range w.Workloads {
		ws[i] = &profile.Workload{ID: x.ID, Name: x.Name, Kind: x.Kind, Queue: x.Queue, Labels: x.Labels}
	}
	bad := func(p int) bool { return p < 0 || p >= w.Pieces }
	for _, h := range w.Holds {
		if bad(h.Piece) || h.W < 0 || h.W > len(ws) {
			return nil, fmt.Errorf("%w: its open bucket's settled rows name a piece or workload they do not hold", ErrLedger)
		}
		hc := analyze.HoldCut{Piece: h.Piece, Node: h.Node, Model: h.Model, HeldS: h.HeldS, UsedS: h.UsedS, IdleS: h.IdleS, CostUSD: h.CostUSD, EnergyJ: h.EnergyJ, HeldUSD: h.HeldUSD}
		if h.W > 0 {
			hc.Workload = ws[h.W-1]
		}
		c.Cuts.Holds = append(c.Cuts.Holds, hc)
	}
	for _, q := range w.Queues {
		qc := q.Q
		qc.NominalGPUs, qc.BudgetGPUMinutes, qc.LendingLimitGPUs = q.Nominal.ptr(), q.Budget.ptr(), q.Lend.ptr()
		c.Cuts.Queues = append(c.Cuts.Queues, qc)
	}
	for _, g := range c.Cuts.GPUs {
		if bad(g.Piece) {
			return nil, fmt.Errorf("%w: its open bucket's settled rows name a piece they do not hold", ErrLedger)
		}
	}
	for _, x := range c.Cuts.Work {
		if bad(x.Piece) {
			return nil, fmt.Errorf("%w: its open bucket's settled rows name a piece they do not hold", ErrLedger)
		}
	}
	for _, q := range c.Cuts.Queues {
		if bad(q.Piece) {
			return nil, fmt.Errorf("%w: its open bucket's settled rows name a piece they do not hold", ErrLedger)
		}
	}
	return c, nil
}
