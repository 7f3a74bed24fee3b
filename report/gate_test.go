package report

import (
	"fmt"

	"errors"
	"github.com/seedance/seedance/analyze"
	"math"
	"strings"
	"testing"
)

func gateReport(t *testing.T) *Result {
	t.Helper()
	return analyzed(t, append(fill(0, 64), fill(100, 56)...))
}

// TestGateShowsValue: a failed comparison says what its left side was.
func TestGateShowsValue(t *testing.T) {
	r := gateReport(t) // idle 64 of 120 s: idle_ratio 0.533333333
	err := eval(r, "summary.idle_ratio <= 0.2", "summary.gpus == 1", "all(nodes, .verdict != 'busy')")
	if !errors.Is(err, ErrGateFailed) {
		t.Fatalf("err %v", err)
	}
	want := []string{
		"FAIL: summary.idle_ratio <= 0.2 (was 0.533333333)",
		"PASS: summary.gpus == 1 (was 1)",
		"PASS: all(nodes, .verdict != 'busy')",
	}
	for i, g := range r.Gates {
		if got := GateLine(g); got != want[i] {
			t.Errorf("gate %d: %q, want %q", i, got, want[i])
		}
	}
}

// TestGateOnNullFails: a gate over a metric that was not measured fails
// with a reason; it never passes, and it is not a usage error.
func TestGateOnNullFails(t *testing.T) {
	r := gateReport(t) // no memory-bandwidth column
	err := eval(r, "summary.avg_mem_bw_util_pct >= 10")
	if !errors.Is(err, ErrGateFailed) || r.Gates[0].Passed {
		t.Fatalf("err %v gates %+v", err, r.Gates)
	}
	if got := GateLine(r.Gates[0]); got != "FAIL: summary.avg_mem_bw_util_pct >= 10 (the value is null: not measured in this report)" {
		t.Errorf("line %q", got)
	}
	// A field that does not exist is still a mistake in the gate.
	r = gateReport(t)
	if err := eval(r, "summary.no_such_field >= 10"); !errors.Is(err, ErrInvalidGate) {
		t.Errorf("unknown field: %v", err)
	}
}

// TestBaselineSkipsNulls: a null on either side has no delta.
func TestBaselineSkipsNulls(t *testing.T) {
	r, base := gateReport(t), gateReport(t)
	v := 12.0
	base.Summary.AvgMemBWUtilPct = &v
	*base.Summary.IdleCostUSD = *r.Summary.IdleCostUSD - 1.5
	r.SetBaseline(&Baseline{Summary: base.Summary})
	if _, ok := r.Delta["avg_mem_bw_util_pct"]; ok {
		t.Errorf("delta of a null: %v", r.Delta)
	}
	if d := r.Delta["idle_cost_usd"]; math.Abs(d-1.5) > 1e-9 {
		t.Errorf("idle cost delta %v, want 1.5", d)
	}
	if _, ok := r.Delta["notes"]; ok {
		t.Error("notes have no delta")
	}
}

// TestNothingMeasuredIsNull (#25, case 2): with every utilization value
// null, the idle figures are null, not 0, and a gate over them fails with
// its reason; without power or energy, so are the energy figures.
func TestNothingMeasuredIsNull(t *testing.T) {
	r := analyzed(t, fill(math.NaN(), 120))
	s := r.Summary
	if s.IdleRatio != nil || s.IdleGPUHours != nil || s.IdleCostUSD != nil || s.ProjectedMonthlySavingsUSD != nil || s.EnergyKWh != nil || s.EnergyCostUSD != nil {
		t.Fatalf("figures from no measurement: %+v", s)
	}
	err := eval(r, "summary.idle_ratio <= 0.2")
	if !errors.Is(err, ErrGateFailed) || r.Gates[0].Passed {
		t.Fatalf("err %v gates %+v", err, r.Gates)
	}
	if got := GateLine(r.Gates[0]); got != "FAIL: summary.idle_ratio <= 0.2 (the value is null: not measured in this report) [0 of 1 nodes observed for a full idle window]" {
		t.Errorf("line %q", got)
	}
}

// TestShortRunSaysItsBasis (#25, case 2): a run shorter than the idle
// window can pass a gate on idle_ratio, but the gate says on what.
func TestShortRunSaysItsBasis(t *testing.T) {
	r := analyzed(t, fill(0, 30))
	if err := eval(r, "summary.idle_ratio <= 0.2", "summary.gpus == 1"); err != nil {
		t.Fatal(err)
	}
	if got := GateLine(r.Gates[0]); got != "PASS: summary.idle_ratio <= 0.2 (was 0) [0 of 1 nodes observed for a full idle window]" {
		t.Errorf("line %q", got)
	}
	if got := GateLine(r.Gates[1]); got != "PASS: summary.gpus == 1 (was 1)" {
		t.Errorf("line %q", got)
	}
	// Observed for the whole window: no basis to add.
	r = gateReport(t)
	_ = eval(r, "summary.idle_ratio <= 0.9")
	if r.Gates[0].Basis != "" || r.Summary.NodesFullWindow != 1 {
		t.Errorf("basis %q, nodes_observed_full_window %d", r.Gates[0].Basis, r.Summary.NodesFullWindow)
	}
}

// TestMisspeltGateField (#25, case 3): a field the report does not have
// is named, with the nearest ones it has (exit 2 in the command).
func TestMisspeltGateField(t *testing.T) {
	for _, tt := range []struct{ gate, want string }{
		{"summary.idel_ratio <= 0.2", `invalid gate: no field "idel_ratio" in summary; nearest: idle_ratio (gate "summary.idel_ratio <= 0.2")`},
		{"summary.idle_ratio <= 0.2 && sumary.gpus > 0", `invalid gate: no field "sumary" in the report; nearest: summary`},
		{"attribution.total.waste_cost_usd < 5", `no field "attribution" in the report`},
		{"nodes[0].verdict == 'idle' && summary.gpu_hourz > 0", `no field "gpu_hourz" in summary; nearest: gpu_hours`},
	} {
		r := gateReport(t)
		err := eval(r, tt.gate)
		if !errors.Is(err, ErrInvalidGate) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.gate, err, tt.want)
		}
	}
	// A delta without a baseline keeps its own hint.
	r := gateReport(t)
	if err := eval(r, "delta.idle_ratio <= 0"); !errors.Is(err, ErrInvalidGate) || !strings.Contains(err.Error(), "delta needs --baseline") {
		t.Errorf("delta: %v", err)
	}
	// Closures' variables and functions are not fields.
	r = gateReport(t)
	if err := eval(r, "all(nodes, .verdict != 'x')", "len(nodes) == 1"); err != nil {
		t.Errorf("closures: %v", err)
	}
}

// TestGateOnGroup: a gate names an attribution group by its key; one that
// names no group is invalid, never passed.
func TestGateOnGroup(t *testing.T) {
	r := gateReport(t)
	third := 0.333333333
	r.Attribution = &analyze.Attribution{GroupBy: []string{"namespace", "team=team"}, Groups: []analyze.AttributionGroup{
		{Key: []string{"a", "x"}, AttributionFigures: analyze.AttributionFigures{Efficiency: &third}},
		{Key: []string{"b", "(none)"}, AttributionFigures: analyze.AttributionFigures{IdleHeldGPUHours: 0.1}},
	}}
	res, err := Gates(r, []string{"attribution.group['a|x'].efficiency >= 0.3", "attribution.group['b|(none)'].idle_held_gpu_hours > 0"})
	if err != nil || len(res) != 2 || !res[0].Passed || !res[1].Passed {
		t.Fatalf("%+v %v", res, err)
	}
	res, err = Gates(r, []string{"attribution.group['a|x'].efficiency >= 0.5"})
	if !errors.Is(err, ErrGateFailed) || fmt.Sprint(res[0].Value) != "0.333333333" {
		t.Fatalf("%+v %v", res, err)
	}
	if _, err := Gates(r, []string{"attribution.group['nobody'].efficiency >= 0.5"}); !errors.Is(err, ErrInvalidGate) {
		t.Fatalf("a gate on no group: %v", err)
	}
}

// TestEveryUseOfANullFails: a null figure fails every form of gate that
// reads it, with exit 3 (ErrGateFailed) and the field named, never a pass
// and never a usage error: ==, !=, not, and, or, arithmetic, a function.
func TestEveryUseOfANullFails(t *testing.T) {
	for _, g := range []string{
		"summary.avg_mem_bw_util_pct != 5",
		"summary.avg_mem_bw_util_pct == 5",
		"not (summary.avg_mem_bw_util_pct < 10)",
		"summary.avg_mem_bw_util_pct < 10 or true",
		"true and summary.avg_mem_bw_util_pct > 0",
		"summary.avg_mem_bw_util_pct + 1 > 0",
		"1 < summary.avg_mem_bw_util_pct * 2",
		"max(summary.avg_mem_bw_util_pct, 1) > 0",
		"summary.avg_mem_bw_util_pct == nil",
	} {
		r := gateReport(t) // no memory-bandwidth column: the figure is null
		err := eval(r, g, "summary.gpus == 1")
		if !errors.Is(err, ErrGateFailed) || len(r.Gates) != 2 || r.Gates[0].Passed || !r.Gates[1].Passed ||
			!strings.Contains(r.Gates[0].Error, "summary.avg_mem_bw_util_pct is null") && !strings.Contains(r.Gates[0].Error, "the value is null") {
			t.Errorf("%s: err %v, gates %+v", g, err, r.Gates)
		}
	}
}

// TestDeltaOfANullFails: a delta.* gate over a figure null on one side
// (here the report's memory bandwidth) fails with the reason, exit 3, not
// an invalid gate.
func TestDeltaOfANullFails(t *testing.T) {
	r, base := gateReport(t), gateReport(t)
	v := 12.0
	base.Summary.AvgMemBWUtilPct = &v
	r.SetBaseline(&Baseline{Summary: base.Summary})
	err := eval(r, "delta.avg_mem_bw_util_pct <= 5", "delta.idle_cost_usd <= 0")
	if !errors.Is(err, ErrGateFailed) || r.Gates[0].Passed || !strings.Contains(GateLine(r.Gates[0]), "null") || !r.Gates[1].Passed {
		t.Errorf("err %v, gates %+v", err, r.Gates)
	}
}
