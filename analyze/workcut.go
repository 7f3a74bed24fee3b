package analyze

// WorkCut is what one workload's counter of one unit counted on one node
// in one piece of a cut analysis, with what the workload held there in it
// (docs/units.md, Over time): the ledger's rows of work, each enough to
// make a unit figure of any span of them (UnitRow).
type WorkCut struct {
	Piece                       int
	Node, Workload, Unit, Model string
	Work                        float64
	// Counted: an increase was read in the piece; Faulty: the counter
	// cannot be trusted (docs/units.md, Work done).
	Counted, Faulty bool
	// HeldS and IdleS are GPU-seconds the workload held on the node in
	// the piece, HeldUSD and IdleUSD what they cost; EnergyJ its share of
	// the GPUs' energy, EnergyMeasured whether they all measure it.
	HeldS, IdleS, HeldUSD, IdleUSD, EnergyJ float64
	EnergyMeasured                          bool
}

// within is the increases read in piece i, and whether any was.
func (c *workAcc) within(i int) (work float64, counted bool) {
	if i < 0 || i >= len(c.byPiece) {
		return 0, false
	}
	return c.byPiece[i], c.countedIn[i]
}

// cutWork adds the rows of work of node n's workloads in a piece:
// holds are the piece's holds on the node, gpus its GPUs by model.
func cutWork(c *Cuts, piece int, n *nodeAcc, holds []HoldCut, gpus map[string]*GPUCut) {
	if len(n.work) == 0 {
		return
	}
	held := map[string]*WorkCut{}
	for _, h := range holds {
		if h.Workload == nil {
			continue
		}
		w := held[h.Workload.ID]
		if w == nil {
			w = &WorkCut{EnergyMeasured: true}
			held[h.Workload.ID] = w
		}
		w.HeldS += h.HeldS
		w.IdleS += h.IdleS
		w.HeldUSD += h.HeldUSD
		w.IdleUSD += h.CostUSD
		w.EnergyJ += h.EnergyJ
		w.EnergyMeasured = w.EnergyMeasured && gpus[h.Model] != nil && gpus[h.Model].EnergyMeasured
	}
	for _, id := range sortedKeys(n.work) {
		h := held[id]
		if h == nil {
			h = &WorkCut{EnergyMeasured: true} // none held in the piece, its work still counts (Units leaves out a workload that held none)
		}
		for _, acc := range n.work[id] {
			row := *h
			row.Piece, row.Node, row.Workload, row.Unit, row.Model = piece, n.name, id, acc.unit, acc.model
			row.Work, row.Counted = acc.within(piece)
			row.Faulty = acc.fault != ""
			if row.HeldS > 0 || row.Counted {
				c.Work = append(c.Work, row)
			}
		}
	}
}
