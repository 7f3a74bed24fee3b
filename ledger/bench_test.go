package ledger

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// monthLedger writes a ledger of 30 days of hourly buckets of 1,000 nodes
// of 8 GPUs: per node and hour one GPU row and five hold rows (four
// workloads of 2 GPUs, which change every day, and what no workload
// held): 720,000 GPU rows, 3.6 M hold rows, 120,000 workloads (700 sets
// of labels), and their daily and per-owner rollups. The file is kept at $SEEDANCE_BENCH_LEDGER when set.
func monthLedger(b *testing.B) string {
	path := os.Getenv("SEEDANCE_BENCH_LEDGER")
	if path == "" {
		path = filepath.Join(b.TempDir(), "month.db")
	}
	if _, err := os.Stat(path); err == nil {
		return path
	}
	l, err := Open(context.Background(), path, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	tx, err := l.db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	gpu, _ := tx.Prepare(`INSERT INTO seedance_gpu (bucket, node, model, provisional, observed_s, idle_s, util_s, util_covered_s, cost_usd, energy_j, energy_measured, price_usd_per_hour, price_source) VALUES ($1, $2, 'NVIDIA H100 80GB HBM3', 0, 28800, $3, 9000, 28800, $4, 1.0e7, 1, 4.916, 'built-in table')`)
	hold, _ := tx.Prepare(`INSERT INTO seedance_hold (bucket, node, model, workload, provisional, held_s, used_s, idle_s, cost_usd, energy_j) VALUES ($1, $2, 'NVIDIA H100 80GB HBM3', $3, 0, 7200, 2250, $4, $5, 2.5e6)`)
	wl, _ := tx.Prepare(`INSERT INTO seedance_workload (id, name, kind, labels, first_bucket, last_bucket) VALUES ($1, $1, 'pod', $2, $3, $4)`)
	for day := range 30 {
		for n := range 1000 {
			for w := range 4 {
				id := fmt.Sprintf("ns%d/pod-%d-%d-%d", n%20, day, n, w)
				labels := fmt.Sprintf(`{"namespace":"ns%d","team":"team%d","seedance.io/controller":"Deployment/app%d"}`, n%20, n%7, n%50)
				if _, err := wl.Exec(id, labels, t0.Add(time.Duration(day)*24*time.Hour).Unix(), t0.Add(time.Duration(day)*24*time.Hour+23*time.Hour).Unix()); err != nil {
					b.Fatal(err)
				}
			}
		}
		for h := range 24 {
			bucket := t0.Add(time.Duration(day*24+h) * time.Hour).Unix()
			for n := range 1000 {
				node := fmt.Sprintf("node-%04d", n)
				idle := float64((n*7+h)%10) * 1000
				if _, err := gpu.Exec(bucket, node, idle, idle/3600*4.916); err != nil {
					b.Fatal(err)
				}
				for w := range 4 {
					if _, err := hold.Exec(bucket, node, fmt.Sprintf("ns%d/pod-%d-%d-%d", n%20, day, n, w), idle/5, idle/5/3600*4.916); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := hold.Exec(bucket, node, "", idle/5, idle/5/3600*4.916); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	if _, err := tx.Exec(`INSERT INTO seedance_state (id, first_ms, watermark_ms, data_end_ms, bucket_s, params, tail, updates) VALUES (1, $1, $2, $2, 3600, '', '', 1)`,
		t0.UnixMilli(), t0.Add(30*24*time.Hour).UnixMilli()); err != nil {
		b.Fatal(err)
	}
	for _, stmt := range strings.Split(rollups, ";") {
		if strings.TrimSpace(stmt) != "" {
			if _, err := tx.Exec(stmt); err != nil {
				b.Fatal(err)
			}
		}
	}
	// Schema 3's owners and rollups, as a migration fills them; every
	// workload held its GPUs in each of its buckets (no hole).
	if err := backfill3(context.Background(), tx); err != nil {
		b.Fatal(err)
	}
	if _, err := tx.Exec(`UPDATE seedance_workload SET gappy = 0`); err != nil {
		b.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkMonthReport answers month-to-date by team (and by workload)
// over a month of hourly buckets of 1,000 nodes (monthLedger), from a
// fresh open of the file each time, as `seedance ledger report` does; it
// reports the CPU time (user + sys) per report beside the wall time.
func BenchmarkMonthReport(b *testing.B) {
	path := monthLedger(b)
	fi, _ := os.Stat(path)
	for _, c := range []struct {
		name    string
		groupBy []string
		groups  int
	}{{"team", []string{"team=team"}, 7}, {"workload", []string{"workload"}, 120000}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportMetric(float64(fi.Size())/1e6, "ledger-MB")
			cpu0 := cpuTime()
			b.ResetTimer()
			for range b.N {
				l, err := Open(context.Background(), path, Options{})
				if err != nil {
					b.Fatal(err)
				}
				r, err := l.Report(context.Background(), Query{Since: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), GroupBy: c.groupBy})
				if err != nil {
					b.Fatal(err)
				}
				if len(r.Attribution.Groups) != c.groups {
					b.Fatalf("groups: %d", len(r.Attribution.Groups))
				}
				l.Close()
			}
			b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}

// cpuTime is the process' user and system time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
