package chargeback

import (
	"reflect"
	"testing"
)

// TestSummerByHand: splitDay's lines (each used half its held time at its
// price and idle a quarter) shared weighted by node, summed by team,
// worked by hand row by row. n1's unallocated $14 (A 5 h at $2, B 4 h at
// $1) goes to its holders by cost, w1 $20, w2 $10, w3 $4 of $34; n2's $12
// has no holder and stays unallocated:
//
//	ml: w1 10 h at $2, w3 4 h at $1: reserved 14 h $24, used 7 h $12,
//	    unused 7 h $12, idle 3.5 h $6, energy 1.4 kWh, shared
//	    14 × 24/34 = $9.88, charged $33.88
//	cv: w2 5 h at $2: reserved 5 h $10, used 2.5 h $5, unused 2.5 h $5,
//	    idle 1.25 h $2.50, energy 0.5 kWh, shared 14 × 10/34 = $4.12,
//	    charged $14.12
//	unallocated: 15 h $26 (n1 A 5 h, B 4 h, n2 6 h), used $13, idle
//	    $6.50, gave $14, keeps $12
//
// The total is the bill, $60, which the charges add up to.
func TestSummerByHand(t *testing.T) {
	lines := splitDay()
	for i := range lines {
		lines[i].UsedUSD, lines[i].IdleUSD = lines[i].HeldUSD/2, lines[i].HeldUSD/4
	}
	Share(lines, Weighted, ScopeNode)
	s := NewSummer()
	s.Add(lines)
	r := s.Report(Weighted, ScopeNode, []string{"team=team"}, false)
	want := []Row{
		{Key: []string{"cv"}, ReservedGPUHours: 5, UsedGPUHours: 2.5, UnusedReservedGPUHours: 2.5, IdleGPUHours: 1.25, ReservedCostUSD: 10, UsedCostUSD: 5,
			UnusedReservedCostUSD: 5, IdleCostUSD: 2.5, SharedIdleCostUSD: 4.12, CostUSD: 14.12, EnergyKWh: 0.5},
		{Key: []string{"ml"}, ReservedGPUHours: 14, UsedGPUHours: 7, UnusedReservedGPUHours: 7, IdleGPUHours: 3.5, ReservedCostUSD: 24, UsedCostUSD: 12,
			UnusedReservedCostUSD: 12, IdleCostUSD: 6, SharedIdleCostUSD: 9.88, CostUSD: 33.88, EnergyKWh: 1.4},
	}
	if !reflect.DeepEqual(r.Rows, want) {
		t.Errorf("rows\n%+v\nwant\n%+v", r.Rows, want)
	}
	unalloc := Row{ReservedGPUHours: 15, UsedGPUHours: 7.5, UnusedReservedGPUHours: 7.5, IdleGPUHours: 3.75, ReservedCostUSD: 26, UsedCostUSD: 13,
		UnusedReservedCostUSD: 13, IdleCostUSD: 6.5, SharedIdleCostUSD: -14, CostUSD: 12, EnergyKWh: 1.5}
	if !reflect.DeepEqual(r.Unallocated, unalloc) {
		t.Errorf("unallocated %+v, want %+v", r.Unallocated, unalloc)
	}
	if r.Total.CostUSD != 60 || r.Total.ReservedCostUSD != 60 || r.Total.SharedIdleCostUSD != 0 || r.Total.ReservedGPUHours != 34 {
		t.Errorf("total %+v, want $60 for 34 h, nothing shared in sum", r.Total)
	}
	if r.Rows[0].CostUSD+r.Rows[1].CostUSD+r.Unallocated.CostUSD != r.Total.CostUSD {
		t.Errorf("the rows' charges do not add up to the total")
	}
}
