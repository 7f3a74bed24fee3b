package analyze

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/seedance/seedance/profile"
)

// UnitFigures are what one unit of work cost a set of workloads
// (docs/units.md): the work their counters read in the window, the
// GPU-hours they held and what those cost, their energy, and per Per units
// the cost, the part of it idle time made, and the energy. A figure that
// no measurement gives, or that a counter fault makes untrustworthy, is
// null; so is every unit figure when no work was done.
type UnitFigures struct {
	Unit      string
	Per       float64 // 1,000 requests, 1,000,000 tokens, 1 of a unit the user named
	Workloads int     // the workloads whose counters count it
	Work      *float64
	// HeldGPUHours, IdleGPUHours and CostUSD (held × price) are the
	// counting workloads'; EnergyKWh their share of their GPUs' energy,
	// null when a GPU of theirs measures none.
	HeldGPUHours, IdleGPUHours, CostUSD float64
	EnergyKWh                           *float64
	// USDPer is CostUSD ÷ Work × Per; IdleUSDPer the part of it the idle
	// time held makes; BusyUSDPer what is left with the idle time removed
	// at the same work; IdleShare = IdleUSDPer ÷ USDPer.
	USDPer, IdleUSDPer, BusyUSDPer, IdleShare, KWhPer *float64
}

// scaleWord names a unit's scale in its figures' field names.
func scaleWord(per float64) string {
	switch per {
	case 1e3:
		return "thousand"
	case 1e6:
		return "million"
	}
	return "unit"
}

// unitScale is how many of a unit its figures are given for.
func unitScale(unit string) float64 {
	switch unit {
	case profile.UnitRequests:
		return 1e3
	case profile.UnitInputTokens, profile.UnitOutputTokens:
		return 1e6
	}
	return 1
}

// MarshalJSON names the per-unit figures by the unit's scale:
// usd_per_million for tokens, kwh_per_thousand for requests, usd_per_unit
// for a unit the user named.
func (u UnitFigures) MarshalJSON() ([]byte, error) {
	w := scaleWord(u.Per)
	return json.Marshal(map[string]any{
		"per": u.Per, "workloads": u.Workloads, "work": u.Work,
		"held_gpu_hours": u.HeldGPUHours, "idle_gpu_hours": u.IdleGPUHours, "cost_usd": u.CostUSD, "energy_kwh": u.EnergyKWh,
		"usd_per_" + w: u.USDPer, "idle_usd_per_" + w: u.IdleUSDPer, "busy_usd_per_" + w: u.BusyUSDPer,
		"idle_share": u.IdleShare, "kwh_per_" + w: u.KWhPer,
	})
}

// UnitGroup is one attribution group's unit figures, by unit.
type UnitGroup struct {
	Key   []string               `json:"key"`
	Units map[string]UnitFigures `json:"units"`
}

// UnitWorkload is one workload's unit figures on one node, by unit.
type UnitWorkload struct {
	Workload string                 `json:"workload"`
	Node     string                 `json:"node"`
	Model    string                 `json:"model,omitempty"`
	Units    map[string]UnitFigures `json:"units"`
}

// unitAcc sums what one unit's figures are made of.
type unitAcc struct {
	work, held, idle, cost, idleCost, energyJ float64
	workloads                                 int
	untrusted, noEnergy                       bool
}

// add counts one workload's counter c and what it held, h.
func (u *unitAcc) add(c *workAcc, h *holding) {
	u.workloads++
	u.work += c.work
	u.untrusted = u.untrusted || c.fault != "" || !c.counted
	u.held += h.f.held
	u.idle += h.f.idle
	u.cost += h.f.heldCost
	u.idleCost += h.f.cost
	u.energyJ += h.f.energy
	for _, g := range h.gpus {
		u.noEnergy = u.noEnergy || !g.energyMeasured()
	}
}

// figures are the unit's figures from the sums.
func (u *unitAcc) figures(unit string) UnitFigures {
	f := UnitFigures{Unit: unit, Per: unitScale(unit), Workloads: u.workloads, HeldGPUHours: sig(u.held), IdleGPUHours: sig(u.idle), CostUSD: sig(u.cost)}
	if !u.noEnergy {
		f.EnergyKWh = sigPtr(u.energyJ / 3.6e6)
	}
	if u.untrusted {
		return f
	}
	f.Work = sigPtr(u.work)
	if u.work <= 0 {
		return f
	}
	f.USDPer = sigPtr(u.cost / u.work * f.Per)
	f.IdleUSDPer = sigPtr(u.idleCost / u.work * f.Per)
	f.BusyUSDPer = sigPtr((u.cost - u.idleCost) / u.work * f.Per)
	if u.cost > 0 {
		f.IdleShare = sigPtr(u.idleCost / u.cost)
	}
	if !u.noEnergy {
		f.KWhPer = sigPtr(u.energyJ / 3.6e6 / u.work * f.Per)
	}
	return f
}

func sigPtr(x float64) *float64 {
	v := sig(x)
	return &v
}

// unitSet sums unit figures by unit.
type unitSet map[string]*unitAcc

func (s unitSet) add(c *workAcc, h *holding) {
	u := s[c.unit]
	if u == nil {
		u = &unitAcc{}
		s[c.unit] = u
	}
	u.add(c, h)
}

func (s unitSet) figures() map[string]UnitFigures {
	out := make(map[string]UnitFigures, len(s))
	for unit, u := range s {
		out[unit] = u.figures(unit)
	}
	return out
}

// units fills r's unit economics from the holdings: by workload, by
// attribution group, by model, and the fleet's. Counters of a workload
// that holds no GPU are left out with a warning (they would price work at
// nothing); counter faults are warnings naming their series.
func (a *analysis) units(r *Report, hs []*holding, levels []string) {
	byNode := map[string]map[string]*holding{}
	for _, h := range hs {
		if byNode[h.node] == nil {
			byNode[h.node] = map[string]*holding{}
		}
		byNode[h.node][h.w.ID] = h
	}
	fleet, groups, models := unitSet{}, map[string]unitSet{}, map[string]unitSet{}
	keys := map[string][]string{}
	var faults, orphans []string
	for _, n := range a.order {
		for _, id := range sortedKeys(n.work) {
			h := byNode[n.name][id]
			if h == nil || h.f.held <= 0 {
				orphans = append(orphans, id+" on "+n.name)
				continue
			}
			row := UnitWorkload{Workload: id, Node: n.name}
			own := unitSet{}
			key := make([]string, len(levels))
			for l, level := range levels {
				key[l] = groupKey(*h.w, level)
			}
			gk := strings.Join(key, "\x00")
			keys[gk] = key
			for _, c := range n.work[id] {
				if c.fault != "" {
					faults = append(faults, c.fault)
				}
				row.Model = joinModel(row.Model, c.model)
				for _, s := range []unitSet{own, fleet, setOf(groups, gk), setOf(models, orNone(c.model))} {
					s.add(c, h)
				}
			}
			row.Units = own.figures()
			r.UnitWorkloads = append(r.UnitWorkloads, row)
		}
	}
	if len(faults) > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("work counter(s) that cannot be trusted, their unit figures null: %s", strings.Join(faults, "; ")))
	}
	if len(orphans) > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("work counter(s) of workloads that hold no GPU in the profile, left out: %s", strings.Join(orphans, ", ")))
	}
	if len(fleet) == 0 {
		return
	}
	r.Units = fleet.figures()
	for _, gk := range sortedKeys(groups) {
		r.UnitGroups = append(r.UnitGroups, UnitGroup{Key: keys[gk], Units: groups[gk].figures()})
	}
	for _, m := range sortedKeys(models) {
		r.UnitModels = append(r.UnitModels, UnitGroup{Key: []string{m}, Units: models[m].figures()})
	}
	sort.SliceStable(r.UnitWorkloads, func(i, j int) bool { return r.UnitWorkloads[i].Workload < r.UnitWorkloads[j].Workload })
}

func setOf(m map[string]unitSet, k string) unitSet {
	if m[k] == nil {
		m[k] = unitSet{}
	}
	return m[k]
}

// joinModel is the models a workload's counters name, "a,b" when several.
func joinModel(have, model string) string {
	switch {
	case model == "" || have == model || strings.Contains(","+have+",", ","+model+","):
		return have
	case have == "":
		return model
	}
	return have + "," + model
}
