package analyze

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"

	"github.com/seedance/seedance/pricing"
	"github.com/seedance/seedance/profile"
)

// HolderRules are the rules that name workloads holding GPUs they do not
// use, as Job Defense Shield does for Slurm (docs/analysis.md, Holder
// rules). A rule with a zero threshold is off.
type HolderRules struct {
	// IdleUtilPct and IdleHours: a workload holding GPUs at a mean
	// utilization below IdleUtilPct for at least IdleHours.
	IdleUtilPct, IdleHours float64
	// SmallMemoryPct: a workload using less than this share of its GPUs'
	// memory (a MIG slice would do).
	SmallMemoryPct float64
	// ImbalanceIdlePct: a multi-GPU workload whose GPUs all sit below this
	// but one, which is busy (at least 50 %).
	ImbalanceIdlePct float64
}

// DefaultHolderRules are the documented defaults.
func DefaultHolderRules() HolderRules {
	return HolderRules{IdleUtilPct: 5, IdleHours: 1, SmallMemoryPct: 10, ImbalanceIdlePct: 5}
}

// Suggestion kinds of the holder rules.
const (
	SuggestIdleHolder  = "idle-holder"
	SuggestSmallMemory = "small-memory"
	SuggestImbalanced  = "imbalanced"
)

// slurmJobID is a Slurm job id, of a job or an array task.
var slurmJobID = regexp.MustCompile(`^[0-9]+(_[0-9]+)?$`)

// imbalanceBusyPct is how busy the one working GPU of an imbalanced
// workload is at least.
const imbalanceBusyPct = 50

// holding is what one workload holds on one node: its GPUs, its share of
// each, and the attribution figures of those shares.
type holding struct {
	node      string
	w         *profile.Workload // the analysis' own (not a copy)
	gpus      []*gpuAcc
	f         figures
	pricePH   float64         // USD per hour of its shares
	observedS float64         // the longest any of its GPUs was observed
	memTotal  uint64          // of its GPUs
	basisH    [nBases]float64 // its held GPU-hours by the rule that split them
	// keys and n, when set, are the group keys and the number of
	// workloads of a row that sums several (Held).
	keys []string
	n    int
}

// holdings splits every GPU's time among the running workloads that hold
// it (holdersOf), in one pass: per workload, and what nobody held, and the
// total. Where holders came and went (their tenure), the GPU's time is cut
// into pieces in which the same ones held it (splits).
func (a *analysis) holdings(pricer *pricing.Pricer) (hs []*holding, unalloc, total figures) {
	for _, n := range a.order {
		byID := map[string]*holding{}
		for _, g := range n.gpus {
			if g.share == 0 {
				continue
			}
			price := a.price(pricer, n, g.model) * g.share
			holders := holdersOf(n, g)
			heldS := make([]float64, len(holders))
			meanW := make([]float64, len(holders)) // time-weighted, for the price of a share
			a.share(n, g, holders, 0, a.windowS, func(i int, t gpuTime, w float64, b basis) {
				if i < 0 {
					unalloc.add(t, g.share, w, price)
					return
				}
				hw := holderOf(byID, &hs, n.name, holders[i])
				hw.f.add(t, g.share, w, price)
				hw.basisH[b] += t.observedS * g.share * w / 3600
				heldS[i] += t.observedS
				meanW[i] += w * t.observedS
			})
			for i, w := range holders {
				h := holderOf(byID, &hs, n.name, w)
				h.gpus = append(h.gpus, g)
				if heldS[i] > 0 {
					h.pricePH += price * meanW[i] / heldS[i]
				}
				h.observedS = math.Max(h.observedS, heldS[i])
				h.memTotal += g.memTotal
			}
			total.add(g.whole(), g.share, 1, price)
		}
	}
	return hs, unalloc, total
}

// share calls fn for each stretch of g's time inside [lo, hi) in which the
// same holders held it: once per holder with a share w > 0 of it (i its
// index in holders), and once with i = −1 for the share w nobody held;
// b is the rule that split it (docs/sharing.md).
func (a *analysis) share(n *nodeAcc, g *gpuAcc, holders []*profile.Workload, lo, hi float64, fn func(i int, t gpuTime, w float64, b basis)) {
	a.shareIn(g, holders, a.tenures(n, holders), lo, hi, fn)
}

// tenures are the holders' tenure on n (nil: the whole window).
func (a *analysis) tenures(n *nodeAcc, holders []*profile.Workload) [][]Interval {
	tenure := make([][]Interval, len(holders))
	for i, w := range holders {
		tenure[i] = n.partial(w.ID, a.windowS)
	}
	return tenure
}

// shareIn is share with the holders' tenure given: a caller that shares
// one GPU's time piece by piece finds it once.
func (a *analysis) shareIn(g *gpuAcc, holders []*profile.Workload, tenure [][]Interval, lo, hi float64, fn func(i int, t gpuTime, w float64, b basis)) {
	for _, whole := range splits(g, holders, tenure, lo, hi, a.windowS) {
		shareSplit(g, holders, whole, fn)
	}
}

// shareSplit shares one split of a GPU's time among its holders (measured
// use where the GPU has it), i -1 for the share none of them had.
func shareSplit(g *gpuAcc, holders []*profile.Workload, whole split, fn func(i int, t gpuTime, w float64, b basis)) {
	if g.ext.use() == nil || len(holders) < 2 { // nothing measured: one split (measured's, without its slice)
		splitOne(whole, fn)
		return
	}
	for _, sp := range measured(g, holders, whole) {
		splitOne(sp, fn)
	}
}

// splitOne calls fn with each holder's part of one split, and the part
// no holder has (-1).
func splitOne(sp split, fn func(i int, t gpuTime, w float64, b basis)) {
	left := 1.0
	for i, w := range sp.weights {
		if w == 0 {
			continue
		}
		fn(i, sp.t, w, sp.basis)
		left -= w
	}
	if left > 1e-9 {
		fn(-1, sp.t, left, sp.basis)
	}
}

// holderOf finds or adds the holding of w on a node.
func holderOf(byID map[string]*holding, hs *[]*holding, node string, w *profile.Workload) *holding {
	h := byID[w.ID]
	if h == nil {
		h = &holding{node: node, w: w}
		byID[w.ID] = h
		*hs = append(*hs, h)
	}
	return h
}

// holderSuggestions applies the rules to every workload that holds GPUs.
func holderSuggestions(hs []*holding, rules HolderRules) []Suggestion {
	var out []ownedSuggestion
	for _, h := range hs {
		who := h.w.ID + owners(h.w.Labels)
		if len(h.gpus) == 0 || h.f.held <= 0 {
			continue
		}
		own := func(s Suggestion) { out = append(out, ownedSuggestion{s, h.w.ID, h.w.Labels[profile.ControllerLabel]}) }
		meanUtil := 100 * h.f.used / h.f.held
		gpus := fmt.Sprintf("%d GPU", len(h.gpus))
		if len(h.gpus) > 1 {
			gpus += "s"
		}
		held := FormatDuration(time.Duration(h.observedS * float64(time.Second)))
		if rules.IdleUtilPct > 0 && meanUtil < rules.IdleUtilPct && h.observedS >= rules.IdleHours*3600 {
			s := Suggestion{Kind: SuggestIdleHolder, Node: h.node, SavingsUSDPerHour: round(h.pricePH, 4),
				Text: fmt.Sprintf("%s holds %s on %s at %.1f%% mean utilization over %s: release them, or stop it while it waits; its share costs $%.2f/h",
					who, gpus, h.node, meanUtil, held, h.pricePH)}
			if h.w.Kind == profile.KindJob && slurmJobID.MatchString(h.w.ID) && h.f.idle >= h.f.held*(1-1e-9) {
				s.Text += "; its GPUs sat idle for all of it"
				s.Action = &Action{Cancel: h.w.ID}
			}
			own(s)
		}
		if mem := h.w.GPUMemoryBytes; rules.SmallMemoryPct > 0 && mem > 0 && h.memTotal > 0 && float64(mem) < rules.SmallMemoryPct/100*float64(h.memTotal) {
			own(Suggestion{Kind: SuggestSmallMemory, Node: h.node,
				Text: fmt.Sprintf("%s uses %s of the %s of memory on its %s (%.0f%%): a MIG slice or a shared GPU would hold it",
					who, gib(mem), gib(h.memTotal), gpus, 100*float64(mem)/float64(h.memTotal))})
		}
		if rules.ImbalanceIdlePct > 0 && len(h.gpus) > 1 {
			if busy, ok := oneBusy(h.gpus, rules.ImbalanceIdlePct); ok {
				own(Suggestion{Kind: SuggestImbalanced, Node: h.node,
					Text: fmt.Sprintf("%s keeps 1 of its %d GPUs busy (GPU %d at %.0f%%) while the others stay under %.0f%%: check its data loader and parallelism, or give it 1 GPU",
						who, len(h.gpus), busy.index, busy.utilSum/busy.utilW, rules.ImbalanceIdlePct)})
			}
		}
	}
	return groupByOwner(out)
}

// ownedSuggestion is a suggestion about one workload, and its controller.
type ownedSuggestion struct {
	Suggestion
	workload, owner string
}

// groupByOwner makes one suggestion of the suggestions of one kind about
// several pods of one controller (a Deployment's 32 replicas): the first
// one's text with a count, every workload listed in Workloads, the savings
// summed. The others stay as they are.
func groupByOwner(in []ownedSuggestion) []Suggestion {
	type key struct{ kind, owner string }
	groups := map[key][]int{}
	for i, s := range in {
		if s.owner != "" {
			k := key{s.Kind, s.owner}
			groups[k] = append(groups[k], i)
		}
	}
	var out []Suggestion
	for i, s := range in {
		idx := groups[key{s.Kind, s.owner}]
		switch {
		case s.owner == "" || len(idx) < 2:
			out = append(out, s.Suggestion)
		case idx[0] == i:
			g := s.Suggestion
			g.Action = nil
			nodes := map[string]bool{}
			for _, j := range idx {
				g.Workloads = append(g.Workloads, in[j].workload)
				nodes[in[j].Node] = true
				if j != i {
					g.SavingsUSDPerHour = round(g.SavingsUSDPerHour+in[j].SavingsUSDPerHour, 4)
				}
			}
			g.Text = fmt.Sprintf("%s: %d of its workloads (on %d node(s); the list is in the JSON report), for example %s", s.owner, len(idx), len(nodes), s.Text)
			out = append(out, g)
		}
	}
	return out
}

// oneBusy finds the one busy GPU among otherwise idle ones.
func oneBusy(gpus []*gpuAcc, idlePct float64) (*gpuAcc, bool) {
	var busy *gpuAcc
	for _, g := range gpus {
		if g.utilW <= 0 {
			return nil, false
		}
		switch mean := g.utilSum / g.utilW; {
		case mean >= imbalanceBusyPct && busy == nil:
			busy = g
		case mean >= idlePct:
			return nil, false
		}
	}
	return busy, busy != nil
}

// owners names who answers for a workload, from its team, user and
// account labels: " (team research)", "" when it has none.
func owners(labels map[string]string) string {
	var parts []string
	for _, k := range []string{"team", "user", "account"} {
		if v := labels[k]; v != "" {
			parts = append(parts, k+" "+v)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

func gib(b uint64) string {
	return strings.TrimSuffix(strings.TrimSuffix(fmt.Sprintf("%.1f", float64(b)/(1<<30)), "0"), ".") + " GiB"
}
