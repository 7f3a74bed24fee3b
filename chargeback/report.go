package chargeback

import (
	"slices"
	"strings"

	"github.com/seedance/seedance/analyze"
)

// Report is the window's charges by group: each group's reserved (held)
// and used GPU time and their cost, the unallocated cost it bears, and
// its charge; the unallocated row keeps what was not shared; Total is the
// bill, which the rows' charges sum to, to the cent.
type Report struct {
	ShareIdle   Mode     `json:"share_idle"`
	ShareIdleBy Scope    `json:"share_idle_by"`
	GroupBy     []string `json:"group_by"`
	Period      string   `json:"period"` // what unallocated cost is shared within: "day" (UTC)
	// Carbon says the rows' emissions were asked for (a grid intensity).
	Carbon      bool  `json:"carbon"`
	Rows        []Row `json:"rows"`
	Unallocated Row   `json:"unallocated"`
	Total       Row   `json:"total"`
}

// Row is one group's charges over the window.
type Row struct {
	Key []string `json:"key,omitempty"`
	// ReservedGPUHours: held (allocated, requested) GPU-hours; UsedGPUHours:
	// held × measured utilization; UnusedReservedGPUHours: the difference;
	// IdleGPUHours: held inside counted idle runs.
	ReservedGPUHours       float64 `json:"reserved_gpu_hours"`
	UsedGPUHours           float64 `json:"used_gpu_hours"`
	UnusedReservedGPUHours float64 `json:"unused_reserved_gpu_hours"`
	IdleGPUHours           float64 `json:"idle_gpu_hours"`
	// The same at the GPUs' prices; IdleCostUSD is the report's waste.
	ReservedCostUSD       float64 `json:"reserved_cost_usd"`
	UsedCostUSD           float64 `json:"used_cost_usd"`
	UnusedReservedCostUSD float64 `json:"unused_reserved_cost_usd"`
	IdleCostUSD           float64 `json:"idle_cost_usd"`
	// SharedIdleCostUSD is the unallocated cost the row bears (negative on
	// the unallocated row: what it gave); CostUSD = reserved + shared, in
	// cents that sum to the total's.
	SharedIdleCostUSD float64 `json:"shared_idle_cost_usd"`
	CostUSD           float64 `json:"cost_usd"`
	EnergyKWh         float64 `json:"energy_kwh"`
	// EmissionsKgCO2e is the energy at the grid intensity of its hours,
	// idle energy included; null without a grid intensity, or when an
	// hour with energy has none.
	EmissionsKgCO2e *float64 `json:"emissions_kg_co2e"`
}

// sums are a row's unrounded figures.
type sums struct {
	held, used, idle, heldUSD, usedUSD, idleUSD, shared, energy float64
	emissions                                                   float64
	emissionsUnknown                                            bool
}

func (s *sums) add(l *Line) {
	s.held += l.HeldH
	s.used += l.UsedH
	s.idle += l.IdleH
	s.heldUSD += l.HeldUSD
	s.usedUSD += l.UsedUSD
	s.idleUSD += l.IdleUSD
	s.shared += l.SharedUSD
	s.energy += l.EnergyKWh
	s.emissions += l.EmissionsKg
	s.emissionsUnknown = s.emissionsUnknown || l.EmissionsUnknown
}

func (s sums) row(key []string, carbon bool) Row {
	sig := analyze.Sig
	var emissions *float64
	if carbon && !s.emissionsUnknown {
		e := sig(s.emissions)
		emissions = &e
	}
	return Row{Key: key, EmissionsKgCO2e: emissions, ReservedGPUHours: sig(s.held), UsedGPUHours: sig(s.used), UnusedReservedGPUHours: sig(s.held - s.used), IdleGPUHours: sig(s.idle),
		ReservedCostUSD: cents(s.heldUSD), UsedCostUSD: cents(s.usedUSD), UnusedReservedCostUSD: cents(s.heldUSD - s.usedUSD), IdleCostUSD: cents(s.idleUSD),
		SharedIdleCostUSD: cents(s.shared), EnergyKWh: sig(s.energy)}
}

func cents(usd float64) float64 { return USD(new(Cents).Next(usd)) }

// Summer sums shared lines into a Report, a period at a time.
type Summer struct {
	groups       map[string]*sums
	keys         map[string][]string
	unalloc, all sums
}

// NewSummer starts a report.
func NewSummer() *Summer {
	return &Summer{groups: map[string]*sums{}, keys: map[string][]string{}}
}

// Add counts a period's lines.
func (s *Summer) Add(lines []Line) {
	for i := range lines {
		l := &lines[i]
		s.all.add(l)
		if l.Unallocated() {
			s.unalloc.add(l)
			continue
		}
		k := strings.Join(l.Group, "\x00")
		g := s.groups[k]
		if g == nil {
			g = &sums{}
			s.groups[k], s.keys[k] = g, l.Group
		}
		g.add(l)
	}
}

// Report is the rows, sorted by key, the unallocated row and the total:
// each row's charge rounded so that the charges sum to the total's.
func (s *Summer) Report(mode Mode, scope Scope, levels []string, carbon bool) *Report {
	r := &Report{ShareIdle: mode, ShareIdleBy: scope, GroupBy: levels, Period: "day", Rows: []Row{}, Carbon: carbon}
	ks := make([]string, 0, len(s.groups))
	for k := range s.groups {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	var c Cents
	for _, k := range ks {
		g := s.groups[k]
		row := g.row(s.keys[k], carbon)
		row.CostUSD = USD(c.Next(g.heldUSD + g.shared))
		r.Rows = append(r.Rows, row)
	}
	r.Unallocated = s.unalloc.row(nil, carbon)
	r.Unallocated.CostUSD = USD(c.Next(s.unalloc.heldUSD + s.unalloc.shared))
	r.Total = s.all.row(nil, carbon)
	r.Total.CostUSD = USD(c.Total())
	return r
}
