package prometheus

import (
	"maps"
	"testing"

	"github.com/seedance/seedance/source/dcgm"
)

// TestCounts: a GPU's count of a metric is the sum of what was added, a
// metric never added to a GPU is not listed for it (a count of 0 is), reset
// empties them, and take copies a GPU's counts of the metrics asked for.
func TestCounts(t *testing.T) {
	a, b := dcgm.GPUKey{Node: "n1", UUID: "GPU-a"}, dcgm.GPUKey{Node: "n1", UUID: "GPU-b"}
	c := newCounts(3)
	c.add(0, a, 120)
	c.add(0, a, 1)
	c.add(2, a, 0)
	c.add(2, b, 7)
	got := func(i int) map[dcgm.GPUKey]int {
		out := map[dcgm.GPUKey]int{}
		c.each(i, func(k dcgm.GPUKey, n int) { out[k] = n })
		return out
	}
	for i, want := range []map[dcgm.GPUKey]int{{a: 121}, {}, {a: 0, b: 7}} {
		if g := got(i); !maps.Equal(g, want) {
			t.Errorf("metric %d: %v, want %v", i, g, want)
		}
	}
	c.reset()
	if g := got(0); len(g) != 0 {
		t.Errorf("after reset: %v", g)
	}
	c.add(1, b, 3)
	if g := got(1); !maps.Equal(g, map[dcgm.GPUKey]int{b: 3}) {
		t.Errorf("after reset and add: %v", g)
	}
	src := newCounts(3)
	src.add(0, a, 5)
	src.add(2, a, 0)
	if n := c.take(src, a, []int{0, 1}); n != 1 { // metric 1: never answered for a
		t.Errorf("take: %d counts, want 1", n)
	}
	if n := c.take(src, b, []int{0, 2}); n != 0 { // b: not in src
		t.Errorf("take of a GPU src lacks: %d counts", n)
	}
	if g := got(0); !maps.Equal(g, map[dcgm.GPUKey]int{a: 5}) {
		t.Errorf("after take: %v", g)
	}
	if g := got(2); len(g) != 0 { // metric 2 was not asked for
		t.Errorf("take copied an unasked metric: %v", g)
	}
}
