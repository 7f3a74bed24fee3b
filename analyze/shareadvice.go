package analyze

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/seedance/seedance/pricing"
	"github.com/seedance/seedance/profile"
)

// Suggestion kinds about shared GPUs (docs/sharing.md, Advice).
const (
	// SuggestConsolidateShared: shared GPUs whose pods together use
	// little would carry them on fewer GPUs.
	SuggestConsolidateShared = "consolidate-shared"
	// SuggestMIGReshape: a node's MIG devices in use would fit on fewer
	// GPUs; re-partitioning frees one.
	SuggestMIGReshape = "mig-reshape"
)

// Thresholds of the advice on shared GPUs: a shared GPU below
// shareLowPct mean utilization is a candidate to pack, and packed GPUs
// are filled to sharePackPct.
const (
	shareLowPct  = 50
	sharePackPct = 80
	migSlices    = 7
)

// sharingSuggestions advises on shared GPUs: packing the pods of lightly
// used shared GPUs of one model onto fewer of them, and re-partitioning
// MIG layouts that strand slices.
func (a *analysis) sharingSuggestions(pricer *pricing.Pricer) []Suggestion {
	out := a.consolidateShared(pricer)
	for _, n := range a.order {
		if s, ok := a.migReshape(pricer, n); ok {
			out = append(out, s)
		}
	}
	return out
}

// sharedGPU is a GPU several workloads hold, and its mean utilization.
type sharedGPU struct {
	node        *nodeAcc
	g           *gpuAcc
	pods        int
	meanPct     float64
	pricePerGPU float64
}

// consolidateShared packs, model by model, the shared GPUs (not MIG
// devices) below shareLowPct: their pods' summed mean utilization fits on
// ⌈Σ ÷ sharePackPct⌉ GPUs; the rest are freed.
func (a *analysis) consolidateShared(pricer *pricing.Pricer) []Suggestion {
	byModel := map[string][]sharedGPU{}
	for _, n := range a.order {
		for _, g := range n.gpus {
			if g.mig != nil || g.share == 0 || g.utilW <= 0 {
				continue
			}
			holders := holdersOf(n, g)
			if mean := g.utilSum / g.utilW; len(holders) >= 2 && mean < shareLowPct {
				byModel[g.model] = append(byModel[g.model], sharedGPU{n, g, len(holders), mean, a.price(pricer, n, g.model)})
			}
		}
	}
	var out []Suggestion
	for _, model := range sortedKeys(byModel) {
		gs := byModel[model]
		sort.SliceStable(gs, func(i, j int) bool { return gs[i].meanPct < gs[j].meanPct })
		sum, pods, price := 0.0, 0, 0.0
		names := make([]string, len(gs))
		for i, s := range gs {
			sum, pods, price = sum+s.meanPct, pods+s.pods, price+s.pricePerGPU
			names[i] = fmt.Sprintf("%s GPU %d (%.0f%%)", s.node.name, s.g.index, s.meanPct)
		}
		need := max(1, int(math.Ceil(sum/sharePackPct-1e-9)))
		freed := len(gs) - need
		if freed < 1 {
			continue
		}
		save := price / float64(len(gs)) * float64(freed)
		out = append(out, Suggestion{Kind: SuggestConsolidateShared, Node: gs[0].node.name, SavingsUSDPerHour: round(save, 4),
			Text: fmt.Sprintf("%d shared %s GPUs carry %d pods that together use %.0f%% of one GPU: pack them onto %d (more time-slicing replicas or MPS clients per GPU, or smaller fractional requests) to free %d GPU(s), $%.2f/h; the least used first: %s",
				len(gs), model, pods, sum, need, freed, save, strings.Join(names, ", "))})
	}
	return out
}

// migParent is a GPU in MIG mode on one node: the slices of its MIG
// devices that workloads hold, and those devices.
type migParent struct {
	uuid, model string
	held        int
	devices     []*gpuAcc // held ones
}

// migReshape finds on n the GPU in MIG mode whose held MIG devices would
// fit in the slices the node's other MIG GPUs leave free (first fit,
// largest first): re-partitioning them frees it. Slices count as the
// profile names them (3g: 3 of 7); a GPU's placement rules (which
// profiles may sit side by side) are not checked.
func (a *analysis) migReshape(pricer *pricing.Pricer, n *nodeAcc) (Suggestion, bool) {
	byParent := map[string]*migParent{}
	var order []string
	for _, g := range n.gpus {
		if g.mig == nil || len(holdersOf(n, g)) == 0 {
			continue
		}
		p := byParent[g.mig.ParentUUID]
		if p == nil {
			p = &migParent{uuid: g.mig.ParentUUID, model: g.model}
			byParent[p.uuid] = p
			order = append(order, p.uuid)
		}
		p.held += slicesOf(g)
		p.devices = append(p.devices, g)
	}
	if len(order) < 2 {
		return Suggestion{}, false
	}
	sort.SliceStable(order, func(i, j int) bool { return byParent[order[i]].held < byParent[order[j]].held })
	victim := byParent[order[0]]
	free := make([]int, len(order)-1)
	for i, u := range order[1:] {
		free[i] = migSlices - byParent[u].held
	}
	devs := append([]*gpuAcc(nil), victim.devices...)
	sort.SliceStable(devs, func(i, j int) bool { return slicesOf(devs[i]) > slicesOf(devs[j]) })
	var moves []string
	for _, d := range devs {
		k := -1
		for i := range free {
			if free[i] >= slicesOf(d) {
				k = i
				break
			}
		}
		if k < 0 {
			return Suggestion{}, false
		}
		free[k] -= slicesOf(d)
		moves = append(moves, fmt.Sprintf("%s (%s) to GPU %s", d.mig.Profile, workloadNames(holdersOf(n, d)), order[k+1]))
	}
	price := a.price(pricer, n, victim.model)
	return Suggestion{Kind: SuggestMIGReshape, Node: n.name, SavingsUSDPerHour: round(price, 4),
		Text: fmt.Sprintf("the MIG devices in use hold %d of GPU %s's %d slices, and fit in the slices the node's other MIG GPUs leave free: re-partition them to take %s, and GPU %s is free for whole-GPU work or release, $%.2f/h (check the GPU's MIG placement rules)",
			victim.held, victim.uuid, migSlices, strings.Join(moves, ", "), victim.uuid, price)}, true
}

// slicesOf is a MIG device's GPU-instance slices.
func slicesOf(g *gpuAcc) int { return int(math.Round(g.share * migSlices)) }

func workloadNames(ws []*profile.Workload) string {
	ids := make([]string, len(ws))
	for i, w := range ws {
		ids[i] = w.ID
	}
	return strings.Join(ids, ", ")
}
