package analyze

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/seedance/seedance/profile"
)

// AttributionParams choose how the GPU time is grouped: by "namespace",
// "workload", "controller", "user", "account" or "team=LABEL" (a workload
// label), one level
// each, outermost first (docs/analysis.md, Attribution).
type AttributionParams struct {
	GroupBy []string
	// Rules name the workloads that hold GPUs they do not use; each firing
	// is a suggestion.
	Rules HolderRules
	// UnitsOnly splits the GPUs' time among their holders for the unit
	// figures alone (docs/units.md): no attribution section, no holder
	// suggestions.
	UnitsOnly bool
}

// ErrGroupBy marks a --group-by that names no grouping.
var ErrGroupBy = fmt.Errorf("invalid --group-by")

// CheckGroupBy validates the levels of a grouping.
func CheckGroupBy(levels []string) error {
	if len(levels) == 0 {
		return fmt.Errorf("%w: give at least one of namespace, workload, controller, user, account, model or team=LABEL", ErrGroupBy)
	}
	for _, l := range levels {
		switch {
		case l == "namespace", l == "workload", l == "controller", l == "user", l == "account", l == "model":
		case strings.HasPrefix(l, "team=") && len(l) > len("team="):
		default:
			return fmt.Errorf("%w %q: choose namespace, workload, controller, user, account, model or team=LABEL (a pod label, e.g. team=team)", ErrGroupBy, l)
		}
	}
	return nil
}

// labels are the workload labels the grouping reads.
func (p *AttributionParams) labels() []string {
	out := []string{profile.ControllerLabel, "team", "user", "account"} // and the owners the holder rules name
	for _, l := range p.GroupBy {
		if label, ok := strings.CutPrefix(l, "team="); ok {
			out = append(out, label)
		}
	}
	return out
}

// Attribution is the report's attribution section: who held the GPU time,
// how much of it they used, and the idle time they held.
type Attribution struct {
	GroupBy []string           `json:"group_by"`
	Groups  []AttributionGroup `json:"groups"`
	// Unallocated is the GPU time no workload held.
	Unallocated AttributionFigures `json:"unallocated"`
	// Total is the groups and the unallocated time together: its idle GPU-hours
	// are the summary's.
	Total AttributionFigures `json:"total"`
}

// AttributionGroup is one group's figures; Key holds one value per level.
type AttributionGroup struct {
	Key       []string `json:"key"`
	Workloads int      `json:"workloads"`
	AttributionFigures
	// Basis is the rule that split the GPUs its workloads held
	// (docs/sharing.md): "whole" (held alone), "measured", "requested",
	// "even", or "mixed" when several did; BasisGPUHours gives each
	// one's held GPU-hours when mixed.
	Basis         string             `json:"basis,omitempty"`
	BasisGPUHours map[string]float64 `json:"basis_gpu_hours,omitempty"`
}

// AttributionFigures are the GPU-hours held (for Unallocated: held by no
// workload), used (held × utilization), held while idle (the share of the
// GPU's counted idle runs) and what that idle time cost.
type AttributionFigures struct {
	HeldGPUHours     float64  `json:"held_gpu_hours"`
	UsedGPUHours     float64  `json:"used_gpu_hours"`
	IdleHeldGPUHours float64  `json:"idle_held_gpu_hours"`
	WasteCostUSD     float64  `json:"waste_cost_usd"`
	Efficiency       *float64 `json:"efficiency"` // used ÷ held; null when nothing was held
}

// figures accumulates unrounded AttributionFigures.
// heldCost (held × price) and energy (its share of the GPUs' joules) are
// for unit economics (docs/units.md).
type figures struct{ held, used, idle, cost, heldCost, energy float64 }

// add counts the weight w of a stretch t of a GPU whose share of a
// physical GPU is share and which costs price per hour.
func (f *figures) add(t gpuTime, share, w, price float64) {
	f.held += t.observedS * share * w / 3600
	f.used += t.utilSum / 100 * share * w / 3600
	f.idle += t.idleS * share * w / 3600
	f.cost += t.idleS / 3600 * price * w
	f.heldCost += t.observedS / 3600 * price * w
	f.energy += t.energyJ * w
}

func (f figures) report() AttributionFigures {
	out := AttributionFigures{HeldGPUHours: sig(f.held), UsedGPUHours: sig(f.used), IdleHeldGPUHours: sig(f.idle), WasteCostUSD: sig(f.cost)}
	if f.held > 0 {
		e := sig(f.used / f.held)
		out.Efficiency = &e
	}
	return out
}

// attribution groups the workloads' holdings by the levels.
func attribution(hs []*holding, unalloc, total figures, levels []string) *Attribution {
	type group struct {
		key       []string
		f         figures
		workloads map[string]bool
		summed    int // workloads counted by rows that sum several
		basisH    [nBases]float64
	}
	groups := map[string]*group{}
	for _, h := range hs {
		key := h.keys
		if key == nil {
			key = make([]string, len(levels))
			for l, level := range levels {
				key[l] = groupKey(*h.w, level)
			}
		}
		id := strings.Join(key, "\x00")
		gr := groups[id]
		if gr == nil {
			gr = &group{key: key, workloads: map[string]bool{}}
			groups[id] = gr
		}
		if h.n > 0 {
			gr.summed += h.n
		} else {
			gr.workloads[h.w.ID] = true
		}
		gr.f.held += h.f.held
		gr.f.used += h.f.used
		gr.f.idle += h.f.idle
		gr.f.cost += h.f.cost
		for b, v := range h.basisH {
			gr.basisH[b] += v
		}
	}
	out := &Attribution{GroupBy: append([]string(nil), levels...), Groups: []AttributionGroup{}, Unallocated: unalloc.report(), Total: total.report()}
	for _, gr := range groups {
		g := AttributionGroup{Key: gr.key, Workloads: len(gr.workloads) + gr.summed, AttributionFigures: gr.f.report()}
		g.Basis, g.BasisGPUHours = basisOf(gr.basisH)
		out.Groups = append(out.Groups, g)
	}
	sort.Slice(out.Groups, func(i, j int) bool {
		a, b := out.Groups[i], out.Groups[j]
		if a.WasteCostUSD != b.WasteCostUSD {
			return a.WasteCostUSD > b.WasteCostUSD
		}
		return slices.Compare(a.Key, b.Key) < 0
	})
	return out
}

// holdersOf lists the running workloads holding g: a workload holds a GPU
// by its index, a MIG device by its UUID.
func holdersOf(n *nodeAcc, g *gpuAcc) []*profile.Workload {
	var holders []*profile.Workload
	for i := range n.workloads.list {
		w := &n.workloads.list[i]
		if w.State == profile.StatePending {
			continue
		}
		if g.mig != nil && slices.Contains(w.GPUUUIDs, g.uuid) || g.mig == nil && slices.Contains(w.GPUs, int(g.index)) {
			holders = append(holders, w)
		}
	}
	return holders
}

// controllerSuffix is what Kubernetes adds to a controller's name to name
// its pods: a ReplicaSet's hash and a random suffix (Deployments), a random
// suffix (Jobs, DaemonSets), an ordinal (StatefulSets).
var controllerSuffix = regexp.MustCompile(`(-[0-9a-f]{5,10}-[a-z0-9]{5}|-[a-z0-9]{5}|-[0-9]+)$`)

// groupKey is a workload's value at one level of the grouping.
func groupKey(w profile.Workload, level string) string {
	ns := w.Labels["namespace"]
	switch level {
	case "namespace":
		if ns == "" {
			return "(none)"
		}
		return ns
	case "workload":
		return w.ID
	case "controller":
		name := w.Labels[profile.ControllerLabel]
		if name == "" {
			name = w.Name
			if w.Kind == profile.KindPod {
				name = controllerSuffix.ReplaceAllString(name, "")
			}
		}
		if ns != "" {
			return ns + "/" + name
		}
		return name
	case "model":
		if m := w.Labels[ModelLabel]; m != "" {
			return m
		}
		return "(none)"
	}
	// user and account are the labels a Slurm job has (--slurm, or its
	// processes' environment); team=LABEL is any label.
	label, _ := strings.CutPrefix(level, "team=")
	if v := w.Labels[label]; v != "" {
		return v
	}
	return "(none)"
}

// basisOf names the rule that split a group's GPU-hours, and when several
// did, each one's hours; "" when no hours say (a ledger keeps none).
func basisOf(h [nBases]float64) (string, map[string]float64) {
	name, n := "", 0 // "": not known (a ledger's rows)
	for b, v := range h {
		if v > 0 {
			name, n = basis(b).String(), n+1
		}
	}
	if n < 2 {
		return name, nil
	}
	by := map[string]float64{}
	for b, v := range h {
		if v > 0 {
			by[basis(b).String()] = sig(v)
		}
	}
	return "mixed", by
}
