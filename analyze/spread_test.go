package analyze

import (
	"testing"
)

// TestNodeSpread: the population variance of the nodes' mean utilization
// (0–1 units) and its square root in percentage points, worked by hand;
// a node without utilization does not count; one node has no spread.
func TestNodeSpread(t *testing.T) {
	mk := func(name string, util float64) nodeSpec {
		return nodeSpec{name: name, gpus: []gpuSpec{{uuid: "GPU-" + name, t: every10(12), util: fill(util, 12)}}}
	}
	noUtil := nodeSpec{name: "d", gpus: []gpuSpec{{uuid: "GPU-d", t: every10(12), power: fill(100, 12)}}}
	r := mustAnalyze(t, DefaultParams(), mkProfile(t, t0, 120, 10, mk("a", 10), mk("b", 20), mk("c", 60), noUtil))
	// Means 0.1, 0.2, 0.6: mean 0.3, squared deviations 0.04 + 0.01 + 0.09 = 0.14, ÷ 3.
	nearPtr(t, "variance", r.Summary.NodeUtilVariance, 0.14/3)
	nearPtr(t, "stddev", r.Summary.NodeUtilStddevPct, 21.6024690)
	r = mustAnalyze(t, DefaultParams(), mkProfile(t, t0, 120, 10, mk("a", 40)))
	nearPtr(t, "one node", r.Summary.NodeUtilVariance, 0)
	r = mustAnalyze(t, DefaultParams(), mkProfile(t, t0, 120, 10, noUtil))
	if r.Summary.NodeUtilVariance != nil || r.Summary.NodeUtilStddevPct != nil {
		t.Fatalf("no utilization, yet a spread: %v", *r.Summary.NodeUtilVariance)
	}
}
