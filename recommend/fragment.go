package recommend

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/hwtopo"
)

// suggestFragmentation is the kind of the suggestion a pool whose
// fragmentation ratio is above the threshold gets.
const suggestFragmentation = "fragmentation"

// DefaultFragmentationRatio is the white paper's threshold (§2.2).
const DefaultFragmentationRatio = 0.35

// Fragmentation is the fragmentation report (docs/analysis.md,
// "Fragmentation"): per pool of one GPU model, where its free GPUs are and
// how many of them no workload shape seen can use without a move.
type Fragmentation struct {
	ThresholdRatio float64    `json:"threshold_ratio"`
	Pools          []FragPool `json:"pools"`
}

// FragPool is one GPU model's pool.
type FragPool struct {
	Model string `json:"model"`
	Nodes int    `json:"nodes"`
	GPUs  int    `json:"gpus"`
	// FreeGPUs are the whole GPUs no running workload holds and that did
	// no unaccounted work; FreePerNode[k] is how many nodes have k of them.
	FreeGPUs    int   `json:"free_gpus"`
	FreePerNode []int `json:"free_per_node"`
	// StrandedGPUs are the free GPUs that no shape can use without a move;
	// Ratio is StrandedGPUs ÷ FreeGPUs (null when nothing is free).
	StrandedGPUs int           `json:"stranded_gpus"`
	Ratio        *float64      `json:"ratio"`
	Above        bool          `json:"above_threshold"`
	StrandedOn   []StrandedSet `json:"stranded_on"`
	// FGDUnusableGPUs is the FGD paper's fragmentation: the GPU capacity
	// expected to be unusable by the next workload drawn from Shapes;
	// FGDRatio is that over the free capacity.
	FGDUnusableGPUs float64  `json:"fgd_unusable_gpus"`
	FGDRatio        *float64 `json:"fgd_ratio"`
	Shapes          []Shape  `json:"shapes"`
	// AfterPlan is the same pool once the migration plan's moves are made
	// (released nodes empty); nil without a plan.
	AfterPlan *FragAfter `json:"after_plan,omitempty"`
	// Note says why the pool's ratio is null although it has free GPUs:
	// no workload was seen to measure them against.
	Note string `json:"note,omitempty"`
}

// StrandedSet is one node's stranded GPUs (indices in the node).
type StrandedSet struct {
	Node string `json:"node"`
	GPUs []int  `json:"gpus"`
}

// FragAfter is a pool's figures after the migration plan.
type FragAfter struct {
	FreeGPUs     int      `json:"free_gpus"`
	StrandedGPUs int      `json:"stranded_gpus"`
	Ratio        *float64 `json:"ratio"`
	// Unstranded is how many fewer GPUs are stranded.
	Unstranded int `json:"unstranded"`
}

// Shape is a kind of request seen in the profile: how many GPUs, what share
// of each (1000 for whole GPUs), how much memory on each, and the
// connection they need (hwtopo.LinkRank, 0 for none); Workloads counts the
// running and pending workloads of that shape.
type Shape struct {
	GPUs      int    `json:"gpus"`
	Milli     int    `json:"milli"`
	MemBytes  uint64 `json:"mem_bytes"`
	LinkRank  int    `json:"link_rank"`
	Workloads int    `json:"workloads"`
}

// FragmentOptions shape the fragmentation report.
type FragmentOptions struct {
	ThresholdRatio float64 // above it, a pool gets a suggestion
}

// fragment measures each pool's fragmentation on the cluster and, when a
// plan is given, after its moves.
func fragment(c *Cluster, plan *Plan, o FragmentOptions) *Fragmentation {
	f := &Fragmentation{ThresholdRatio: o.ThresholdRatio, Pools: []FragPool{}}
	shapes := shapesByPool(c)
	var after map[string][]GPU
	if plan != nil {
		after = afterPlan(c, plan)
	}
	for _, model := range poolModels(c) {
		p := FragPool{Model: model, Shapes: shapes[model], StrandedOn: []StrandedSet{}}
		if p.Shapes == nil {
			p.Shapes = []Shape{}
		}
		var afterFree, afterStranded int
		capacity := 0.0
		for _, n := range c.Nodes {
			if n.Model != model {
				continue
			}
			p.Nodes++
			p.GPUs += len(n.GPUs)
			free, stranded := strandedOf(n, n.GPUs, p.Shapes)
			for len(p.FreePerNode) <= free {
				p.FreePerNode = append(p.FreePerNode, 0)
			}
			p.FreePerNode[free]++
			p.FreeGPUs += free
			p.StrandedGPUs += len(stranded)
			if len(stranded) > 0 {
				p.StrandedOn = append(p.StrandedOn, StrandedSet{n.Name, stranded})
			}
			unusable, free2 := fgd(n, n.GPUs, p.Shapes)
			p.FGDUnusableGPUs += unusable
			capacity += free2
			if after != nil {
				af, as := strandedOf(n, after[n.Name], p.Shapes)
				afterFree += af
				afterStranded += len(as)
			}
		}
		p.Ratio = ratio(p.StrandedGPUs, float64(p.FreeGPUs))
		if len(p.Shapes) == 0 {
			// No demand seen: nothing to call the free GPUs stranded by.
			p.StrandedGPUs, p.StrandedOn, p.Ratio = 0, []StrandedSet{}, nil
			p.Note = "no workload seen in this pool, running or pending: there is no demand to measure its free GPUs against"
		}
		p.Above = p.Ratio != nil && *p.Ratio > o.ThresholdRatio
		if capacity > 0 && len(p.Shapes) > 0 {
			v := analyze.Sig(p.FGDUnusableGPUs / capacity)
			p.FGDRatio = &v
		}
		p.FGDUnusableGPUs = analyze.Sig(p.FGDUnusableGPUs)
		if after != nil && len(p.Shapes) > 0 {
			p.AfterPlan = &FragAfter{FreeGPUs: afterFree, StrandedGPUs: afterStranded, Ratio: ratio(afterStranded, float64(afterFree)),
				Unstranded: p.StrandedGPUs - afterStranded}
		}
		f.Pools = append(f.Pools, p)
	}
	return f
}

func ratio(n int, d float64) *float64 {
	if d <= 0 {
		return nil
	}
	v := analyze.Sig(float64(n) / d)
	return &v
}

// poolModels lists the GPU models of the nodes, sorted.
func poolModels(c *Cluster) []string {
	var out []string
	for _, n := range c.Nodes {
		if len(n.GPUs) > 0 && !slices.Contains(out, n.Model) {
			out = append(out, n.Model)
		}
	}
	sort.Strings(out)
	return out
}

// shapesByPool gathers each pool's shapes: a running workload's from the
// GPUs it holds (its connection among them), a pending one's from its
// request, in the pool of the node it waits on, or in every pool when it
// names none.
func shapesByPool(c *Cluster) map[string][]Shape {
	model := map[string]string{}
	topo := map[string]*hwtopo.Topology{}
	for _, n := range c.Nodes {
		model[n.Name], topo[n.Name] = n.Model, n.Topology
	}
	out := map[string][]Shape{}
	add := func(pool string, s Shape) {
		for i, x := range out[pool] {
			if x.GPUs == s.GPUs && x.Milli == s.Milli && x.LinkRank == s.LinkRank && gib(x.MemBytes) == gib(s.MemBytes) {
				out[pool][i].Workloads++
				out[pool][i].MemBytes = max(x.MemBytes, s.MemBytes)
				return
			}
		}
		s.Workloads = 1
		out[pool] = append(out[pool], s)
	}
	for _, w := range c.Workloads {
		s := Shape{GPUs: w.Count, Milli: w.Milli, MemBytes: w.MemPerGPU}
		if !w.Pending {
			s.LinkRank = linkRankOf(topo[w.Node], w.GPUs)
		}
		if s.GPUs < 1 || s.Milli < 1 {
			continue
		}
		if m := model[w.Node]; m != "" {
			add(m, s)
			continue
		}
		for _, m := range poolModels(c) {
			add(m, s)
		}
	}
	for _, ss := range out {
		sort.SliceStable(ss, func(i, j int) bool {
			if ss[i].GPUs != ss[j].GPUs {
				return ss[i].GPUs > ss[j].GPUs
			}
			return ss[i].Milli > ss[j].Milli
		})
	}
	return out
}

// gib rounds bytes up to whole GiB: shapes that differ by less share one.
func gib(b uint64) uint64 { return (b + 1<<30 - 1) >> 30 }

// memFits says whether a GPU has the memory of one GPU of a shape; a GPU
// whose memory is unknown (a profile read with pushdown) is not refused.
func memFits(g GPU, need uint64) bool { return g.MemBytes == 0 || g.MemBytes >= need }

// wholeFree says whether a GPU is free: held by nothing, doing no
// unaccounted work.
func wholeFree(g GPU) bool { return g.UsedMilli == 0 && !g.Busy }

// strandedOf counts a node's free GPUs and lists those no shape can use: a
// free GPU is usable when some shape fits on the node's free GPUs (and, for
// a fractional shape, partly used ones) in a placement that includes it.
func strandedOf(n *Node, gpus []GPU, shapes []Shape) (free int, stranded []int) {
	for i, g := range gpus {
		if !wholeFree(g) {
			continue
		}
		free++
		usable := false
		for _, s := range shapes {
			if usable = fitsThrough(n.Topology, gpus, s, i); usable {
				break
			}
		}
		if !usable {
			stranded = append(stranded, i)
		}
	}
	return free, stranded
}

// fitsThrough says whether shape s can be placed on the node's free GPUs
// in a set that includes GPU seed: enough free GPUs with the memory, each
// pair connected at least at the shape's rank. Without a connection to
// meet, any free GPUs with the memory do. With one, the search is exact on
// nodes of up to exactSearchGPUs GPUs (a clique of the shape's size
// through seed among the GPUs linked well enough), and grows the set
// greedily from seed, as the planner does, on larger ones
// (docs/analysis.md, Fragmentation).
func fitsThrough(t *hwtopo.Topology, gpus []GPU, s Shape, seed int) bool {
	if !memFits(gpus[seed], s.MemBytes) {
		return false
	}
	linked := s.LinkRank > 0 && s.GPUs > 1
	if linked && (t == nil || len(t.Matrix) != len(gpus)) {
		return false // the connection cannot be checked
	}
	ok := func(a, b int) bool { return !linked || hwtopo.LinkRank(t.Matrix[a][b]) >= s.LinkRank }
	var cands []int
	for i, g := range gpus {
		if i != seed && wholeFree(g) && memFits(g, s.MemBytes) && ok(seed, i) {
			cands = append(cands, i)
		}
	}
	if !linked || len(gpus) > exactSearchGPUs {
		return greedySet(cands, s.GPUs-1, ok)
	}
	return cliqueOf(cands, s.GPUs-1, []int{seed}, ok)
}

// exactSearchGPUs is the largest node whose placements are searched
// exactly: 16 GPUs give at most 2^15 subsets through a GPU.
const exactSearchGPUs = 16

// greedySet takes candidates in order while each is linked to all taken.
func greedySet(cands []int, need int, ok func(a, b int) bool) bool {
	var set []int
	for _, c := range cands {
		if len(set) == need {
			break
		}
		if !slices.ContainsFunc(set, func(x int) bool { return !ok(x, c) }) {
			set = append(set, c)
		}
	}
	return len(set) >= need
}

// cliqueOf says whether need more of cands, each linked to every GPU of
// set and to each other, can join set: a backtracking search.
func cliqueOf(cands []int, need int, set []int, ok func(a, b int) bool) bool {
	if need == 0 {
		return true
	}
	for k, c := range cands {
		if len(cands)-k < need {
			return false
		}
		if slices.ContainsFunc(set, func(x int) bool { return !ok(x, c) }) {
			continue
		}
		if cliqueOf(cands[k+1:], need-1, append(set, c), ok) {
			return true
		}
	}
	return false
}

// fgd is the FGD paper's fragment measure of one node: Σ over shapes of
// their share of the workloads × the node's free GPU capacity that shape
// cannot use (all of it when the shape fits nowhere on the node; else the
// GPUs whose free share is smaller than one GPU of the shape). It returns
// that and the node's free capacity, in GPUs.
func fgd(n *Node, gpus []GPU, shapes []Shape) (unusable, capacity float64) {
	total := 0
	for _, s := range shapes {
		total += s.Workloads
	}
	freeShare := func(g GPU) float64 {
		if g.Busy {
			return 0
		}
		return float64(milliPerGPU-min(g.UsedMilli, milliPerGPU)) / milliPerGPU
	}
	for _, g := range gpus {
		capacity += freeShare(g)
	}
	if total == 0 {
		return 0, capacity
	}
	for _, s := range shapes {
		need := float64(min(s.Milli, milliPerGPU)) / milliPerGPU
		hostable := false
		for i, g := range gpus {
			if s.Milli < milliPerGPU && s.GPUs == 1 {
				hostable = freeShare(g) >= need && (g.MemBytes == 0 || g.MemBytes-min(g.UsedMem, g.MemBytes) >= s.MemBytes)
			} else {
				hostable = wholeFree(g) && fitsThrough(n.Topology, gpus, s, i)
			}
			if hostable {
				break
			}
		}
		f := 0.0
		for _, g := range gpus {
			if fs := freeShare(g); !hostable || fs < need {
				f += fs
			}
		}
		unusable += float64(s.Workloads) / float64(total) * f
	}
	return unusable, capacity
}

// afterPlan replays the plan's moves on a copy of the nodes' GPUs: a moved
// workload leaves its GPUs and takes the ones the move names.
func afterPlan(c *Cluster, plan *Plan) map[string][]GPU {
	gpus := map[string][]GPU{}
	for _, n := range c.Nodes {
		gpus[n.Name] = append([]GPU(nil), n.GPUs...)
	}
	take := func(node string, idx []int, w *Workload, sign int, sharing bool) {
		gs := gpus[node]
		for _, i := range idx {
			if i < 0 || i >= len(gs) {
				continue
			}
			milli := milliPerGPU
			if sharing && w.Milli < milliPerGPU {
				milli = w.Milli
			}
			gs[i].UsedMilli = max(0, min(milliPerGPU, gs[i].UsedMilli+sign*milli))
			if sign > 0 {
				gs[i].UsedMem += w.MemPerGPU
			} else {
				gs[i].UsedMem -= min(gs[i].UsedMem, w.MemPerGPU)
			}
		}
	}
	byID := map[string][]*Workload{}
	for _, w := range c.Workloads {
		byID[w.ID] = append(byID[w.ID], w)
	}
	for _, m := range plan.Moves {
		w := findWorkload(byID[m.Workload], m)
		if w == nil {
			continue
		}
		if m.From != nil {
			take(*m.From, w.GPUs, w, -1, w.Milli < milliPerGPU)
		}
		take(m.To, m.GPUs, w, +1, m.Sharing != nil)
	}
	return gpus
}

// findWorkload is the workload a move moves, among those of its ID (in
// the cluster's order).
func findWorkload(candidates []*Workload, m Move) *Workload {
	for _, w := range candidates {
		if w.ID == m.Workload && (m.From == nil && w.Pending || m.From != nil && !w.Pending && w.Node == *m.From) {
			return w
		}
	}
	return nil
}

// FragmentReport measures an analysis' fragmentation (its fleet, kept
// with analyze.Params.KeepFleet), before and after the plan (made with o
// when nil): the report, and the suggestions of the pools above the
// threshold.
func FragmentReport(ctx context.Context, r *analyze.Report, price PriceFunc, o Options, plan *Plan, fo FragmentOptions) (*Fragmentation, []analyze.Suggestion, error) {
	c, err := FromReport(r, price)
	if err != nil {
		return nil, nil, err
	}
	if plan == nil {
		o.Avoid = draining(r)
		p, err := makePlan(ctx, c, o)
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		if err == nil {
			plan = p
		}
	}
	f := fragment(c, plan, fo)
	return f, fragmentSuggestions(f), nil
}

// fragmentSuggestions are the suggestions of the pools above the
// threshold: where their stranded GPUs are, and what the migration plan
// does about them.
func fragmentSuggestions(f *Fragmentation) []analyze.Suggestion {
	var out []analyze.Suggestion
	for _, p := range f.Pools {
		if !p.Above {
			continue
		}
		var nodes []string
		for _, s := range p.StrandedOn {
			nodes = append(nodes, s.Node)
		}
		where := strings.Join(nodes, ", ")
		if len(nodes) > 5 {
			where = strings.Join(nodes[:5], ", ") + fmt.Sprintf(" and %d more", len(nodes)-5)
		}
		text := fmt.Sprintf("%s pool: %d of its %d free GPUs are stranded (fragmentation ratio %.2f, above %.2f) on %s: no workload shape seen (%s) fits them without a move",
			p.Model, p.StrandedGPUs, p.FreeGPUs, *p.Ratio, f.ThresholdRatio, where, shapeList(p.Shapes))
		switch {
		case p.AfterPlan != nil && p.AfterPlan.Unstranded > 0:
			text += fmt.Sprintf("; the migration plan un-strands %d of them (seedance analyze --report migration)", p.AfterPlan.Unstranded)
		case p.AfterPlan != nil:
			text += "; no move of the migration plan un-strands them: consolidate the workloads beside them, or give them to smaller work (one GPU, MIG, MPS)"
		}
		out = append(out, analyze.Suggestion{Kind: suggestFragmentation, Node: firstOr(nodes), Text: text})
	}
	return out
}

func firstOr(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// shapeList says the shapes' GPU counts: "4, 3 or 2 GPUs".
func shapeList(shapes []Shape) string {
	var counts []string
	for _, s := range shapes {
		c := fmt.Sprint(s.GPUs)
		if s.Milli < milliPerGPU {
			c = fmt.Sprintf("%.2g", float64(s.Milli)/milliPerGPU)
		}
		if !slices.Contains(counts, c) {
			counts = append(counts, c)
		}
	}
	if len(counts) == 0 {
		return "none"
	}
	if len(counts) == 1 {
		return counts[0] + " GPU" + plural(counts[0] != "1")
	}
	return strings.Join(counts[:len(counts)-1], ", ") + " or " + counts[len(counts)-1] + " GPUs"
}

func plural(p bool) string {
	if p {
		return "s"
	}
	return ""
}
