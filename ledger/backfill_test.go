package ledger

import (
	"slices"
	"testing"
)

// TestRoughly: two sums of the same samples, added in another order, are
// the same figure (a thousandth absolute, or 1e-7 of the larger); more is
// a difference, however large the figures.
func TestRoughly(t *testing.T) {
	for _, c := range []struct {
		a, b float64
		want bool
	}{
		{0, 0, true},
		{1, 1.0009, true},
		{1, 1.0011, false},
		{1e6, 1e6 + 0.05, true},    // 1e-3 + 0.1 allowed
		{1e6, 1e6 + 0.2, false},    // past 0.101
		{1e6 + 0.05, 1e6, true},    // either order
		{-5, -5.0005, true},        // |a-b|, not a-b
		{1e9, 1e9 + 50, true},      // relative: 100.001 allowed
		{1e9, 1e9 + 101, false},    // past it
		{1e9 + 101, 1e9, false},    // either order
		{2e9, 2e9 + 150, true},     // the larger figure sets it (200.001)
		{1e-9, 1e-9 + 2e-3, false}, // tiny figures: the absolute part alone
	} {
		if got := roughly(c.a, c.b); got != c.want {
			t.Errorf("roughly(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// TestLostNodes: the nodes the input observes less of than the ledger
// holds (beyond rounding), in order; a node the input lacks holds zero.
func TestLostNodes(t *testing.T) {
	have := map[string]float64{"b": 10, "a": 10, "c": 10, "d": 10}
	in := map[string]float64{"a": 9, "b": 10, "c": 10.0001, "e": 3}
	if got := lostNodes(have, in); !slices.Equal(got, []string{"a", "d"}) {
		t.Errorf("lostNodes = %v, want [a d]", got)
	}
	if got := lostNodes(map[string]float64{"a": 10}, map[string]float64{"a": 9.9999}); len(got) != 0 {
		t.Errorf("a rounding difference is a loss: %v", got)
	}
}

// TestFew: up to five names, then how many more.
func TestFew(t *testing.T) {
	names := []string{"n1", "n2", "n3", "n4", "n5", "n6", "n7"}
	for n, want := range map[int]string{
		0: "",
		1: "n1",
		5: "n1, n2, n3, n4, n5",
		6: "n1, n2, n3, n4, n5 and 1 more",
		7: "n1, n2, n3, n4, n5 and 2 more",
	} {
		if got := few(names[:n]); got != want {
			t.Errorf("few(%d names) = %q, want %q", n, got, want)
		}
	}
}
