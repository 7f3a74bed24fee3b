package ledger

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/profile"
)

// withoutSamples is p less every GPU's samples of [from, to) (seconds
// after its start): a scrape outage.
func withoutSamples(p *profile.Profile, from, to float64) *profile.Profile {
	q := *p
	q.Nodes = slices.Clone(p.Nodes)
	for ni := range q.Nodes {
		n := &q.Nodes[ni]
		n.GPUs = slices.Clone(n.GPUs)
		for gi := range n.GPUs {
			s := &n.GPUs[gi].Series
			keep := func(i int) bool { return s.T[i] < from || s.T[i] >= to }
			cut := func(v profile.Values) profile.Values {
				var out profile.Values
				for i := range v {
					if keep(i) {
						out = append(out, v[i])
					}
				}
				return out
			}
			var cols []profile.Values
			for m := profile.Metric(0); m < profile.NumMetrics; m++ {
				cols = append(cols, *s.Col(m))
			}
			t := cut(s.T)
			for m := profile.Metric(0); m < profile.NumMetrics; m++ {
				if cols[m] != nil {
					*s.Col(m) = cut(cols[m])
				}
			}
			s.T = t
		}
	}
	return &q
}

// TestBackfillAcrossAHoleCountsEnergyOnce: a ledger counted a profile
// with an hour-long hole (10:00–11:00); the update that jumped it put the
// energy counter's increase over the whole hole into the first bucket
// after it. A backfill of the hole's own hour alone would count that
// energy again (+15 % on the trial's cluster): it is refused, naming the
// range to read; a read of the hours around the hole counts the buckets
// next to it again, and the ledger equals one analysis of the whole,
// energy included.
func TestBackfillAcrossAHoleCountsEnergyOnce(t *testing.T) {
	p := cluster(t)
	hole := withoutSamples(p, 3600, 7200)
	want := oneAnalysis(t, p, []string{"namespace"})
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			l := ledgers(t, backend)()
			ctx := context.Background()
			first, err := l.Update(ctx, UpdateSpec{Inputs: []*profile.Profile{hole}, Params: params()})
			if err != nil {
				t.Fatal(err)
			}
			ten, eleven := p.StartedAt.Add(time.Hour), p.StartedAt.Add(2*time.Hour)
			// The hole is a warning of the update, and of every report of
			// a window that holds it, until it is filled.
			const warning = "no sample of any GPU from 2026-01-05T09:59:45Z to 2026-01-05T11:00:00Z in cluster default: a hole in its data " +
				"(fill it from a source that holds it: seedance ledger update --cluster default --start 2026-01-05T07:58:29Z --end 2026-01-05T12:01:32Z)"
			holeWarned := func(since, until time.Time) bool {
				r, err := l.Report(ctx, Query{Since: since, Until: until, GroupBy: []string{"namespace"}})
				if err != nil {
					t.Fatal(err)
				}
				return slices.Contains(r.Warnings, warning)
			}
			if !slices.Contains(first.Warnings, warning) || !holeWarned(ten, eleven) || !holeWarned(p.StartedAt, ten) || holeWarned(eleven, p.EndedAt) {
				t.Errorf("the hole's warning: the update's %q", first.Warnings)
			}
			onlyHole := profile.Join([]*profile.Profile{p}, ten.Add(-time.Millisecond), eleven.Add(-time.Millisecond), false)
			_, err = l.Update(ctx, UpdateSpec{Inputs: []*profile.Profile{onlyHole}, Params: params()})
			if err == nil || !strings.Contains(err.Error(), "the bucket 2026-01-05T11:00:00Z after the hole this input fills was counted without the hole's data") ||
				!strings.Contains(err.Error(), "or the hole's energy would count twice") {
				t.Fatalf("the hole's hour alone: %v", err)
			}
			around := profile.Join([]*profile.Profile{p}, p.StartedAt.Add(-time.Millisecond), p.EndedAt, false)
			up, err := l.Update(ctx, UpdateSpec{Inputs: []*profile.Profile{around}, Params: params()})
			if err != nil || len(up.Added) == 0 || !slices.ContainsFunc(up.Recounted, func(b time.Time) bool { return b.Equal(eleven) }) {
				t.Fatalf("the hours around the hole: %+v, %v", up, err)
			}
			got, err := l.Report(ctx, Query{GroupBy: []string{"namespace"}, EnergyUSDPerKWh: 0.12})
			if err != nil {
				t.Fatal(err)
			}
			if e, w := *got.Summary.EnergyKWh, *want.Summary.EnergyKWh; math.Abs(e-w) > 1e-6*w {
				t.Errorf("energy %v kWh, one analysis %v", e, w)
			}
			sameFigures(t, got, want)
			sameChargeDays(t, l)
			if holeWarned(p.StartedAt, p.EndedAt) {
				t.Error("the filled hole is still a warning")
			}
		})
	}
}
