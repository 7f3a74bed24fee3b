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

// ScaleWord names a unit's scale in its figures' field names.
func ScaleWord(per float64) string {
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
	w := ScaleWord(u.Per)
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

// UnitRow is one workload's counter of one unit on one node, with what
// the workload held there: what the unit figures are made of (Units). The
// analysis makes them of its holdings; the ledger of its rows.
type UnitRow struct {
	Workload    profile.Workload
	Node        string
	Unit, Model string
	Work        float64
	// Trusted: the counter read an increase in the window and no fault.
	Trusted bool
	// HeldH and IdleH are GPU-hours; CostUSD what those held cost,
	// IdleCostUSD the idle part; EnergyJ the workload's share of its GPUs'
	// energy, EnergyMeasured whether every one of them measures it.
	HeldH, IdleH, CostUSD, IdleCostUSD, EnergyJ float64
	EnergyMeasured                              bool
}

// UnitSections are a report's unit figures: the fleet's by unit, by
// group of the levels, by model, by workload.
type UnitSections struct {
	Fleet     map[string]UnitFigures
	Groups    []UnitGroup
	Models    []UnitGroup
	Workloads []UnitWorkload
}

// Units sums the rows into the unit sections (docs/units.md): a workload
// counts in a unit's figures with all it held, for each counter of that
// unit.
func Units(rows []UnitRow, levels []string) UnitSections {
	fleet, groups, models := unitSet{}, map[string]unitSet{}, map[string]unitSet{}
	keys := map[string][]string{}
	type place struct{ workload, node string }
	own, order := map[place]unitSet{}, []place{}
	ownModel := map[place]string{}
	for i := range rows {
		row := &rows[i]
		key := make([]string, len(levels))
		for l, level := range levels {
			key[l] = groupKey(row.Workload, level)
		}
		gk := strings.Join(key, "\x00")
		keys[gk] = key
		at := place{row.Workload.ID, row.Node}
		if own[at] == nil {
			own[at] = unitSet{}
			order = append(order, at)
		}
		ownModel[at] = joinModel(ownModel[at], row.Model)
		for _, s := range []unitSet{own[at], fleet, setOf(groups, gk), setOf(models, orNone(row.Model))} {
			s.add(row)
		}
	}
	out := UnitSections{}
	if len(fleet) == 0 {
		return out
	}
	out.Fleet = fleet.figures()
	for _, gk := range sortedKeys(groups) {
		out.Groups = append(out.Groups, UnitGroup{Key: keys[gk], Units: groups[gk].figures()})
	}
	for _, m := range sortedKeys(models) {
		out.Models = append(out.Models, UnitGroup{Key: []string{m}, Units: models[m].figures()})
	}
	for _, at := range order {
		out.Workloads = append(out.Workloads, UnitWorkload{Workload: at.workload, Node: at.node, Model: ownModel[at], Units: own[at].figures()})
	}
	sort.SliceStable(out.Workloads, func(i, j int) bool {
		a, b := out.Workloads[i], out.Workloads[j]
		return a.Workload < b.Workload || a.Workload == b.Workload && a.Node < b.Node
	})
	return out
}

// unitAcc sums what one unit's figures are made of.
type unitAcc struct {
	work, held, idle, cost, idleCost, energyJ float64
	workloads                                 int
	untrusted, noEnergy                       bool
}

// add counts one row.
func (u *unitAcc) add(r *UnitRow) {
	u.workloads++
	u.work += r.Work
	u.untrusted = u.untrusted || !r.Trusted
	u.held += r.HeldH
	u.idle += r.IdleH
	u.cost += r.CostUSD
	u.idleCost += r.IdleCostUSD
	u.energyJ += r.EnergyJ
	u.noEnergy = u.noEnergy || !r.EnergyMeasured
}

// figures are the unit's figures from the sums.
func (u *unitAcc) figures(unit string) UnitFigures {
	f := UnitFigures{Unit: unit, Per: unitScale(unit), Workloads: u.workloads, HeldGPUHours: sig(u.held), IdleGPUHours: sig(u.idle), CostUSD: sig(u.cost)}
	if !u.noEnergy {
		f.EnergyKWh = num(u.energyJ / 3.6e6)
	}
	if u.untrusted {
		return f
	}
	f.Work = num(u.work)
	if u.work <= 0 {
		return f
	}
	f.USDPer = num(u.cost / u.work * f.Per)
	f.IdleUSDPer = num(u.idleCost / u.work * f.Per)
	f.BusyUSDPer = num((u.cost - u.idleCost) / u.work * f.Per)
	if u.cost > 0 {
		f.IdleShare = num(u.idleCost / u.cost)
	}
	if !u.noEnergy {
		f.KWhPer = num(u.energyJ / 3.6e6 / u.work * f.Per)
	}
	return f
}

// unitSet sums unit figures by unit.
type unitSet map[string]*unitAcc

func (s unitSet) add(r *UnitRow) {
	u := s[r.Unit]
	if u == nil {
		u = &unitAcc{}
		s[r.Unit] = u
	}
	u.add(r)
}

func (s unitSet) figures() map[string]UnitFigures {
	out := make(map[string]UnitFigures, len(s))
	for unit, u := range s {
		out[unit] = u.figures(unit)
	}
	return out
}

// units fills r's unit figures from the holdings (Units). Counters of a
// workload that holds no GPU are left out with a warning (they would
// price work at nothing); counter faults are warnings naming their series.
func (a *analysis) units(r *Report, hs []*holding, levels []string) {
	byNode := map[string]map[string]*holding{}
	for _, h := range hs {
		if byNode[h.node] == nil {
			byNode[h.node] = map[string]*holding{}
		}
		byNode[h.node][h.w.ID] = h
	}
	var rows []UnitRow
	var faults, orphans []string
	for _, n := range a.order {
		for _, id := range sortedKeys(n.work) {
			h := byNode[n.name][id]
			if h == nil || h.f.held <= 0 {
				orphans = append(orphans, id+" on "+n.name)
				continue
			}
			measured := true
			for _, g := range h.gpus {
				measured = measured && g.energyMeasured()
			}
			for _, c := range n.work[id] {
				if c.fault != "" {
					faults = append(faults, c.fault)
				}
				rows = append(rows, UnitRow{Workload: *h.w, Node: n.name, Unit: c.unit, Model: c.model, Work: c.work, Trusted: c.fault == "" && c.counted,
					HeldH: h.f.held, IdleH: h.f.idle, CostUSD: h.f.heldCost, IdleCostUSD: h.f.cost, EnergyJ: h.f.energy, EnergyMeasured: measured})
			}
		}
	}
	if len(faults) > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("work counter(s) that cannot be trusted, their unit figures null: %s", strings.Join(faults, "; ")))
	}
	if len(orphans) > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("work counter(s) of workloads that hold no GPU in the profile, left out: %s", strings.Join(orphans, ", ")))
	}
	u := Units(rows, levels)
	r.Units, r.UnitGroups, r.UnitModels, r.UnitWorkloads = u.Fleet, u.Groups, u.Models, u.Workloads
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
