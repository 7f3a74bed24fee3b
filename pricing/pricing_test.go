package pricing

import (
	"strings"
	"testing"
)

func TestPricer(t *testing.T) {
	p := New(map[string]float64{"A100": 3.0, "h100 80gb": 2.5}, 0.9)
	tests := map[string]float64{
		"NVIDIA H100 80GB HBM3":   2.5,   // user entry, case-insensitive
		"NVIDIA H100 NVL":         4.916, // default H100
		"NVIDIA A100-SXM4-80GB":   3.0,   // the user's A100 beats the longer default key
		"NVIDIA L40S":             1.861, // L40S, not L4
		"NVIDIA L4":               0.805,
		"NVIDIA GeForce RTX 4090": 0.9, // fallback
	}
	for model, want := range tests {
		if got := p.Price(model); got != want {
			t.Errorf("Price(%q) = %v, want %v", model, got, want)
		}
	}
	if got := strings.Join(p.DefaultsUsed(), ","); got != "H100,L4,L40S" {
		t.Errorf("defaults used %q", got)
	}
	if got := strings.Join(p.Unmatched(), ","); got != "NVIDIA GeForce RTX 4090" {
		t.Errorf("unmatched %q", got)
	}
	tab := p.Table()
	if tab["A100"] != 3.0 || tab["h100 80gb"] != 2.5 || tab["H200"] != 5.408 {
		t.Errorf("table %v", tab)
	}
}
