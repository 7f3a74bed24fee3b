// Package jsonnear compares two decoded JSON documents figure by figure:
// the test of "the ledger equals one analysis", where sums added in another
// order may differ in their last bits.
package jsonnear

import (
	"fmt"
	"math"
	"testing"
)

// Tolerance is the relative difference two figures may have (absolute
// below 1).
const Tolerance = 1e-7

// Equal reports, under path, every place where got differs from want:
// numbers within Tolerance, maps by want's keys, lists item by item. A
// shared GPU's split rule (basis, basis_gpu_hours) is not kept by a ledger
// (docs/sharing.md): its absence from got is no difference.
func Equal(t testing.TB, path string, got, want any) {
	t.Helper()
	switch w := want.(type) {
	case float64:
		g, ok := got.(float64)
		if !ok || math.Abs(g-w) > Tolerance*math.Max(1, math.Abs(w)) {
			t.Errorf("%s = %v, one analysis: %v", path, got, want)
		}
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			t.Errorf("%s = %v, one analysis: %v", path, got, want)
			return
		}
		for k := range w {
			if _, ok := g[k]; !ok && (k == "basis" || k == "basis_gpu_hours") {
				continue
			}
			Equal(t, path+"."+k, g[k], w[k])
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			t.Errorf("%s: %d items, one analysis: %d", path, len(g), len(w))
			return
		}
		for i := range w {
			Equal(t, fmt.Sprintf("%s[%d]", path, i), g[i], w[i])
		}
	default:
		if got != want {
			t.Errorf("%s = %v, one analysis: %v", path, got, want)
		}
	}
}
