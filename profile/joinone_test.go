package profile_test

import (
	"bytes"
	"math"
	"testing"
	"time"

	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source/sim"
)

// TestJoinOneAsJoinAll (#56): Join of one profile, which slices its
// columns instead of copying them, writes byte for byte what Join of the
// same profile beside an empty one (the copying path) writes: windows
// inside it, on samples, before and after it, with nulls, a column one
// GPU lacks, a GPU with no samples in the window, usage, context samples;
// and the result's columns cannot grow into the input's.
func TestJoinOneAsJoinAll(t *testing.T) {
	p, err := sim.Record(sim.Options{Nodes: 3, Scenario: sim.ScenarioMixed, Seed: 9}, time.Minute, 2*time.Hour, profile.Generator{Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	g := &p.Nodes[0].GPUs[0]
	g.Series.PowerW[3], g.Series.GPUUtilPct[70] = math.NaN(), math.NaN()
	p.Nodes[1].GPUs[1].Series.EnergyJ = nil
	late := &p.Nodes[2].GPUs[0].Series // samples in the second hour only
	late.T = late.T[60:]
	for m := profile.Metric(0); m < profile.NumMetrics; m++ {
		if c := late.Col(m); *c != nil {
			*c = (*c)[60:]
		}
	}
	u := make(profile.Values, len(g.Series.T))
	for i := range u {
		u[i] = float64(i % 5)
	}
	u[10] = math.NaN()
	g.Usage = []profile.Usage{{Workload: p.Nodes[0].Workloads[0].ID, UtilPct: u}, {Workload: "gone", UtilPct: make(profile.Values, len(u))}}
	for i := range g.Usage[1].UtilPct {
		g.Usage[1].UtilPct[i] = math.NaN()
	}
	empty := &profile.Profile{StartedAt: p.StartedAt, EndedAt: p.StartedAt, Complete: true}
	t0 := p.StartedAt
	for _, w := range [][2]time.Duration{{0, 2 * time.Hour}, {-time.Hour, 3 * time.Hour}, {10*time.Minute + 30*time.Second, 50 * time.Minute},
		{30 * time.Minute, 30 * time.Minute}, {90 * time.Minute, 2*time.Hour + time.Minute}, {3 * time.Hour, 4 * time.Hour}} {
		one := profile.Join([]*profile.Profile{p}, t0.Add(w[0]), t0.Add(w[1]), false)
		all := profile.Join([]*profile.Profile{empty, p}, t0.Add(w[0]), t0.Add(w[1]), false)
		var a, b bytes.Buffer
		if err := profile.Encode(&a, one); err != nil {
			t.Fatal(err)
		}
		if err := profile.Encode(&b, all); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Fatalf("window %v: one profile's join differs from the copying join:\n%.600s\n%.600s", w, a.String(), b.String())
		}
	}
	one := profile.Join([]*profile.Profile{p}, t0.Add(10*time.Minute), t0.Add(20*time.Minute), false)
	c := one.Nodes[0].GPUs[0].Series.GPUUtilPct
	before := g.Series.GPUUtilPct[len(c)+10]
	_ = append(c, -1)
	if g.Series.GPUUtilPct[len(c)+10] != before {
		t.Fatal("an append to the join's column wrote into the input's")
	}
}

// TestGPUsShareTheirTimes (#56): a read and both joins give a node's GPUs
// that sample at the same times one array of them (a GPU that samples at
// other times its own), and a Frame, which moves the times in place, moves
// each array once: every sample stays at its instant.
func TestGPUsShareTheirTimes(t *testing.T) {
	p, err := sim.Record(sim.Options{Nodes: 2, Scenario: sim.ScenarioMixed, Seed: 3}, time.Minute, time.Hour, profile.Generator{Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	other := &p.Nodes[1].GPUs[1].Series // one sample in two
	other.T = append(profile.Values{}, other.T...)
	for i := range other.T {
		if i%2 == 1 {
			other.T[i] += 30
		}
	}
	empty := &profile.Profile{StartedAt: p.StartedAt, EndedAt: p.StartedAt, Complete: true}
	from, to := p.StartedAt.Add(10*time.Minute), p.StartedAt.Add(40*time.Minute)
	same := func(a, b *profile.GPU) bool { return &a.Series.T[0] == &b.Series.T[0] }
	for name, j := range map[string]*profile.Profile{"one": profile.Join([]*profile.Profile{p}, from, to, false), "all": profile.Join([]*profile.Profile{empty, p}, from, to, false)} {
		n0, n1 := j.Nodes[0].GPUs, j.Nodes[1].GPUs
		if !same(&n0[0], &n0[len(n0)-1]) || !same(&n1[0], &n1[2]) || same(&n1[0], &n1[1]) || same(&n0[0], &n1[0]) {
			t.Fatalf("join of %s: times shared where they differ or not where equal", name)
		}
	}
	var b bytes.Buffer
	if err := profile.Encode(&b, p); err != nil {
		t.Fatal(err)
	}
	read, err := profile.Read(&b)
	if err != nil {
		t.Fatal(err)
	}
	if n0, n1 := read.Nodes[0].GPUs, read.Nodes[1].GPUs; !same(&n0[0], &n0[len(n0)-1]) || same(&n1[0], &n1[1]) || same(&n0[0], &n1[0]) {
		t.Fatal("read: times shared where they differ or not where equal")
	}
	f := profile.Frame(read, from, to, 2*time.Minute)
	shift := from.Sub(p.StartedAt).Seconds()
	for ni, n := range f.Nodes {
		for gi, g := range n.GPUs {
			in := p.Nodes[ni].GPUs[gi].Series.T
			for i, x := range g.Series.T {
				if want := in[i+8] - shift; x != want { // from 8 min (10 − 2)
					t.Fatalf("node %d GPU %d sample %d at %v s of the window, want %v", ni, gi, i, x, want)
				}
			}
		}
	}
}
