package render

import (
	"testing"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/report"
)

// TestBandOf: a band is [low, high): a value exactly at the idle
// threshold is not idle, one at 50 % is in 50–80 %, no sample is a gap.
func TestBandOf(t *testing.T) {
	bands := utilBands(15)
	for _, tt := range []struct {
		v    *float64
		want int
	}{
		{ptr(0), 0}, {ptr(14.999), 0}, {ptr(15), 1}, {ptr(49.9), 1}, {ptr(50), 2}, {ptr(80), 3}, {ptr(100), 3}, {ptr(-1), 0}, {ptr(250), 3}, {nil, 4},
	} {
		if got := bandOf(bands, tt.v); got != tt.want {
			t.Errorf("bandOf(%v) = %d (%s), want %d", deref(tt.v), got, bands[got].name, tt.want)
		}
	}
}

func deref(v *float64) any {
	if v == nil {
		return nil
	}
	return *v
}

// TestIdleShare: the share of a slice inside idle intervals, by hand.
func TestIdleShare(t *testing.T) {
	ivs := []analyze.Interval{{StartS: 0, EndS: 30}, {StartS: 45, EndS: 120}}
	for _, tt := range []struct{ lo, hi, want float64 }{
		{0, 60, 45.0 / 60}, // 30 + 15
		{30, 45, 0},        // between the two
		{60, 120, 1},       // inside the second
		{100, 200, 0.2},    // 20 of 100
		{50, 50, 0},        // an empty slice
	} {
		if got := idleShare(ivs, tt.lo, tt.hi); got != tt.want {
			t.Errorf("idleShare [%g, %g) = %v, want %v", tt.lo, tt.hi, got, tt.want)
		}
	}
}

// TestPoolRows: a pool's cell is the mean idle share of its nodes with a
// sample in the slice; a slice without any is a gap; pools are sorted by
// idle cost.
func TestPoolRows(t *testing.T) {
	v := ptr(50)
	r := &report.Result{Report: &analyze.Report{Timeline: analyze.Timeline{BucketS: 60, IdleNodeFraction: make([]float64, 3)}, Nodes: []analyze.NodeReport{
		{Name: "a", Pool: "H100", IdleCostUSD: 1, UtilSparkline: []*float64{v, v, nil}, IdleIntervals: []analyze.Interval{{StartS: 0, EndS: 120}}},
		{Name: "b", Pool: "H100", IdleCostUSD: 1, UtilSparkline: []*float64{v, v, nil}},
		{Name: "c", Pool: "A100", IdleCostUSD: 5, UtilSparkline: []*float64{v, nil, nil}, IdleIntervals: []analyze.Interval{{StartS: 0, EndS: 30}}},
	}}}
	pools := poolSummaries(r)
	if len(pools) != 2 || pools[0].Name != "A100" || pools[1].Nodes != 2 || pools[1].IdleCostUSD != 2 {
		t.Fatalf("pools %+v %+v", pools[0], pools[1])
	}
	rows := poolRows(r, pools)
	// A100: c idle half of slice 0, no sample after. H100: a idle in
	// slices 0 and 1, b never: a half each; no sample in slice 2.
	want := [][]string{{idleColor(0.5), noDataColor, noDataColor}, {idleColor(0.5), idleColor(0.5), noDataColor}}
	for i, row := range rows {
		for j, c := range row.cells {
			if c != want[i][j] {
				t.Errorf("%s slice %d: %s, want %s", row.label, j, c, want[i][j])
			}
		}
	}
	if rows[0].label != "A100 (1)" || rows[1].label != "H100 (2)" {
		t.Errorf("labels %q %q", rows[0].label, rows[1].label)
	}
}
