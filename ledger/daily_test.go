package ledger

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/chargeback"
	"github.com/seedance/seedance/internal/testkit/engine"
	"github.com/seedance/seedance/internal/testkit/jsonnear"
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
// per workload) equal those read bucket by bucket (a grid intensity reads
// every bucket apart), row for row, to jsonnear's tolerance: the two sum
// the same rows in another order.
func wholeDayCharges(t *testing.T, l *Ledger, day time.Time) {
	t.Helper()
	var grid strings.Builder
	grid.WriteString("datetime,zone,gco2e_per_kwh\n")
	for h := range 24 {
		grid.WriteString(day.Add(time.Duration(h)*time.Hour).Format(time.RFC3339) + ",default,100\n")
	}
	in, err := chargeback.ReadIntensity(strings.NewReader(grid.String()), "grid.csv")
	if err != nil {
		t.Fatal(err)
	}
	for _, by := range [][]string{{"namespace"}, {"workload"}} {
		q := Query{Since: day, Until: day.Add(24 * time.Hour), GroupBy: by, ShareIdle: chargeback.Weighted, ShareIdleBy: chargeback.ScopeNode}
		whole, err := l.Report(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		q.Carbon = in
		hours, err := l.Report(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		a, b := whole.Chargeback, hours.Chargeback
		if len(a.Rows) != len(b.Rows) || len(a.Rows) < 2 {
			t.Fatalf("by %v: %d rows from the whole day, %d from the hours", by, len(a.Rows), len(b.Rows))
		}
		for i, r := range append(a.Rows, a.Unallocated, a.Total) {
			w := append(b.Rows, b.Unallocated, b.Total)[i]
			w.EmissionsKgCO2e = nil
			jsonnear.Equal(t, fmt.Sprintf("by %v, row %d", by, i), decoded(t, r), decoded(t, w))
		}
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
