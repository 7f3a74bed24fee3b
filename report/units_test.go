package report

import (
	"bytes"
	"errors"
	"testing"

	"github.com/seedance/seedance/analyze"
)

func ptr(x float64) *float64 { return &x }

// TestUnitGates: a gate over a unit figure reads the fleet's figure by
// the unit's scale; one over a null figure (no traffic) fails; a delta
// is current − baseline per field, null where either side is, and a gate
// over a null delta fails.
func TestUnitGates(t *testing.T) {
	r := gateReport(t)
	r.Units = map[string]analyze.UnitFigures{
		"output_tokens": {Unit: "output_tokens", Per: 1e6, Work: ptr(2e6), CostUSD: 1, USDPer: ptr(0.5), KWhPer: ptr(0.2)},
		"requests":      {Unit: "requests", Per: 1e3, Work: ptr(0), CostUSD: 1},
	}
	if err := eval(r, "units.output_tokens.usd_per_million <= 0.5"); err != nil || !r.Gates[0].Passed {
		t.Fatalf("a passing gate: %v %+v", err, r.Gates)
	}
	if err := eval(r, "units.requests.usd_per_thousand <= 100"); !errors.Is(err, ErrGateFailed) || r.Gates[0].Error == "" {
		t.Fatalf("a gate over no traffic: %v %+v", err, r.Gates)
	}
	// A group's and a model's figures, by name.
	r.UnitGroups = []analyze.UnitGroup{{Key: []string{"inference"}, Units: r.Units}}
	r.UnitModels = []analyze.UnitGroup{{Key: []string{"llama"}, Units: r.Units}}
	for _, g := range []string{"unit_group['inference'].output_tokens.usd_per_million == 0.5", "unit_model['llama'].output_tokens.kwh_per_million == 0.2"} {
		if err := eval(r, g); err != nil || !r.Gates[0].Passed {
			t.Errorf("%s: %v %+v", g, err, r.Gates)
		}
	}
	if err := eval(r, "unit_group['serving'].output_tokens.usd_per_million <= 1"); !errors.Is(err, ErrInvalidGate) {
		t.Errorf("a group that is not there is a mistake in the gate: %v", err)
	}
	base := &Baseline{Summary: gateReport(t).Summary, Units: map[string]map[string]*float64{
		"output_tokens": {"usd_per_million": ptr(0.8), "kwh_per_million": nil},
	}}
	r.SetBaseline(base)
	d := r.UnitsDelta["output_tokens"]
	if d["usd_per_million"] == nil || *d["usd_per_million"] != -0.3 || d["kwh_per_million"] != nil || r.UnitsDelta["requests"]["usd_per_thousand"] != nil {
		t.Fatalf("deltas %+v", r.UnitsDelta)
	}
	if err := eval(r, "delta.units.output_tokens.usd_per_million < 0"); err != nil {
		t.Errorf("a delta gate: %v %+v", err, r.Gates)
	}
	if err := eval(r, "delta.units.output_tokens.kwh_per_million <= 0"); !errors.Is(err, ErrGateFailed) {
		t.Errorf("a gate over a null delta: %v %+v", err, r.Gates)
	}
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil || !bytes.Contains(b.Bytes(), []byte(`"units":{"output_tokens":{`)) || !bytes.Contains(b.Bytes(), []byte(`"usd_per_million":0.5`)) {
		t.Errorf("JSON %v: %.300s", err, b.String())
	}
}
