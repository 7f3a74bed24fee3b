package recommend

import (
	"fmt"
	"strings"
	"testing"

	"github.com/seedance/seedance/hwtopo"
)

// The fragmentation measures at their edges, computed by hand: exact fits
// of a share and of its memory, the exact search's node size, the shapes'
// order and rounding, the plan replayed on shared GPUs, and the
// suggestion's list of nodes at five.

func TestShapesByHand(t *testing.T) {
	c := build([]*Node{box("a", 5, 80)}, share("s", "a", 0, 500, 1), pod("pair", "a", 1, 2), pod("one", "a", 3), share("tiny", "a", 0, 1, 1), withMem(pod("big", "a", 4), 40))
	got := fmt.Sprint(shapesByPool(c)["H100"])
	if want := "[{2 1000 21474836480 0 1} {1 1000 21474836480 0 1} {1 1000 42949672960 0 1} {1 500 1073741824 0 1} {1 1 1073741824 0 1}]"; got != want {
		t.Errorf("shapes %s, want %s", got, want)
	}
	for b, want := range map[uint64]uint64{0: 0, 1: 1, 1 << 30: 1, 1<<30 + 1: 2, 3 << 30: 3} {
		if got := gib(b); got != want {
			t.Errorf("gib(%d) = %d, want %d", b, got, want)
		}
	}
	for _, c := range []struct {
		mem, need uint64
		want      bool
	}{{10, 10, true}, {10, 11, false}, {0, 11, true}, {10, 0, true}} {
		if got := memFits(GPU{MemBytes: c.mem}, c.need); got != c.want {
			t.Errorf("memFits(%d, %d) = %v", c.mem, c.need, got)
		}
	}
}

func TestFitsThroughByHand(t *testing.T) {
	nv := hwtopo.LinkRank("NV18")
	free := func(n int) []GPU { return make([]GPU, n) }
	// 16 GPUs, 4–15 busy: 0 meets 1, 2 and 3 over NVLink, 2 meets 3, 1
	// meets neither. Greedy growth from 0 takes 1 and is stuck; the exact
	// search finds {0, 2, 3}.
	t16 := &hwtopo.Topology{}
	g16 := free(16)
	for i := range 16 {
		row := make([]string, 16)
		for j := range row {
			row[j] = "SYS"
		}
		row[i] = "X"
		t16.Matrix = append(t16.Matrix, row)
		if i >= 4 {
			g16[i].UsedMilli = milliPerGPU
		}
	}
	for _, e := range [][2]int{{0, 1}, {0, 2}, {0, 3}, {2, 3}} {
		t16.Matrix[e[0]][e[1]], t16.Matrix[e[1]][e[0]] = "NV18", "NV18"
	}
	cases := []struct {
		name string
		t    *hwtopo.Topology
		gpus []GPU
		s    Shape
		want bool
	}{
		{"two unlinked GPUs without topology", nil, free(2), Shape{GPUs: 2, Milli: milliPerGPU}, true},
		{"one GPU needs no link", nil, free(1), Shape{GPUs: 1, Milli: milliPerGPU, LinkRank: nv}, true},
		{"a share of two GPUs needs a second free one", nil, []GPU{{}, {UsedMilli: 500}}, Shape{GPUs: 2, Milli: 500}, false},
		{"exact search at 16 GPUs", t16, g16, Shape{GPUs: 3, Milli: milliPerGPU, LinkRank: nv}, true},
	}
	for _, c := range cases {
		if got := fitsThrough(c.t, c.gpus, c.s, 0); got != c.want {
			t.Errorf("%s: %v", c.name, got)
		}
	}
}

// TestFGDSharesByHand: one 80 GiB GPU, half used with 50 GiB held, and
// one shape: the free half is unusable (0.5) unless the shape fits it.
func TestFGDSharesByHand(t *testing.T) {
	cases := []struct {
		s    Shape
		want float64
	}{
		{Shape{GPUs: 1, Milli: 500, MemBytes: 30 << 30}, 0},    // exact share, exact memory
		{Shape{GPUs: 1, Milli: 300, MemBytes: 10 << 30}, 0},    // room to spare
		{Shape{GPUs: 1, Milli: 501, MemBytes: 10 << 30}, 0.5},  // share over
		{Shape{GPUs: 1, Milli: 300, MemBytes: 31 << 30}, 0.5},  // memory over
		{Shape{GPUs: 2, Milli: 500, MemBytes: 10 << 30}, 0.5},  // two GPUs: needs whole free ones
		{Shape{GPUs: 1, Milli: 1000, MemBytes: 10 << 30}, 0.5}, // a whole GPU
	}
	for _, c := range cases {
		c.s.Workloads = 1
		n := box("a", 1, 80)
		n.GPUs[0].UsedMilli, n.GPUs[0].UsedMem = 500, 50<<30
		if got, capacity := fgd(n, n.GPUs, []Shape{c.s}); got != c.want || capacity != 0.5 {
			t.Errorf("%+v: unusable %v of %v, want %v of 0.5", c.s, got, capacity, c.want)
		}
	}
}

// TestAfterPlanByHand: the plan replayed on the GPUs: a share leaves its
// part of a GPU another share keeps, a shared move adds only its part,
// GPU 0 counts, a pending placement adds, and a GPU index out of range is
// ignored.
func TestAfterPlanByHand(t *testing.T) {
	p1 := pod("p1", "c")
	p1.Pending, p1.GPUs = true, nil
	c := build([]*Node{box("a", 2, 80), box("b", 2, 80), box("c", 1, 80)},
		share("s1", "a", 0, 300, 10), share("s2", "a", 0, 300, 10), pod("w", "a", 1), share("t", "b", 1, 200, 10), p1)
	plan := &Plan{Moves: []Move{
		{Workload: "ml/s1", From: str("a"), To: "b", GPUs: []int{1}, Sharing: str("mps")},
		{Workload: "ml/w", From: str("a"), To: "b", GPUs: []int{0}},
		{Workload: "ml/p1", To: "b", GPUs: []int{2}},
		{Workload: "ml/p1", To: "c", GPUs: []int{0}},
	}}
	got := afterPlan(c, plan)
	if s := fmt.Sprint(got["a"], got["b"], got["c"]); s != fmt.Sprint(
		[]GPU{{80 << 30, 300, 10 << 30, false}, {80 << 30, 0, 0, false}},
		[]GPU{{80 << 30, 1000, 20 << 30, false}, {80 << 30, 500, 20 << 30, false}},
		[]GPU{{80 << 30, 1000, 20 << 30, false}}) {
		t.Errorf("after the plan: %s", s)
	}
}

func TestFragmentSuggestionNodes(t *testing.T) {
	for _, c := range []struct {
		n           int
		where, more string
	}{{5, "on n0, n1, n2, n3, n4:", "more"}, {6, "on n0, n1, n2, n3, n4 and 1 more:", ""}} {
		r := 1.0
		p := FragPool{Model: "H100", FreeGPUs: c.n, StrandedGPUs: c.n, Ratio: &r, Above: true}
		for i := range c.n {
			p.StrandedOn = append(p.StrandedOn, StrandedSet{Node: fmt.Sprintf("n%d", i), GPUs: []int{0}})
		}
		s := fragmentSuggestions(&Fragmentation{ThresholdRatio: 0.35, Pools: []FragPool{p}})
		if len(s) != 1 || s[0].Node != "n0" || !strings.Contains(s[0].Text, c.where) || (c.more != "" && strings.Contains(s[0].Text, c.more)) {
			t.Errorf("%d nodes: %+v", c.n, s)
		}
	}
}
