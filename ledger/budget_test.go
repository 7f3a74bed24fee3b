package ledger

import (
	"context"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/seedance/seedance/chargeback"
	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source/sim"
)

// TestReportBudgets: a report asked for budgets carries their status for
// the month of the data's end, one per budget in force; without budgets
// it carries none.
func TestReportBudgets(t *testing.T) {
	withCounted(t, func(t *testing.T, l *Ledger, _ *profile.Profile) {
		ctx := context.Background()
		q := Query{GroupBy: []string{"namespace"}}
		r, err := l.Report(ctx, q)
		if err != nil || r.Budgets != nil {
			t.Fatalf("without budgets: %v, %+v", err, r.Budgets)
		}
		q.Budgets = []chargeback.Budget{{By: "namespace", Key: "training", Monthly: 100, Currency: "USD"}, {By: "namespace", Key: "eval", Monthly: 1, Currency: "USD"}}
		r, err = l.Report(ctx, q)
		if err != nil || len(r.Budgets) != 2 {
			t.Fatalf("budgets: %v, %+v", err, r.Budgets)
		}
	})
}

// TestSQLiteOneConnection: an embedded ledger is used through one
// connection, so that its transactions queue in the process instead of
// failing on SQLite's lock.
func TestSQLiteOneConnection(t *testing.T) {
	l := openDSN(t, filepath.Join(t.TempDir(), "ledger.db"))
	if got := l.db.Stats().MaxOpenConnections; got != 1 {
		t.Fatalf("at most %d connections, want 1", got)
	}
}

// TestBudgetAtAMonthsFirstHour: data that ends at 00:00 on the 1st is the
// month before's: its budgets are of that month (with its charges and a
// forecast equal to them, no time left), not of the new month that holds
// nothing yet.
func TestBudgetAtAMonthsFirstHour(t *testing.T) {
	p, err := sim.Record(sim.Options{Nodes: 2, Scenario: sim.ScenarioMixed, Seed: 3, Start: time.Date(2026, 11, 30, 16, 0, 0, 0, time.UTC)}, time.Minute, 8*time.Hour, profile.Generator{Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	l := openDSN(t, filepath.Join(t.TempDir(), "ledger.db"))
	ctx := context.Background()
	if _, err := l.Update(ctx, UpdateSpec{Inputs: []*profile.Profile{p}, Params: params()}); err != nil {
		t.Fatal(err)
	}
	r, err := l.Report(ctx, Query{GroupBy: []string{"namespace"}, Budgets: []chargeback.Budget{{By: "cluster", Key: DefaultCluster, Monthly: 1e6, Currency: "USD"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Budgets) != 1 || r.Budgets[0].Month != "2026-11" || r.Budgets[0].ActualUSD <= 0 || r.Budgets[0].ForecastUSD == nil || *r.Budgets[0].ForecastUSD != r.Budgets[0].ActualUSD {
		t.Errorf("budgets %+v", r.Budgets)
	}
}

// TestSettledRollupLeavesProvisionalRowsOut: the settled-only report (what
// -f prom's counters read, which must only grow) counts the settled rows
// alone: its GPU-hours are those of the rows before the watermark, fewer
// than the whole report's.
func TestSettledRollupLeavesProvisionalRowsOut(t *testing.T) {
	withCounted(t, func(t *testing.T, l *Ledger, _ *profile.Profile) {
		ctx := context.Background()
		all, err := l.Report(ctx, Query{GroupBy: []string{"namespace"}})
		if err != nil {
			t.Fatal(err)
		}
		settled, err := l.Report(ctx, Query{GroupBy: []string{"namespace"}, Settled: true})
		if err != nil {
			t.Fatal(err)
		}
		var want float64
		if err := l.db.QueryRowContext(ctx, `SELECT SUM(observed_s) / 3600 FROM seedance_gpu WHERE provisional = 0`).Scan(&want); err != nil {
			t.Fatal(err)
		}
		if math.Abs(settled.Summary.GPUHours-want) > 1e-6*want || settled.Summary.GPUHours >= all.Summary.GPUHours {
			t.Errorf("settled %v GPU-hours, the settled rows hold %v, the whole report %v", settled.Summary.GPUHours, want, all.Summary.GPUHours)
		}
	})
}
