package ledger

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/testkit/cputime"

	"github.com/seedance/seedance/profile"
)

// TestCorruptLedgerRefused (#56): a SQLite ledger with a garbled page of
// its workloads is refused by a reader with one line, and the full check
// lists the problem; a healthy ledger passes both on either backend.
func TestCorruptLedgerRefused(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	l := openDSN(t, path)
	if _, err := l.Update(ctx, UpdateSpec{Inputs: []*profile.Profile{cluster(t)}, Params: params()}); err != nil {
		t.Fatal(err)
	}
	var root int64
	if err := l.db.QueryRow(`SELECT rootpage FROM sqlite_schema WHERE name = 'seedance_workload'`).Scan(&root); err != nil {
		t.Fatal(err)
	}
	if problems, _, err := l.Integrity(ctx); err != nil || len(problems) != 0 {
		t.Fatalf("a healthy ledger: %v %v", problems, err)
	}
	l.Close()
	r, err := Open(ctx, path, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("a healthy ledger refused: %v", err)
	}
	r.Close()
	// The page's header: its cell count and first cell's offset garbled.
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0xff, 0xff, 0xff, 0xff}, (root-1)*4096+3); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = Open(ctx, path, Options{ReadOnly: true})
	if !errors.Is(err, ErrCorrupt) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "seedance_workload") {
		t.Fatalf("a corrupt ledger opened for a report: %v", err)
	}
	r, err = Open(ctx, path, Options{ReadOnly: true, Unchecked: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	problems, how, err := r.Integrity(ctx)
	if err != nil || len(problems) == 0 || !strings.Contains(how, "integrity_check") {
		t.Fatalf("the full check: %q (%s) %v", problems, how, err)
	}
}

// TestIntegrityPostgres: on PostgreSQL the full check reads every table
// and says whether the server's data checksums are on.
func TestIntegrityPostgres(t *testing.T) {
	l := ledgers(t, "postgres")()
	if _, err := l.Update(context.Background(), UpdateSpec{Inputs: []*profile.Profile{cluster(t)}, Params: params()}); err != nil {
		t.Fatal(err)
	}
	problems, how, err := l.Integrity(context.Background())
	if err != nil || len(problems) != 0 || !strings.Contains(how, "data checksums are") {
		t.Fatalf("%q (%s) %v", problems, how, err)
	}
}

// BenchmarkQuickCheck: what a reader's quick check costs on the month of
// 1,000 nodes (monthLedger), against opening it unchecked, in CPU time,
// the two alternated round by round:
// SEEDANCE_BENCH_LEDGER=/var/tmp/month.db go test ./ledger -run XXX -bench QuickCheck -benchtime 3x
func BenchmarkQuickCheck(b *testing.B) {
	dsn := os.Getenv("SEEDANCE_BENCH_LEDGER")
	if dsn == "" {
		dsn = filepath.Join(b.TempDir(), "month.db")
	}
	if _, err := os.Stat(dsn); err != nil {
		monthLedger(b, dsn, 1)
	}
	var took [2]time.Duration
	b.ResetTimer()
	for range b.N {
		for i, unchecked := range []bool{true, false} {
			cpu0 := cputime.Process()
			l, err := Open(context.Background(), dsn, Options{ReadOnly: true, Unchecked: unchecked})
			if err != nil {
				b.Fatal(err)
			}
			l.Close()
			took[i] += cputime.Process() - cpu0
		}
	}
	b.ReportMetric((took[1]-took[0]).Seconds()/float64(b.N), "check-cpu-s/op")
	b.ReportMetric(took[0].Seconds()/float64(b.N), "open-cpu-s/op")
}
