package ledger

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/seedance/seedance/chargeback"
	"github.com/seedance/seedance/profile"
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
