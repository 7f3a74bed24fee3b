package ledger

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/seedance/seedance/chargeback"
	"github.com/seedance/seedance/internal/testkit/engine"
	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source/sim"
)

// TestProvisionalDayFromTheHours (#56): the daily rollups hold settled
// rows only (schema 12), so a report of a whole UTC day whose last hour is
// still provisional reads that day from the hourly rows. The day from
// midnight to 23:50, counted in three pieces: the whole day's report
// equals one analysis of it; its charges read as a whole day (per owner
// and per workload) equal those read hour by hour; with settled rows only
// it stops at the open bucket.
func TestProvisionalDayFromTheHours(t *testing.T) {
	engine.SkipShort(t, "simulates a day")
	p, err := sim.Record(sim.Options{Nodes: 4, Scenario: sim.ScenarioMixed, Seed: 3}, time.Minute, 24*time.Hour-10*time.Minute, profile.Generator{Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	day := p.StartedAt.Truncate(24 * time.Hour)
	p.EndedAt, p.StartedAt = p.EndedAt.Add(day.Sub(p.StartedAt)), day
	want := oneAnalysis(t, p, []string{"namespace"})
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			l := ledgers(t, backend)()
			for _, part := range pieces(p, rand.New(rand.NewPCG(7, 7)), 3) {
				if _, err := l.Update(context.Background(), UpdateSpec{Inputs: []*profile.Profile{part}, Params: params()}); err != nil {
					t.Fatal(err)
				}
			}
			q := Query{Since: day, Until: day.Add(24 * time.Hour), GroupBy: []string{"namespace"}, EnergyUSDPerKWh: 0.12}
			got, err := l.Report(context.Background(), q)
			if err != nil {
				t.Fatal(err)
			}
			if got.Summary.ProvisionalFrom == nil {
				t.Fatal("no provisional rows: the test needs some")
			}
			sameFigures(t, got, want)
			q.Settled = true
			settled, err := l.Report(context.Background(), q)
			if err != nil {
				t.Fatal(err)
			}
			if settled.Summary.GPUHours >= got.Summary.GPUHours {
				t.Errorf("settled GPU-hours %v, all %v: the open bucket's should be left out", settled.Summary.GPUHours, got.Summary.GPUHours)
			}
			sameChargeDays(t, l)
			wholeDayCharges(t, l, day)
		})
	}
}

// wholeDayCharges: the day's charges read as a whole day (per owner, and
// per workload) equal those read bucket by bucket.
func wholeDayCharges(t *testing.T, l *Ledger, day time.Time) {
	t.Helper()
	for _, by := range [][]string{{"namespace"}, {"workload"}} {
		q := Query{Since: day, Until: day.Add(24 * time.Hour), GroupBy: by, ShareIdle: chargeback.Weighted, ShareIdleBy: chargeback.ScopeNode}
		chargesAsHours(t, l, q, day, 24)
	}
}

// decoded is v through JSON, as jsonnear compares it.
func decoded(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
