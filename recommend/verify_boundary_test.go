package recommend

import (
	"context"
	"strings"
	"testing"
)

// TestVerifyBoundaries: verify's checks at their edges, each computed by
// hand: a GPU index one past the node's, memory filled exactly or by one
// byte more, memory unknown (0: not checked), a node released after it
// received a move, and MIG profiles at their exact size.
func TestVerifyBoundaries(t *testing.T) {
	cluster := func(memB, memMoved uint64) *Cluster {
		a, b := box("a", 1, 80), box("b", 2, 80)
		b.GPUs[1].MemBytes = memB
		x := pod("x", "a", 0)
		x.MemPerGPU = memMoved
		return build([]*Node{a, b}, x)
	}
	move := func(gpu int) *Plan {
		return &Plan{Moves: []Move{{Workload: "ml/x", From: str("a"), To: "b", GPUs: []int{gpu}}}, ReleasedNodes: []string{"a"}}
	}
	cases := []struct {
		name string
		c    *Cluster
		p    *Plan
		want string // "" for no error
	}{
		{"exact memory", cluster(40<<30, 40<<30), move(1), ""},
		{"one byte over", cluster(40<<30, 40<<30+1), move(1), "goes over capacity"},
		{"memory unknown", cluster(0, 40<<30), move(1), ""},
		{"GPU one past the last", cluster(40<<30, 1), move(2), "b has no GPU 2"},
		{"negative GPU", cluster(40<<30, 1), move(-1), "b has no GPU -1"},
		{"released after receiving", cluster(40<<30, 1), &Plan{Moves: move(1).Moves, ReleasedNodes: []string{"a", "b"}}, "released node b still runs 1 workload(s)"},
	}
	for _, c := range cases {
		err := verify(c.c, c.p)
		if (err == nil) != (c.want == "") || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
	for _, c := range []struct {
		mem  uint64
		want string
	}{{10e9, "1g.10gb"}, {10e9 + 1, "2g.20gb"}, {80e9, "7g.80gb"}, {80e9 + 1, ""}, {0, ""}} {
		if got := migProfileFor("H100 80GB HBM3", c.mem); got != c.want {
			t.Errorf("migProfileFor(%d) = %q, want %q", c.mem, got, c.want)
		}
	}
}

// TestPendingOfDifferentSizesPlaced: each pending move is checked against
// the pending workload it names, not another one waiting there.
func TestPendingOfDifferentSizesPlaced(t *testing.T) {
	pend := func(id string, n int) *Workload {
		w := pod(id, "s")
		w.Pending, w.Count, w.GPUs = true, n, nil
		return w
	}
	c := build([]*Node{box("s", 4, 80), box("n", 4, 80)}, pend("p1", 1), pend("p2", 2), pinned(pod("n0", "n", 0)))
	plan, err := makePlan(context.Background(), c, Options{MovePending: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := outline(plan), "released=s p1:->n[1] p2:->n[2 3]"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	bad := &Plan{Moves: []Move{{Workload: "ml/p1", To: "n", GPUs: []int{1, 2}}}}
	if err := verify(c, bad); err == nil || !strings.Contains(err.Error(), "ml/p1 needs 1 GPUs, gets 2") {
		t.Fatalf("err = %v", err)
	}
}

// TestScriptsNumberAndScreenMoves: the scripts number moves from 1, say
// which nodes they hold back and why a plan was refused, and skip a move
// whose source node is not a valid name in the dialect (the target is
// checked too).
func TestScriptsNumberAndScreenMoves(t *testing.T) {
	p := &Plan{SchemaVersion: planSchema, SavingsUSDPerHour: 20, NodePriceUSDPerHour: map[string]float64{"a": 10, "bad;node": 10},
		Moves: []Move{{Workload: "ml/x", From: str("a"), To: "b", GPUs: []int{0}, Reason: "frees a", Name: "4242", Namespace: "ml"},
			{Workload: "ml/y", From: str("bad;node"), To: "b", GPUs: []int{1}, Reason: "frees bad;node", Name: "4243", Namespace: "ml"}},
		ReleasedNodes: []string{"a", "bad;node"}}
	for _, d := range []struct {
		name   string
		render func(*strings.Builder, *Plan) error
		first  string
	}{
		{"kubectl", func(b *strings.Builder, p *Plan) error { return kubectlScript(b, p) }, "# 1. ml/x → b GPUs [0]: frees a"},
		{"slurm", func(b *strings.Builder, p *Plan) error { return slurmScript(b, p) }, "# 1. ml/x → b: frees a"},
	} {
		var b strings.Builder
		if err := d.render(&b, p); err != nil {
			t.Fatal(err)
		}
		s := b.String()
		for _, want := range []string{d.first, "2. ml/y", "skipped", "# 1 node(s) of the plan are not released here"} {
			if !strings.Contains(s, want) {
				t.Errorf("%s: no %q in\n%s", d.name, want, s)
			}
		}
		b.Reset()
		if err := d.render(&b, refused("pending_unknown")); err != nil {
			t.Fatal(err)
		}
		if s := b.String(); !strings.Contains(s, "# no node is released: the work waiting for GPUs is unknown (pending_unknown)") || strings.Contains(s, "not released here") {
			t.Errorf("%s: refused plan:\n%s", d.name, s)
		}
	}
}

// TestMovesValidInTheirDialect: a move is scripted only when its source,
// its target and its name are valid in the dialect.
func TestMovesValidInTheirDialect(t *testing.T) {
	for _, c := range []struct {
		m              Move
		kubectl, slurm bool
	}{
		{Move{From: str("a"), To: "b", Name: "4242", Namespace: "ml"}, true, true},
		{Move{To: "b", Name: "4242", Namespace: "ml"}, true, true},
		{Move{From: str("bad;node"), To: "b", Name: "4242", Namespace: "ml"}, false, false},
		{Move{From: str("a"), To: "bad;node", Name: "4242", Namespace: "ml"}, false, false},
		{Move{From: str("a"), To: "b", Name: "x;y", Namespace: "ml"}, false, false},
	} {
		if got := kubectlMoveValid(c.m); got != c.kubectl {
			t.Errorf("kubectl %+v: %v", c.m, got)
		}
		if got := slurmMoveValid(c.m); got != c.slurm {
			t.Errorf("slurm %+v: %v", c.m, got)
		}
	}
}
