package ledger

import "github.com/seedance/seedance/analyze"

// pieceGroup is a piece of merged rows: its bucket and whether its rows
// are provisional.
type pieceGroup struct {
	bucket int64
	prov   bool
}

// groupOf says of a piece p which bucket and class its rows are written
// in, and whether they are kept at all.
type groupOf func(p int) (bucket int64, prov, keep bool)

// merge sums the rows of the kept pieces (of n) that group alike into one
// row per key, as the tables' upserts would have summed them one piece
// after another. Pieces of a group whose GPUs of a node and model were
// priced differently stay apart (a hold's cost and charges follow its
// piece's price): each group is split into as few pieces of one price each
// as its pieces allow, in their order.
func merge(all *analyze.Cuts, group groupOf, n int) (*analyze.Cuts, []pieceGroup) {
	to, groups := assign(all, group, n)
	out := &analyze.Cuts{At: all.At}
	mergeGPUs(out, all.GPUs, to)
	mergeHolds(out, all.Holds, to)
	mergeWork(out, all.Work, to)
	mergeQueues(out, all.Queues, to)
	return out, groups
}

// priced is a node's GPUs of a model at one price.
type priced struct {
	usd    float64
	source string
}

// assign maps each piece to its merged piece (-1: dropped).
func assign(all *analyze.Cuts, group groupOf, n int) ([]int, []pieceGroup) {
	prices := make([]map[string]priced, n)
	for _, g := range all.GPUs {
		if prices[g.Piece] == nil {
			prices[g.Piece] = map[string]priced{}
		}
		prices[g.Piece][g.Node+"\x00"+g.Model] = priced{g.PriceUSDPerHour, g.PriceSource}
	}
	type subset struct {
		prices map[string]priced
		piece  int
	}
	subsets := map[pieceGroup][]*subset{}
	to := make([]int, n)
	var groups []pieceGroup
	for p := range n {
		b, prov, keep := group(p)
		if !keep {
			to[p] = -1
			continue
		}
		k := pieceGroup{b, prov}
		var s *subset
		for _, c := range subsets[k] {
			if agrees(c.prices, prices[p]) {
				s = c
				break
			}
		}
		if s == nil {
			s = &subset{prices: map[string]priced{}, piece: len(groups)}
			subsets[k], groups = append(subsets[k], s), append(groups, k)
		}
		for nm, pr := range prices[p] {
			s.prices[nm] = pr
		}
		to[p] = s.piece
	}
	return to, groups
}

// agrees: every price of b that a has too is the same.
func agrees(a, b map[string]priced) bool {
	for k, p := range b {
		if q, ok := a[k]; ok && q != p {
			return false
		}
	}
	return true
}

// mergeRows appends rows to out, each moved to its merged piece (to;
// dropped where -1), or folded into the row of its key there already.
func mergeRows[R any, K comparable](out *[]R, rows []R, to []int, piece func(*R) *int, key func(R) K, fold func(o *R, r R)) {
	at := map[K]int{}
	for _, r := range rows {
		p := piece(&r)
		if to[*p] < 0 {
			continue
		}
		*p = to[*p]
		k := key(r)
		if i, ok := at[k]; ok {
			fold(&(*out)[i], r)
			continue
		}
		at[k] = len(*out)
		*out = append(*out, r)
	}
}

// mergeGPUs sums GPU rows by merged piece, node and model; energy is
// measured when any row measured it (the table's MAX).
func mergeGPUs(out *analyze.Cuts, rows []analyze.GPUCut, to []int) {
	type key struct {
		piece       int
		node, model string
	}
	mergeRows(&out.GPUs, rows, to, func(g *analyze.GPUCut) *int { return &g.Piece },
		func(g analyze.GPUCut) key { return key{g.Piece, g.Node, g.Model} },
		func(o *analyze.GPUCut, g analyze.GPUCut) {
			o.ObservedS, o.IdleS, o.UtilS, o.UtilCoveredS = o.ObservedS+g.ObservedS, o.IdleS+g.IdleS, o.UtilS+g.UtilS, o.UtilCoveredS+g.UtilCoveredS
			o.CostUSD, o.EnergyJ, o.EnergyMeasured = o.CostUSD+g.CostUSD, o.EnergyJ+g.EnergyJ, o.EnergyMeasured || g.EnergyMeasured
		})
}

// mergeHolds sums hold rows by merged piece, node, model and workload,
// each keeping its workload's latest description.
func mergeHolds(out *analyze.Cuts, rows []analyze.HoldCut, to []int) {
	type key struct {
		piece           int
		node, model, id string
		held            bool
	}
	mergeRows(&out.Holds, rows, to, func(h *analyze.HoldCut) *int { return &h.Piece },
		func(h analyze.HoldCut) key {
			k := key{piece: h.Piece, node: h.Node, model: h.Model, held: h.Workload != nil}
			if h.Workload != nil {
				k.id = h.Workload.ID
			}
			return k
		},
		func(o *analyze.HoldCut, h analyze.HoldCut) {
			o.Workload = h.Workload
			o.HeldS, o.UsedS, o.IdleS = o.HeldS+h.HeldS, o.UsedS+h.UsedS, o.IdleS+h.IdleS
			o.CostUSD, o.EnergyJ, o.HeldUSD = o.CostUSD+h.CostUSD, o.EnergyJ+h.EnergyJ, o.HeldUSD+h.HeldUSD
		})
}

// mergeWork sums work rows by merged piece, node, workload, unit and
// model: counted or faulty when any row is (the tables' MAX), energy
// measured when every row measured it (MIN).
func mergeWork(out *analyze.Cuts, rows []analyze.WorkCut, to []int) {
	type key struct {
		piece                       int
		node, workload, unit, model string
	}
	mergeRows(&out.Work, rows, to, func(w *analyze.WorkCut) *int { return &w.Piece },
		func(w analyze.WorkCut) key { return key{w.Piece, w.Node, w.Workload, w.Unit, w.Model} },
		func(o *analyze.WorkCut, w analyze.WorkCut) {
			o.Work, o.Counted, o.Faulty = o.Work+w.Work, o.Counted || w.Counted, o.Faulty || w.Faulty
			o.HeldS, o.IdleS, o.HeldUSD, o.IdleUSD = o.HeldS+w.HeldS, o.IdleS+w.IdleS, o.HeldUSD+w.HeldUSD, o.IdleUSD+w.IdleUSD
			o.EnergyJ, o.EnergyMeasured = o.EnergyJ+w.EnergyJ, o.EnergyMeasured && w.EnergyMeasured
		})
}

// mergeQueues sums queue rows by merged piece and queue: the latest row
// that knows the queue (a kind) describes it, the largest reservation is
// the largest of the rows', and a queue whose workloads one row did not
// know stays so.
func mergeQueues(out *analyze.Cuts, rows []analyze.QueueCut, to []int) {
	type key struct {
		piece int
		queue string
	}
	mergeRows(&out.Queues, rows, to, func(q *analyze.QueueCut) *int { return &q.Piece },
		func(q analyze.QueueCut) key { return key{q.Piece, q.Queue} },
		func(o *analyze.QueueCut, q analyze.QueueCut) {
			if q.Kind != "" {
				o.Kind, o.Cohort, o.QuotaRef, o.NominalGPUs, o.BudgetGPUMinutes, o.LendingLimitGPUs = q.Kind, q.Cohort, q.QuotaRef, q.NominalGPUs, q.BudgetGPUMinutes, q.LendingLimitGPUs
				o.BudgetUse = q.BudgetUse
			}
			o.ReservedS, o.PendingS, o.LargestGPUs = o.ReservedS+q.ReservedS, o.PendingS+q.PendingS, max(o.LargestGPUs, q.LargestGPUs)
			o.HeldPendingS, o.WorkloadsUnknown = o.HeldPendingS+q.HeldPendingS, o.WorkloadsUnknown || q.WorkloadsUnknown
		})
}
