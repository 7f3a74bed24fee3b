package analyze

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/seedance/seedance/pricing"
	"github.com/seedance/seedance/profile"
)

// Cuts is an analysis cut at given times: what it counted inside each
// piece [At[i], At[i+1]), per node and GPU model, and per workload holding
// the GPUs (docs/ledger.md). The figures of the pieces add up to the
// analysis' own: the ledger stores them as rows, one update at a time.
type Cuts struct {
	At    []time.Time
	GPUs  []GPUCut
	Holds []HoldCut
	Work  []WorkCut
	// Queues are the profile's queues in each piece (docs/queues.md,
	// Over time).
	Queues []QueueCut
}

// GPUCut is what a node's GPUs of one model did in one piece; seconds are
// GPU-seconds, each GPU counted by its share of a physical GPU.
type GPUCut struct {
	Piece       int
	Node, Model string
	// ObservedS: covered by samples; IdleS: inside counted idle runs;
	// UtilS: Σ utilization/100 × seconds over UtilCoveredS, the seconds
	// with a utilization reading.
	ObservedS, IdleS, UtilS, UtilCoveredS float64
	CostUSD                               float64 // the idle seconds at the model's price
	EnergyJ                               float64
	EnergyMeasured                        bool
	PriceUSDPerHour                       float64 // of one physical GPU of the model
	PriceSource                           string  // where it came from (pricing.Pricer.PriceOn)
}

// HoldCut is what one workload held of a node's GPUs of one model in one
// piece (Workload nil: what no workload held), in GPU-seconds.
type HoldCut struct {
	Piece               int
	Node, Model         string
	Workload            *profile.Workload
	HeldS, UsedS, IdleS float64
	CostUSD             float64
	EnergyJ             float64 // its share of the GPUs' energy
	HeldUSD             float64 // what the GPU time held cost (unit figures)
}

// Cut reads the sources as Analyze does and cuts what it counted at the
// given times, which must ascend. A piece sees the whole analysis: an idle
// run that began before it counts in it when the whole run lasts the idle
// window, a sample's coverage reaches into the next piece, the energy
// counter's increase counts in the piece of the later reading.
func Cut(ctx context.Context, sources []Source, p Params, at []time.Time) (*Cuts, error) {
	if !sort.SliceIsSorted(at, func(i, j int) bool { return at[i].Before(at[j]) }) {
		return nil, fmt.Errorf("cut times do not ascend")
	}
	p.cut, p.cutAt = true, at
	if p.Attribution == nil {
		p.Attribution = &AttributionParams{GroupBy: []string{"workload"}}
	}
	a, r, err := read(ctx, sources, p)
	if err != nil {
		return nil, err
	}
	a.report(r) // finishes every GPU
	pricer := p.Pricer
	if pricer == nil {
		pricer = pricing.New(nil, pricing.DefaultGPUHourUSD)
	}
	c := &Cuts{At: at}
	qs := a.queueSteps()
	for i := 0; i+1 < len(at); i++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		lo, hi := at[i].Sub(r.Window.Start).Seconds(), at[i+1].Sub(r.Window.Start).Seconds()
		if hi <= lo {
			continue
		}
		for _, n := range a.order {
			a.cutNode(c, i, n, pricer, lo, hi)
		}
		cutQueues(c, qs, i, lo, hi)
	}
	return c, nil
}

// cutNode adds one node's rows for the piece [lo, hi).
func (a *analysis) cutNode(c *Cuts, piece int, n *nodeAcc, pricer *pricing.Pricer, lo, hi float64) {
	gpus := map[string]*GPUCut{}
	holds := map[[2]string]*HoldCut{}
	hold := func(model string, w *profile.Workload) *HoldCut {
		k := [2]string{model, ""}
		if w != nil {
			k[1] = "w:" + w.ID
		}
		h := holds[k]
		if h == nil {
			h = &HoldCut{Piece: piece, Node: n.name, Model: model, Workload: w}
			holds[k] = h
		}
		return h
	}
	for _, g := range n.gpus {
		gc := gpus[g.model]
		if gc == nil {
			price, source := pricer.PriceOn(n.name, n.labels, g.model)
			gc = &GPUCut{Piece: piece, Node: n.name, Model: g.model, PriceUSDPerHour: price, PriceSource: source}
			gpus[g.model] = gc
		}
		gc.EnergyJ += g.energyWithin(lo, hi)
		gc.EnergyMeasured = gc.EnergyMeasured || g.energyMeasured()
		if g.share == 0 {
			continue
		}
		price := a.price(pricer, n, g.model) * g.share
		t := g.within(lo, hi)
		_, covered := g.ext.utilIntegral(lo, hi)
		gc.ObservedS += t.observedS * g.share
		gc.IdleS += t.idleS * g.share
		gc.UtilS += t.utilSum / 100 * g.share
		gc.UtilCoveredS += covered * g.share
		gc.CostUSD += t.idleS / 3600 * price
		holders := holdersOf(n, g)
		for i := range holders {
			if ivs := n.partial(holders[i].ID, a.windowS); ivs == nil || overlap(ivs, lo, hi) > 0 {
				hold(g.model, holders[i]) // held in the piece, even for no observed time
			}
		}
		a.share(n, g, holders, lo, hi, func(i int, t gpuTime, w float64, _ basis) {
			var h *HoldCut
			if i < 0 {
				h = hold(g.model, nil)
			} else {
				h = hold(g.model, holders[i])
			}
			h.HeldS += t.observedS * g.share * w
			h.UsedS += t.utilSum / 100 * g.share * w
			h.IdleS += t.idleS * g.share * w
			h.CostUSD += t.idleS / 3600 * price * w
			h.EnergyJ += t.energyJ * w
			h.HeldUSD += t.observedS / 3600 * price * w
		})
	}
	for _, m := range sortedKeys(gpus) {
		if gc := gpus[m]; gc.ObservedS > 0 || gc.EnergyJ > 0 {
			c.GPUs = append(c.GPUs, *gc)
		}
	}
	keys := make([][2]string, 0, len(holds))
	for k := range holds {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i][0] < keys[j][0] || keys[i][0] == keys[j][0] && keys[i][1] < keys[j][1]
	})
	first := len(c.Holds)
	for _, k := range keys {
		if h := holds[k]; h.Workload != nil || h.HeldS > 0 {
			c.Holds = append(c.Holds, *h)
		}
	}
	cutWork(c, piece, n, c.Holds[first:], gpus)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// energyPiece is one closed sample's coverage, from t to where the next
// piece starts, and v: its power while the GPU's energy counter has fewer
// than two readings, its counter's increase from then on
// (gpuAcc.energy); a gap in the coverage, and the end of the last one,
// is a piece of null v (gpuRare.keepEnergy). 16 bytes: a cut keeps one
// for every sample of every GPU.
type energyPiece struct{ t, v float64 }

// energyWithin is the GPU's energy inside [lo, hi) by the rule of energyJ:
// the counter's increases read in it when the counter has two readings,
// else power × the coverage inside it.
func (g *gpuAcc) energyWithin(lo, hi float64) float64 {
	if g.ext == nil || g.ext.rare == nil {
		return 0
	}
	counter := g.energyN&^powerSeen >= 2
	ps := g.ext.rare.energy
	i := sort.Search(max(0, len(ps)-1), func(i int) bool { return ps[i+1].t > lo })
	sum := 0.0
	for ; i < len(ps)-1 && ps[i].t < hi; i++ {
		switch e := ps[i]; {
		case profile.IsNull(e.v): // a gap, or no power read
		case counter && e.t >= lo:
			sum += e.v
		case !counter:
			sum += e.v * math.Max(0, math.Min(hi, ps[i+1].t)-math.Max(lo, e.t))
		}
	}
	return sum
}

// Held is what one workload held over a span, for Attribute: GPU-hours
// held, used and held while idle, and what that idle time cost.
type Held struct {
	Workload                     profile.Workload
	HeldH, UsedH, IdleH, CostUSD float64
	// Keys, when set, are the row's group keys, one per level (else they
	// are Workload's); Workloads, when above 0, is how many distinct
	// workloads the row sums, all sharing those keys (else it is
	// Workload's own). A ledger sums workloads alike in every key.
	Keys      []string
	Workloads int
}

// Attribute groups what workloads held by the levels, as the attribution
// section of a report does: the ledger's attribution of its rows, with
// what no workload held and the total.
func Attribute(held []Held, unallocated, total Held, levels []string) *Attribution {
	hs := make([]*holding, len(held))
	for i, h := range held {
		hs[i] = &holding{w: &held[i].Workload, f: h.figures(), keys: h.Keys, n: h.Workloads}
	}
	return attribution(hs, unallocated.figures(), total.figures(), levels)
}

func (h Held) figures() figures {
	return figures{held: h.HeldH, used: h.UsedH, idle: h.IdleH, cost: h.CostUSD}
}

// GroupKey is a workload's value at one level of an attribution grouping
// (AttributionParams.GroupBy).
func GroupKey(w profile.Workload, level string) string { return groupKey(w, level) }

// Reach is how far around a second the data must reach for the analysis
// to count it as a read of everything would: the idle window (a run that
// crosses it may have begun, or may go on, that far away), two sample
// intervals (the next sample fixes a sample's coverage) and a second. A
// source asked for a window reads this much before and after it (context
// samples, docs/analysis.md); the ledger settles a second once its data
// reaches this far past it.
func Reach(idleWindow, interval time.Duration) time.Duration {
	return idleWindow + 2*interval + time.Second
}
