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

// TestKeyWarnings: a user's key that prices no model is named, with the
// models whose names hold its words (the docs' own "A100 80GB" against
// NVIDIA's "A100-SXM4-80GB"); a key that priced a model is not.
func TestKeyWarnings(t *testing.T) {
	p := New(map[string]float64{"A100 80GB": 1.6, "H100": 2, "MI300": 3}, 1)
	p.Price("NVIDIA A100-SXM4-80GB")
	p.Price("NVIDIA H100 80GB HBM3")
	got := p.KeyWarnings()
	want := []string{
		`the price key "A100 80GB" matches no GPU model priced (a key must be part of the model's name): did you mean "NVIDIA A100-SXM4-80GB"? those are priced as built-in table`,
		`the price key "MI300" matches no GPU model priced (a key must be part of the model's name)`,
	}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	if w := New(map[string]float64{"A100": 1}, 1).KeyWarnings(); len(w) != 0 {
		t.Fatalf("a pricer that priced nothing yet warns: %q", w)
	}
}
