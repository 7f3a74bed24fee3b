package analyze

import (
	"errors"
	"strings"
	"testing"
)

// FuzzGate: any gate expression passes, fails, or is refused as invalid,
// in one line; none panics or runs away.
func FuzzGate(f *testing.F) {
	for _, g := range []string{"summary.idle_ratio <= 0.2", "delta.avg_gpu_util_pct >= -5", "all(nodes, .verdict != 'stalled')",
		"summary.avg_mem_bw_util_pct > 1", "len(nodes) > 0 && summary.gpus == 2", "map(1..100000000, #)", "nodes[99].name == 'x'"} {
		f.Add(g)
	}
	r := mustAnalyze(f, DefaultParams(), mkProfile(f, t0, 120, 1, nodeSpec{name: "n1", gpus: []gpuSpec{{uuid: "a", t: steps(0, 120), util: fill(0, 120)}}}))
	f.Fuzz(func(t *testing.T, g string) {
		rc := *r
		rc.Gates = nil
		err := EvalGates(&rc, []string{g})
		switch {
		case err == nil, errors.Is(err, ErrGateFailed), errors.Is(err, ErrInvalidGate):
		default:
			t.Fatalf("gate %q: unexpected error %v", g, err)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Fatalf("error of more than one line: %q", err)
		}
	})
}
