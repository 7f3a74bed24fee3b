package report

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
	r := analyzed(f, fill(0, 120))
	f.Fuzz(func(t *testing.T, g string) {
		_, err := Gates(r, []string{g})
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
