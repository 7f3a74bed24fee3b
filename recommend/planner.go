package recommend

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/seedance/seedance/hwtopo"
)

// Options shape a plan.
type Options struct {
	// AllowModelChange lets a workload move to another GPU model.
	AllowModelChange bool
	// AllowSharing packs workloads that use part of a GPU onto shared GPUs.
	AllowSharing bool
	// MaxMovesPerNode bounds the evictions from one node (0: no bound).
	MaxMovesPerNode int
	// MoveJobs lets running batch jobs move (Slurm requeues them);
	// otherwise makePlan pins them. It is a setting, not the dialect's:
	// the plan is the same whatever it is written as.
	MoveJobs bool
	// MovePending lets pending work move off the node it waits on. A
	// pending workload names its node because its owner asked for it (a
	// pod's nodeName or required affinity, Slurm's -w), so by default it
	// stays, holding the GPUs it asked for, and its node is not released.
	MovePending bool
	// MoveBlockers lets pods move whose move loses something
	// (Workload.Blocker); the script then says what is lost.
	MoveBlockers bool
	// Scan bounds how many candidate nodes of one free-GPU count are
	// compared for bandwidth (0: 64); it keeps planning fast on 10,000 nodes.
	Scan int
	// Avoid names nodes that take no work: those the analysis advises
	// draining (PlanReport), so that the plan never moves work onto a
	// node another suggestion empties.
	Avoid map[string]bool
	// Keep names nodes that are never released nor given work: nodes whose
	// data is stale (PlanReport).
	Keep map[string]bool
	// MaxAge is how long after its data ends a plan may still be executed
	// (Plan.MaxAgeS; 0: no limit).
	MaxAge time.Duration
}

// state is a node during planning.
type state struct {
	n         *Node
	gpus      []GPU
	free      int // whole GPUs free
	released  bool
	receiving bool // got moves: stays
	running   []*Workload
	bucket    int  // position in its free-count bucket, -1 when out
	inShared  bool // listed among nodes with a partly used GPU
}

type planner struct {
	o       Options
	nodes   []*state
	byName  map[string]*state
	buckets map[string][][]*state // group → free count → nodes
	shared  map[string][]*state   // group → nodes with a partly used GPU
	moves   []Move
}

func group(o Options, model string) string {
	if o.AllowModelChange {
		return ""
	}
	return model
}

// makePlan plans moves that release as many whole nodes as possible and
// place pending work, without breaking any constraint: a moved workload gets
// as many free GPUs as it had, with enough memory each, connected at least as
// well as before (NVLink stays NVLink), of the same model unless allowed;
// pinned workloads never move; at most MaxMovesPerNode evictions per node.
// Nodes are evacuated lightest first and workloads placed best-fit (the
// fullest node that fits, the best-connected GPUs first), so work on nodes
// that stay is not moved. Pending work is placed first. The plan is
// replayed and checked before it is returned.
func makePlan(ctx context.Context, c *Cluster, o Options) (*Plan, error) {
	if o.Scan <= 0 {
		o.Scan = 64
	}
	p := &planner{o: o, byName: map[string]*state{}, buckets: map[string][][]*state{}, shared: map[string][]*state{}}
	for _, n := range c.Nodes {
		s := &state{n: n, gpus: append([]GPU(nil), n.GPUs...)}
		p.nodes = append(p.nodes, s)
		p.byName[n.Name] = s
	}
	var pending []*Workload
	for _, w := range c.Workloads {
		if w.Job && !o.MoveJobs {
			w.Pinned = true
		}
		if w.Pending {
			pending = append(pending, w)
		} else if s := p.byName[w.Node]; s != nil {
			s.running = append(s.running, w)
		}
	}
	for _, s := range p.nodes {
		s.free = countFree(s.gpus)
		p.index(s)
	}
	plan := &Plan{SchemaVersion: planSchema, Moves: []Move{}, ReleasedNodes: []string{}, NodePriceUSDPerHour: map[string]float64{}, MoveBlockers: o.MoveBlockers}
	// Pending work first: it must run. By default it keeps the node its
	// owner asked for, and the GPUs it waits for there; with MovePending,
	// best-fit puts it on the fullest nodes that take it, which then stay,
	// and work that fits nowhere else keeps the node it waits on.
	for _, w := range pending {
		if !o.MovePending {
			p.reserve(w)
			continue
		}
		if !p.placePending(w) {
			plan.Unplaced = append(plan.Unplaced, w.ID)
			if src := p.byName[w.Node]; src != nil {
				src.receiving = true
			}
		}
	}
	order := append([]*state(nil), p.nodes...)
	sort.SliceStable(order, func(i, j int) bool {
		a, b := used(order[i]), used(order[j])
		if a != b {
			return a < b
		}
		return order[i].n.Name < order[j].n.Name
	})
	for _, s := range order {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if s.receiving || s.released || anyBusy(s.gpus) || o.Keep[s.n.Name] {
			continue
		}
		if len(s.running) == 0 {
			p.release(s)
			continue
		}
		plan.Blockers = append(plan.Blockers, p.evacuate(s)...)
	}
	for _, s := range p.nodes {
		if s.released {
			plan.ReleasedNodes = append(plan.ReleasedNodes, s.n.Name)
			plan.SavingsUSDPerHour += s.n.PricePerHour
			plan.NodePriceUSDPerHour[s.n.Name] = s.n.PricePerHour
		}
	}
	sort.Strings(plan.ReleasedNodes)
	plan.Moves = append(plan.Moves, p.moves...)
	plan.SavingsUSDPerHour = round4(plan.SavingsUSDPerHour)
	plan.SavingsUSDPerMonth = round4(plan.SavingsUSDPerHour * hoursPerMonth)
	if err := verify(c, plan); err != nil {
		return nil, fmt.Errorf("internal error, the plan does not replay: %w", err)
	}
	return plan, nil
}

func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

func countFree(gs []GPU) int {
	n := 0
	for _, g := range gs {
		if g.UsedMilli == 0 && !g.Busy {
			n++
		}
	}
	return n
}

func used(s *state) int {
	u := 0
	for _, g := range s.gpus {
		u += g.UsedMilli
	}
	return u
}

func anyBusy(gs []GPU) bool {
	for _, g := range gs {
		if g.Busy {
			return true
		}
	}
	return false
}

// index files the node under its free-GPU count (and among nodes with
// room on a shared GPU).
func (p *planner) index(s *state) {
	if s.released {
		return
	}
	g := group(p.o, s.n.Model)
	b := p.buckets[g]
	for len(b) <= s.free {
		b = append(b, nil)
	}
	s.bucket = len(b[s.free])
	b[s.free] = append(b[s.free], s)
	p.buckets[g] = b
	if p.o.AllowSharing && !s.inShared && hasPartial(s.gpus) {
		s.inShared = true
		p.shared[g] = append(p.shared[g], s)
	}
}

func (p *planner) unindex(s *state) {
	if s.bucket < 0 {
		return
	}
	g := group(p.o, s.n.Model)
	list := p.buckets[g][s.free]
	last := list[len(list)-1]
	list[s.bucket] = last
	last.bucket = s.bucket
	p.buckets[g][s.free] = list[:len(list)-1]
	s.bucket = -1
}

func hasPartial(gs []GPU) bool {
	for _, g := range gs {
		if g.UsedMilli > 0 && g.UsedMilli < milliPerGPU {
			return true
		}
	}
	return false
}

func (p *planner) release(s *state) {
	p.unindex(s)
	s.released = true
}

// placement is where a workload would go.
type placement struct {
	to      *state
	gpus    []int
	bw      float64
	sharing string
}

// reserve keeps a pending workload on the node it waits on: the node
// stays and takes no work (it is out of the index), so the GPUs the
// pending work waits for are never given away.
func (p *planner) reserve(w *Workload) {
	if s := p.byName[w.Node]; s != nil {
		p.unindex(s)
		s.receiving = true
	}
}

// evacuate moves every workload off s, or none; it returns the blockers
// that alone kept s from being emptied.
func (p *planner) evacuate(s *state) []Blocker {
	if p.o.MaxMovesPerNode > 0 && len(s.running) > p.o.MaxMovesPerNode {
		return nil
	}
	var blockers []Blocker
	for _, w := range s.running {
		switch {
		case w.Pinned:
			return nil
		case w.Blocker != "" && !p.o.MoveBlockers:
			blockers = append(blockers, Blocker{Workload: w.ID, Node: s.n.Name, Reason: w.Blocker})
		}
	}
	if len(blockers) > 0 {
		return blockers
	}
	p.unindex(s)
	ws := append([]*Workload(nil), s.running...)
	sort.SliceStable(ws, func(i, j int) bool { return ws[i].Count*ws[i].Milli > ws[j].Count*ws[j].Milli })
	var done []placement
	for _, w := range ws {
		pl, ok := p.find(w, s, linkRankOf(s.n.Topology, w.GPUs))
		if !ok {
			for i := len(done) - 1; i >= 0; i-- {
				p.unapply(ws[i], done[i])
			}
			p.index(s)
			return nil
		}
		p.apply(w, pl)
		done = append(done, pl)
	}
	s.released = true
	share := s.n.PricePerHour / float64(len(ws))
	for i, w := range ws {
		pl := done[i]
		pl.to.receiving = true
		from := s.n.Name
		p.moves = append(p.moves, Move{Workload: w.ID, From: &from, To: pl.to.n.Name, GPUs: pl.gpus, Sharing: sharingPtr(pl.sharing),
			Reason:            fmt.Sprintf("frees %s (%d workload(s) to move); %s", s.n.Name, len(ws), targetWhy(pl)),
			SavingsUSDPerHour: round4(share), Name: w.Name, Namespace: w.Namespace, Kind: w.Kind, Blocker: w.Blocker})
	}
	return nil
}

func sharingPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func targetWhy(pl placement) string {
	if pl.bw > 0 {
		return fmt.Sprintf("%s has the GPUs with %.0f GB/s NVLink between them", pl.to.n.Name, pl.bw)
	}
	return fmt.Sprintf("%s has room", pl.to.n.Name)
}

// placePending puts a pending workload on the best node other than the one
// it waits on.
func (p *planner) placePending(w *Workload) bool {
	src := p.byName[w.Node]
	if src != nil && src.bucket >= 0 {
		p.unindex(src)
		defer p.index(src)
	}
	pl, ok := p.find(w, nil, 0)
	if !ok {
		return false
	}
	p.apply(w, pl)
	pl.to.receiving = true
	reason := fmt.Sprintf("pending on %s; %s", w.Node, targetWhy(pl))
	higher := src != nil && pl.bw > bestBandwidth(src.n.Topology)
	if higher {
		reason += ", a higher NVLink bandwidth than on " + w.Node
	}
	p.moves = append(p.moves, Move{Workload: w.ID, To: pl.to.n.Name, GPUs: pl.gpus, Sharing: sharingPtr(pl.sharing), Reason: reason,
		HigherNVLink: higher, Name: w.Name, Namespace: w.Namespace})
	return true
}

func bestBandwidth(t *hwtopo.Topology) float64 {
	best := 0.0
	if t == nil {
		return 0
	}
	for _, row := range t.NVLinkGBps {
		for _, v := range row {
			best = math.Max(best, v)
		}
	}
	return best
}

// find picks the target for w: among nodes of its group (not exclude), the
// tightest free-GPU count that fits, and within it the GPU set with the most
// NVLink bandwidth.
func (p *planner) find(w *Workload, exclude *state, rank int) (placement, bool) {
	g := group(p.o, modelOf(p, w))
	if p.o.AllowSharing && w.Milli < milliPerGPU && w.Count == 1 {
		for _, s := range p.shared[g] {
			if s != exclude && !s.released && !p.o.Avoid[s.n.Name] && !p.o.Keep[s.n.Name] {
				if pl, ok := fitShared(s, w); ok {
					return pl, true
				}
			}
		}
	}
	b := p.buckets[g]
	for k := w.Count; k < len(b); k++ {
		var best placement
		found := false
		for i, s := range b[k] {
			if i >= p.o.Scan {
				break
			}
			if s == exclude || p.o.Avoid[s.n.Name] || p.o.Keep[s.n.Name] {
				continue
			}
			pl, ok := fitWhole(s, w, rank)
			if ok && (!found || pl.bw > best.bw) {
				best, found = pl, true
			}
		}
		if found {
			if p.o.AllowSharing && w.Milli < milliPerGPU {
				best.sharing = sharingMode(best.to.n.Model, w)
			}
			return best, true
		}
	}
	return placement{}, false
}

func modelOf(p *planner, w *Workload) string {
	if s := p.byName[w.Node]; s != nil {
		return s.n.Model
	}
	return ""
}

// fitWhole chooses w.Count free GPUs of s, each with room for its memory,
// pairwise connected at least at rank (hwtopo.LinkRank).
func fitWhole(s *state, w *Workload, rank int) (placement, bool) {
	var cand []int
	for i, g := range s.gpus {
		if g.UsedMilli == 0 && !g.Busy && g.MemBytes >= w.MemPerGPU {
			cand = append(cand, i)
		}
	}
	if len(cand) < w.Count {
		return placement{}, false
	}
	t := s.n.Topology
	if w.Count == 1 || rank == 0 {
		set := cand[:w.Count]
		return placement{to: s, gpus: append([]int(nil), set...), bw: minBW(t, set)}, true
	}
	if t == nil || len(t.Matrix) != len(s.gpus) {
		return placement{}, false // the connection cannot be checked
	}
	for _, seed := range cand {
		set := []int{seed}
		for _, c := range cand {
			if c == seed {
				continue
			}
			ok := true
			for _, x := range set {
				if hwtopo.LinkRank(t.Matrix[x][c]) < rank {
					ok = false
					break
				}
			}
			if ok {
				set = append(set, c)
				if len(set) == w.Count {
					return placement{to: s, gpus: set, bw: minBW(t, set)}, true
				}
			}
		}
	}
	return placement{}, false
}

// fitShared puts a fractional workload on a partly used GPU of s.
func fitShared(s *state, w *Workload) (placement, bool) {
	for i, g := range s.gpus {
		if !g.Busy && g.UsedMilli > 0 && g.UsedMilli+w.Milli <= milliPerGPU && g.MemBytes-g.UsedMem >= w.MemPerGPU {
			return placement{to: s, gpus: []int{i}, sharing: sharingMode(s.n.Model, w)}, true
		}
	}
	return placement{}, false
}

// sharingMode names how a fractional workload shares a GPU: a MIG slice
// when its memory fits one on a MIG-capable GPU, else MPS.
func sharingMode(model string, w *Workload) string {
	if prof := migProfileFor(model, w.MemPerGPU); prof != "" {
		return "mig:" + prof
	}
	return "mps"
}

// minBW is the smallest NVLink bandwidth between two GPUs of the set.
func minBW(t *hwtopo.Topology, set []int) float64 {
	if t == nil || len(set) < 2 || len(t.NVLinkGBps) == 0 {
		return 0
	}
	best := math.Inf(1)
	for i := range set {
		for j := i + 1; j < len(set); j++ {
			best = math.Min(best, t.NVLinkGBps[set[i]][set[j]])
		}
	}
	return best
}

// linkRankOf is the worst connection among the GPUs a workload holds now:
// its move must not get a worse one. 0 when not constrained.
func linkRankOf(t *hwtopo.Topology, gpus []int) int {
	if t == nil || len(gpus) < 2 {
		return 0
	}
	worst := math.MaxInt
	for i := range gpus {
		for j := i + 1; j < len(gpus); j++ {
			if gpus[i] < len(t.Matrix) && gpus[j] < len(t.Matrix) {
				worst = min(worst, hwtopo.LinkRank(t.Matrix[gpus[i]][gpus[j]]))
			}
		}
	}
	if worst == math.MaxInt {
		return 0
	}
	return worst
}

func (p *planner) apply(w *Workload, pl placement) {
	p.unindex(pl.to)
	for _, i := range pl.gpus {
		g := &pl.to.gpus[i]
		if pl.sharing == "" || w.Milli >= milliPerGPU {
			g.UsedMilli = milliPerGPU
		} else {
			g.UsedMilli += w.Milli
		}
		g.UsedMem += w.MemPerGPU
	}
	pl.to.free = countFree(pl.to.gpus)
	p.index(pl.to)
}

func (p *planner) unapply(w *Workload, pl placement) {
	p.unindex(pl.to)
	for _, i := range pl.gpus {
		g := &pl.to.gpus[i]
		if pl.sharing == "" || w.Milli >= milliPerGPU {
			g.UsedMilli = 0
		} else {
			g.UsedMilli -= w.Milli
		}
		g.UsedMem -= w.MemPerGPU
	}
	pl.to.free = countFree(pl.to.gpus)
	p.index(pl.to)
}
