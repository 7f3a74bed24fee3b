package chargeback

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Mode is how the cost of GPU time no workload held is shared.
type Mode string

// The sharing modes (docs/chargeback.md).
const (
	// None keeps it on the unallocated row.
	None Mode = "none"
	// Weighted shares it over the scope's holders in proportion to the
	// cost of what each held there in the period.
	Weighted Mode = "weighted"
	// Even splits it equally among the groups that held the scope's GPUs
	// in the period.
	Even Mode = "even"
)

// Scope is where unallocated cost stays when it is shared: on the node it
// was on, in its pool (the GPUs of its model in its cluster), or anywhere
// in its cluster.
type Scope string

// The sharing scopes.
const (
	ScopeNode    Scope = "node"
	ScopePool    Scope = "pool"
	ScopeCluster Scope = "cluster"
)

// ParseMode reads --share-idle.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.ToLower(strings.TrimSpace(s))); m {
	case None, Weighted, Even:
		return m, nil
	}
	return "", fmt.Errorf("--share-idle %q is not none, weighted or even", s)
}

// ParseScope reads --share-idle-by.
func ParseScope(s string) (Scope, error) {
	switch sc := Scope(strings.ToLower(strings.TrimSpace(s))); sc {
	case ScopeNode, ScopePool, ScopeCluster:
		return sc, nil
	}
	return "", fmt.Errorf("--share-idle-by %q is not node, pool or cluster", s)
}

// Line is what one workload held of one node's GPUs of one model in one
// period; Workload "" is what no workload held (unallocated). GPU-hours
// count each GPU by its share of a physical GPU (a MIG slice by its
// slices); costs are at the price of the hours' buckets.
type Line struct {
	Period               time.Time // the period's start (a UTC day)
	Cluster, Node, Model string
	Workload             string
	// Group is the line's group keys, one per level of GroupLevels (the
	// report's grouping); nil for the unallocated line.
	Group       []string
	GroupLevels []string
	// HeldH: held (allocated) GPU-hours; UsedH: held × measured
	// utilization; IdleH: held inside counted idle runs.
	HeldH, UsedH, IdleH float64
	// HeldUSD and UsedUSD are HeldH and UsedH at the GPUs' price; IdleUSD
	// is the idle time's cost (the report's waste).
	HeldUSD, UsedUSD, IdleUSD float64
	EnergyKWh                 float64
	PriceUSDPerHour           float64 // of one physical GPU of the model
	// PriceSource is where the price came from (docs/pricing.md).
	PriceSource string
	// SharedUSD is set by Share: the unallocated cost the line bears, or,
	// on the unallocated line, minus what it gave away.
	SharedUSD float64
	// EmissionsKg is EnergyKWh at the grid intensity of its hours, kg
	// CO2e; EmissionsUnknown says an hour with energy had no intensity.
	EmissionsKg      float64
	EmissionsUnknown bool
	// Holders is how many workloads the line sums, where it sums several
	// (the ledger's lines per owner); 0 is one. Where held time has no
	// price, the unallocated cost is shared evenly per workload.
	Holders int
	// Work is what the workload's counters counted on the node in the
	// period, by unit (docs/units.md): on one line of the workload per
	// node and period, nil when none.
	Work map[string]float64
}

// SameAs says whether o is another part (bucket) of the same line: the
// same period, cluster, node, model and workload.
func (l *Line) SameAs(o *Line) bool {
	return l.Period.Equal(o.Period) && l.Cluster == o.Cluster && l.Node == o.Node && l.Model == o.Model && l.Workload == o.Workload
}

// Merge adds another part of the same line to it.
func (l *Line) Merge(o *Line) {
	l.HeldH, l.UsedH, l.IdleH = l.HeldH+o.HeldH, l.UsedH+o.UsedH, l.IdleH+o.IdleH
	l.HeldUSD, l.UsedUSD, l.IdleUSD = l.HeldUSD+o.HeldUSD, l.UsedUSD+o.UsedUSD, l.IdleUSD+o.IdleUSD
	l.EnergyKWh, l.EmissionsKg = l.EnergyKWh+o.EnergyKWh, l.EmissionsKg+o.EmissionsKg
	l.EmissionsUnknown = l.EmissionsUnknown || o.EmissionsUnknown
	l.PriceUSDPerHour = max(l.PriceUSDPerHour, o.PriceUSDPerHour)
}

// Unallocated says whether the line is what no workload held.
func (l *Line) Unallocated() bool { return l.Workload == "" }

// CostUSD is what the line is charged: what it held, and its share of the
// unallocated cost.
func (l *Line) CostUSD() float64 { return l.HeldUSD + l.SharedUSD }

// Share shares the unallocated cost of one period's lines within each
// scope by the mode, setting SharedUSD. A scope where no workload held
// anything keeps its unallocated cost. The lines' costs sum to the same
// total before and after.
func Share(lines []Line, mode Mode, scope Scope) {
	for i := range lines {
		lines[i].SharedUSD = 0
	}
	if mode == None || mode == "" {
		return
	}
	scopes := map[string][]int{}
	for i := range lines {
		k := lines[i].Cluster
		switch scope {
		case ScopeNode:
			k += "\x00" + lines[i].Node
		case ScopePool:
			k += "\x00" + lines[i].Model
		}
		scopes[k] = append(scopes[k], i)
	}
	for _, idx := range scopes {
		shareScope(lines, idx, mode)
	}
}

// shareScope shares one scope's unallocated cost over its holders.
func shareScope(lines []Line, idx []int, mode Mode) {
	idle := 0.0
	var holders, unalloc []int
	for _, i := range idx {
		switch l := &lines[i]; {
		case l.Unallocated():
			idle += l.HeldUSD
			unalloc = append(unalloc, i)
		case l.HeldH > 0:
			holders = append(holders, i)
		}
	}
	if idle == 0 || len(holders) == 0 {
		return
	}
	for k, w := range weights(lines, holders, mode) {
		lines[holders[k]].SharedUSD = idle * w
	}
	for _, i := range unalloc {
		lines[i].SharedUSD = -lines[i].HeldUSD
	}
}

// weights are the holders' shares of the scope's unallocated cost, which
// sum to 1: by the cost each held (weighted), or equal per group and then
// by cost within the group (even). Held time at no price shares evenly.
func weights(lines []Line, holders []int, mode Mode) []float64 {
	w := make([]float64, len(holders))
	if mode == Weighted {
		return byCost(lines, holders, w)
	}
	groups := map[string][]int{} // positions in holders
	for k, i := range holders {
		g := strings.Join(lines[i].Group, "\x00")
		groups[g] = append(groups[g], k)
	}
	for _, ks := range groups {
		idx := make([]int, len(ks))
		for j, k := range ks {
			idx[j] = holders[k]
		}
		for j, v := range byCost(lines, idx, make([]float64, len(ks))) {
			w[ks[j]] = v / float64(len(groups))
		}
	}
	return w
}

// byCost fills w with each line's share of the lines' held cost (equal
// shares per workload when they cost nothing).
func byCost(lines []Line, idx []int, w []float64) []float64 {
	total, n := 0.0, 0
	for _, i := range idx {
		total += lines[i].HeldUSD
		n += lines[i].holders()
	}
	for k, i := range idx {
		if total > 0 {
			w[k] = lines[i].HeldUSD / total
		} else {
			w[k] = float64(lines[i].holders()) / float64(n)
		}
	}
	return w
}

// holders is how many workloads the line sums.
func (l *Line) holders() int { return max(l.Holders, 1) }

// SortLines orders a period's lines: by cluster, node, model, then the
// workloads (unallocated first).
func SortLines(lines []Line) {
	slices.SortFunc(lines, func(a, b Line) int {
		return strings.Compare(a.Cluster+"\x00"+a.Node+"\x00"+a.Model+"\x00"+a.Workload, b.Cluster+"\x00"+b.Node+"\x00"+b.Model+"\x00"+b.Workload)
	})
}
