package ledger

import (
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/internal/testkit/engine"
	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source/sim"
)

// TestAnyWindowEqualsAnalyzeOfIt: the ledger's report of any window W
// (5 minutes, an hour, a day) equals `analyze` of W, figure for figure,
// energy included, where analyze reads W as a source asked for W reads
// it: with the context samples around it (profile.Frame). Windows start
// and end inside idle runs, inside a sample's coverage after a scrape gap
// and next to workloads that come and go.
func TestAnyWindowEqualsAnalyzeOfIt(t *testing.T) {
	engine.SkipShort(t, "simulates 26 hours")
	p, err := sim.Record(sim.Options{Nodes: 3, Scenario: sim.ScenarioMixed, Seed: 11}, 30*time.Second, 26*time.Hour, profile.Generator{Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	span := p.EndedAt.Sub(p.StartedAt).Seconds()
	for ni := range p.Nodes {
		for wi := range p.Nodes[ni].Workloads {
			if wi%2 == 1 {
				p.Nodes[ni].Workloads[wi].Intervals = []profile.Tenure{{StartS: 3000, EndS: 7290.5}, {StartS: 9000, EndS: span}}
			}
		}
	}
	l := openDSN(t, filepath.Join(t.TempDir(), "ledger.db"))
	for _, part := range pieces(p, rand.New(rand.NewPCG(3, 9)), 7) {
		if _, err := l.Update(context.Background(), UpdateSpec{Inputs: []*profile.Profile{part}, Params: params(), Bucket: 5 * time.Minute}); err != nil {
			t.Fatal(err)
		}
	}
	reach := analyze.Reach(params().IdleWindow, 30*time.Second)
	first := p.StartedAt.Truncate(time.Hour).Add(time.Hour)
	for _, w := range []struct{ from, length time.Duration }{
		{5 * time.Minute, 5 * time.Minute}, {2*time.Hour + 5*time.Minute, 5 * time.Minute}, {50 * time.Minute, time.Hour},
		{2 * time.Hour, time.Hour}, {7 * time.Hour, 5 * time.Minute}, {0, 24 * time.Hour}, {35 * time.Minute, 24 * time.Hour},
	} {
		from, to := first.Add(w.from), first.Add(w.from+w.length)
		got, err := l.Report(context.Background(), Query{Since: from, Until: to, GroupBy: []string{"namespace"}, EnergyUSDPerKWh: 0.12})
		if err != nil {
			t.Fatal(err)
		}
		want := oneAnalysis(t, profile.Frame(p, from, to, reach), []string{"namespace"})
		if want.Summary.EnergyKWh == nil || *want.Summary.EnergyKWh == 0 {
			t.Fatalf("%s: no energy to compare", from)
		}
		sameFigures(t, got, want)
		if t.Failed() {
			t.Fatalf("window %s + %s", from.Format(time.RFC3339), w.length)
		}
	}
	// A ledger's first window: its first update reads the context before it.
	from := first.Add(25 * time.Minute)
	l2 := openDSN(t, filepath.Join(t.TempDir(), "first.db"))
	for _, part := range []*profile.Profile{profile.Frame(p, from, from.Add(7*time.Minute), reach), profile.Frame(p, from.Add(7*time.Minute), from.Add(time.Hour), reach)} {
		if _, err := l2.Update(context.Background(), UpdateSpec{Inputs: []*profile.Profile{part}, Params: params(), Bucket: 5 * time.Minute}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := l2.Report(context.Background(), Query{Since: from, Until: from.Add(5 * time.Minute), GroupBy: []string{"namespace"}, EnergyUSDPerKWh: 0.12})
	if err != nil {
		t.Fatal(err)
	}
	sameFigures(t, got, oneAnalysis(t, profile.Frame(p, from, from.Add(5*time.Minute), reach), []string{"namespace"}))
}

// TestTenureBridgedAcrossUpdates: a source knows a workload from its
// samples, so a read that starts between two samples has the workload
// from its first sample on, an interval after the read's start. Updates
// cut between samples, each input's workloads holding their GPUs from its
// first sample (as the Prometheus source reads them), count what one
// analysis of the whole counts: the hole at each edge is bridged.
func TestTenureBridgedAcrossUpdates(t *testing.T) {
	p, err := sim.Record(sim.Options{Nodes: 2, Scenario: sim.ScenarioMixed, Seed: 4}, 30*time.Second, time.Hour, profile.Generator{Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	want := oneAnalysis(t, p, []string{"workload"})
	l := openDSN(t, filepath.Join(t.TempDir(), "ledger.db"))
	from := p.StartedAt.Add(-time.Millisecond)
	for _, cut := range []time.Duration{10*time.Minute + 7*time.Second, 25*time.Minute + 19*time.Second, 41*time.Minute + 3*time.Second, time.Hour} {
		to := p.StartedAt.Add(cut)
		part := profile.Join([]*profile.Profile{p}, from, to, false)
		first := math.Inf(1) // the read's first sample, from its start
		for _, n := range part.Nodes {
			for _, g := range n.GPUs {
				if len(g.Series.T) > 0 {
					first = math.Min(first, g.Series.T[0])
				}
			}
		}
		span := part.EndedAt.Sub(part.StartedAt).Seconds()
		for ni := range part.Nodes {
			for wi := range part.Nodes[ni].Workloads {
				part.Nodes[ni].Workloads[wi].Intervals = []profile.Tenure{{StartS: first, EndS: span}}
			}
		}
		if _, err := l.Update(context.Background(), UpdateSpec{Inputs: []*profile.Profile{part}, Params: params()}); err != nil {
			t.Fatal(err)
		}
		from = to
	}
	got, err := l.Report(context.Background(), Query{GroupBy: []string{"workload"}, EnergyUSDPerKWh: 0.12})
	if err != nil {
		t.Fatal(err)
	}
	sameFigures(t, got, want)
}
