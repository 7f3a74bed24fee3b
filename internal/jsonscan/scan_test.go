package jsonscan

import "testing"

// TestValidJSONNumber: the JSON number grammar, not strconv's.
func TestValidJSONNumber(t *testing.T) {
	for s, want := range map[string]bool{
		"0": true, "-0": true, "12": true, "1.5": true, "-1.5e3": true, "1E+2": true, "2e-7": true, "0.0": true,
		"": false, "-": false, "01": false, "+1": false, ".5": false, "1.": false, "1e": false, "1e+": false,
		"1_000": false, "Inf": false, "NaN": false, "1.5x": false, "--1": false, "0x10": false,
	} {
		if got := validJSONNumber([]byte(s)); got != want {
			t.Errorf("%q: %v, want %v", s, got, want)
		}
	}
}
