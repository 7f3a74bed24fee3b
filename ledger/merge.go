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

// mergeGPUs sums GPU rows by merged piece, node and model; energy is
// measured when any row measured it (the table's MAX).
func mergeGPUs(out *analyze.Cuts, rows []analyze.GPUCut, to []int) {
	type key struct {
		piece       int
		node, model string
	}
	at := map[key]int{}
	for _, g := range rows {
		if to[g.Piece] < 0 {
			continue
		}
		g.Piece = to[g.Piece]
		k := key{g.Piece, g.Node, g.Model}
		i, ok := at[k]
		if !ok {
			at[k] = len(out.GPUs)
			out.GPUs = append(out.GPUs, g)
			continue
		}
		o := &out.GPUs[i]
		o.ObservedS, o.IdleS, o.UtilS, o.UtilCoveredS = o.ObservedS+g.ObservedS, o.IdleS+g.IdleS, o.UtilS+g.UtilS, o.UtilCoveredS+g.UtilCoveredS
		o.CostUSD, o.EnergyJ, o.EnergyMeasured = o.CostUSD+g.CostUSD, o.EnergyJ+g.EnergyJ, o.EnergyMeasured || g.EnergyMeasured
	}
}

// mergeHolds sums hold rows by merged piece, node, model and workload,
// each keeping its workload's latest description.
func mergeHolds(out *analyze.Cuts, rows []analyze.HoldCut, to []int) {
	type key struct {
		piece           int
		node, model, id string
		held            bool
	}
	at := map[key]int{}
	for _, h := range rows {
		if to[h.Piece] < 0 {
			continue
		}
		h.Piece = to[h.Piece]
		k := key{piece: h.Piece, node: h.Node, model: h.Model, held: h.Workload != nil}
		if h.Workload != nil {
			k.id = h.Workload.ID
		}
		i, ok := at[k]
		if !ok {
			at[k] = len(out.Holds)
			out.Holds = append(out.Holds, h)
			continue
		}
		o := &out.Holds[i]
		o.Workload = h.Workload
		o.HeldS, o.UsedS, o.IdleS = o.HeldS+h.HeldS, o.UsedS+h.UsedS, o.IdleS+h.IdleS
		o.CostUSD, o.EnergyJ, o.HeldUSD = o.CostUSD+h.CostUSD, o.EnergyJ+h.EnergyJ, o.HeldUSD+h.HeldUSD
	}
}

// mergeWork sums work rows by merged piece, node, workload, unit and
// model: counted or faulty when any row is (the tables' MAX), energy
// measured when every row measured it (MIN).
func mergeWork(out *analyze.Cuts, rows []analyze.WorkCut, to []int) {
	type key struct {
		piece                       int
		node, workload, unit, model string
	}
	at := map[key]int{}
	for _, w := range rows {
		if to[w.Piece] < 0 {
			continue
		}
		w.Piece = to[w.Piece]
		k := key{w.Piece, w.Node, w.Workload, w.Unit, w.Model}
		i, ok := at[k]
		if !ok {
			at[k] = len(out.Work)
			out.Work = append(out.Work, w)
			continue
		}
		o := &out.Work[i]
		o.Work, o.Counted, o.Faulty = o.Work+w.Work, o.Counted || w.Counted, o.Faulty || w.Faulty
		o.HeldS, o.IdleS, o.HeldUSD, o.IdleUSD = o.HeldS+w.HeldS, o.IdleS+w.IdleS, o.HeldUSD+w.HeldUSD, o.IdleUSD+w.IdleUSD
		o.EnergyJ, o.EnergyMeasured = o.EnergyJ+w.EnergyJ, o.EnergyMeasured && w.EnergyMeasured
	}
}

// mergeQueues sums queue rows by merged piece and queue: the latest row
// that knows the queue (a kind) describes it, the largest reservation is
// the largest of the rows'.
func mergeQueues(out *analyze.Cuts, rows []analyze.QueueCut, to []int) {
	type key struct {
		piece int
		queue string
	}
	at := map[key]int{}
	for _, q := range rows {
		if to[q.Piece] < 0 {
			continue
		}
		q.Piece = to[q.Piece]
		k := key{q.Piece, q.Queue}
		i, ok := at[k]
		if !ok {
			at[k] = len(out.Queues)
			out.Queues = append(out.Queues, q)
			continue
		}
		o := &out.Queues[i]
		if q.Kind != "" {
			o.Kind, o.Cohort, o.QuotaRef, o.NominalGPUs = q.Kind, q.Cohort, q.QuotaRef, q.NominalGPUs
		}
		o.ReservedS, o.PendingS, o.LargestGPUs = o.ReservedS+q.ReservedS, o.PendingS+q.PendingS, max(o.LargestGPUs, q.LargestGPUs)
	}
}
