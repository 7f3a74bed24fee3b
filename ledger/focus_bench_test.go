package ledger

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/testkit/cputime"

	"github.com/seedance/seedance/chargeback"
	"github.com/seedance/seedance/internal/testkit/pgtest"
)

// BenchmarkMonthFocusExport writes the FOCUS exports (1.3 and 1.2, CSV and Parquet) of
// the month of monthLedger, 1,000 nodes × 8 GPUs × 30 days in one embedded
// SQLite ledger (kept at $SEEDANCE_BENCH_LEDGER when set), the idle cost
// shared weighted by cluster, from a fresh open each time as `seedance
// ledger export` does, beside the month's report by team as the baseline
// of the same run. It reports the CPU time (user + sys) per export, the
// rows, and the peak of the Go heap in use during the export (sampled
// every 5 ms): the export holds a day of lines, whatever the month.
func BenchmarkMonthFocusExport(b *testing.B) {
	dsn := os.Getenv("SEEDANCE_BENCH_LEDGER")
	if dsn == "" {
		dsn = filepath.Join(b.TempDir(), "month.db")
	}
	if _, err := os.Stat(dsn); err != nil {
		monthLedger(b, dsn, 1)
	}
	b.Run("report-by-team", func(b *testing.B) { monthReports(b, dsn, Query{Since: benchMonth, GroupBy: []string{"team=team"}}, 7) })
	for _, version := range chargeback.FocusVersions {
		for _, enc := range chargeback.FocusFormats {
			b.Run("focus-"+version+"-"+enc, func(b *testing.B) { monthExports(b, dsn, version, enc) })
		}
	}
}

func monthExports(b *testing.B, dsn, version, encoding string) {
	var peak atomic.Uint64
	stop := make(chan struct{})
	go func() {
		var ms runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
				runtime.ReadMemStats(&ms)
				if ms.HeapInuse > peak.Load() {
					peak.Store(ms.HeapInuse)
				}
			}
		}
	}()
	defer close(stop)
	runtime.GC()
	server := pgtest.ServerCPU(b, dsn)
	cpu0, srv0 := cputime.Process(), server()
	rows := 0
	b.ResetTimer()
	for range b.N {
		l, err := Open(context.Background(), dsn, Options{ReadOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		var f *chargeback.Focus
		q := Query{Since: benchMonth, GroupBy: []string{"team=team"}, ShareIdle: chargeback.Weighted, ShareIdleBy: chargeback.ScopeCluster}
		rows = 0
		if _, err := l.Charges(context.Background(), q, func(w Window) (err error) {
			f, err = chargeback.NewFocus(io.Discard, chargeback.FocusOptions{Version: version, Encoding: encoding, Account: "gpu-platform", From: w.Start, To: w.End,
				Mode: q.ShareIdle, Scope: q.ShareIdleBy})
			return err
		}, func(day []chargeback.Line) error {
			rows += len(day)
			return f.Write(day)
		}); err != nil {
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
		l.Close()
	}
	b.ReportMetric((cputime.Process()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
	if srv := server(); srv > 0 {
		b.ReportMetric((srv-srv0).Seconds()/float64(b.N), "server-cpu-s/op")
	}
	b.ReportMetric(float64(rows), "rows")
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
}
