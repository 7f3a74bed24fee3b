package analyze

import (
	"errors"
	"testing"
)

func gateReport(t *testing.T) *Report {
	t.Helper()
	a := gpuSpec{uuid: "a", t: steps(0, 120), util: cat(fill(0, 64), fill(100, 56))}
	return mustAnalyze(t, DefaultParams(), mkProfile(t, t0, 120, 1, nodeSpec{name: "n1", gpus: []gpuSpec{a}}))
}

// TestGateShowsValue: a failed comparison says what its left side was.
func TestGateShowsValue(t *testing.T) {
	r := gateReport(t) // idle 64 of 120 s: idle_ratio 0.533333333
	err := EvalGates(r, []string{"summary.idle_ratio <= 0.2", "summary.gpus == 1", "all(nodes, .verdict != 'busy')"})
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
	err := EvalGates(r, []string{"summary.avg_mem_bw_util_pct >= 10"})
	if !errors.Is(err, ErrGateFailed) || r.Gates[0].Passed {
		t.Fatalf("err %v gates %+v", err, r.Gates)
	}
	if got := GateLine(r.Gates[0]); got != "FAIL: summary.avg_mem_bw_util_pct >= 10 (the value is null: not measured in this report)" {
		t.Errorf("line %q", got)
	}
	// A field that does not exist is still a mistake in the gate.
	r = gateReport(t)
	if err := EvalGates(r, []string{"summary.no_such_field >= 10"}); !errors.Is(err, ErrInvalidGate) {
		t.Errorf("unknown field: %v", err)
	}
}

// TestBaselineSkipsNulls: a null on either side has no delta.
func TestBaselineSkipsNulls(t *testing.T) {
	r, base := gateReport(t), gateReport(t)
	v := 12.0
	base.Summary.AvgMemBWUtilPct = &v
	base.Summary.IdleCostUSD = r.Summary.IdleCostUSD - 1.5
	ApplyBaseline(r, base)
	if _, ok := r.Delta["avg_mem_bw_util_pct"]; ok {
		t.Errorf("delta of a null: %v", r.Delta)
	}
	near(t, "idle cost delta", r.Delta["idle_cost_usd"], 1.5)
	if _, ok := r.Delta["notes"]; ok {
		t.Error("notes have no delta")
	}
}
