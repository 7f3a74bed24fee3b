package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/testkit/cputime"

	"github.com/seedance/seedance/chargeback"
	"github.com/seedance/seedance/internal/testkit/pgtest"
)

// benchMonth is the month the benchmark ledgers hold.
var benchMonth = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

// benchDays is how many days the benchmark ledgers hold.
const benchDays = 30

// monthLedger writes into the empty ledger at dsn 30 days of hourly
// buckets of 1,000 nodes of 8 GPUs, in clusters of equal size: per node
// and hour one GPU row and five hold rows (four workloads of 2 GPUs,
// which change every day, and what no workload held): 720,000 GPU rows,
// 3.6 M hold rows, 120,000 workloads (700 sets of labels per cluster),
// and their daily and per-owner rollups, as updates would leave them.
func monthLedger(b *testing.B, dsn string, clusters int) {
	l, err := Open(context.Background(), dsn, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	tx, err := l.db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	per, size := 1000/clusters, 1
	if l.postgres {
		size = 1000
	}
	cluster := func(n int) string { return fmt.Sprintf("c%02d", n/per) }
	owners := map[string]int64{}
	wl := newBatch(tx, `seedance_workload (cluster, id, name, kind, labels, first_bucket, last_bucket, owner, settled_last, gappy, held_s, used_s, idle_s, cost_usd, energy_j, energy_unknown)`, 16, size)
	gpu := newBatch(tx, `seedance_gpu (cluster, bucket, node, model, provisional, observed_s, idle_s, util_s, util_covered_s, cost_usd, energy_j, energy_measured, price_usd_per_hour, price_source)`, 14, size)
	hold := newBatch(tx, `seedance_hold (cluster, bucket, node, model, workload, provisional, held_s, used_s, idle_s, cost_usd, energy_j)`, 11, size)
	const model = "NVIDIA H100 80GB HBM3"
	t0 := time.Now()
	defer func() { b.Logf("ledger written in %s", time.Since(t0)) }()
	for day := range benchDays {
		first := benchMonth.Add(time.Duration(day) * 24 * time.Hour).Unix()
		for n := range 1000 {
			labels := fmt.Sprintf(`{"namespace":"ns%d","seedance.io/controller":"Deployment/app%d","team":"team%d"}`, n%20, n%50, n%7)
			o, ok := owners[labels]
			if !ok {
				o = int64(len(owners) + 1)
				owners[labels] = o
			}
			for w := range 4 {
				id := fmt.Sprintf("ns%d/pod-%d-%d-%d", n%20, day, n, w)
				wl.add(b, cluster(n), id, id, "pod", labels, first, first+23*3600, o, first+23*3600, 0, 0.0, 0.0, 0.0, 0.0, 0.0, 0)
			}
		}
		for h := range 24 {
			bucket := first + int64(h)*3600
			for n := range 1000 {
				node := fmt.Sprintf("node-%04d", n)
				idle := float64((n*7+h)%10) * 1000
				gpu.add(b, cluster(n), bucket, node, model, 0, 28800.0, idle, 9000.0, 28800.0, idle/3600*4.916, 1.0e7, 1, 4.916, "built-in table")
				for w := range 4 {
					hold.add(b, cluster(n), bucket, node, model, fmt.Sprintf("ns%d/pod-%d-%d-%d", n%20, day, n, w), 0, 7200.0, 2250.0, idle/5, idle/5/3600*4.916, 2.5e6)
				}
				hold.add(b, cluster(n), bucket, node, model, "", 0, 0.0, 0.0, 0.0, 0.0, 0.0) // every GPU held
			}
		}
	}
	for _, bt := range []*batch{wl, gpu, hold} {
		bt.flush(b)
	}
	for labels, id := range owners {
		if _, err := tx.Exec(`INSERT INTO seedance_owner (id, kind, class, controller, labels) VALUES ($1, 'pod', 'inference', $2, $3)`, id, "", labels); err != nil {
			b.Fatal(err)
		}
	}
	for c := 0; c < clusters; c++ {
		if _, err := tx.Exec(`INSERT INTO seedance_state (cluster, first_ms, watermark_ms, data_end_ms, bucket_s, params, tail, updates) VALUES ($1, $2, $3, $3, 3600, '', '', 1)`,
			fmt.Sprintf("c%02d", c), benchMonth.UnixMilli(), benchMonth.Add(30*24*time.Hour).UnixMilli()); err != nil {
			b.Fatal(err)
		}
	}
	for i, stmt := range benchRollups {
		if _, err := tx.Exec(stmt); err != nil {
			b.Fatalf("rollup %d: %v", i, err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	if l.postgres {
		// A month-old ledger has been vacuumed and analyzed by PostgreSQL's
		// autovacuum many times; one written in a transaction a moment ago
		// has no statistics (the planner guesses 18 rows where a day has
		// 5,000), and its first reads set every row's hint bits and skip the
		// dead versions of the updated workloads. The reports are measured
		// on the ledger as autovacuum leaves it (docs/performance.md).
		if _, err := l.db.Exec(`VACUUM ANALYZE`); err != nil {
			b.Fatal(err)
		}
	}
}

// benchRollups fill the rollups and the workloads' sums from the hourly
// rows, as the updates that wrote them would have.
var benchRollups = []string{
	`INSERT INTO seedance_gpu_day SELECT cluster, bucket - bucket % 86400, node, model, price_usd_per_hour, price_source, provisional,
	SUM(observed_s), SUM(idle_s), SUM(util_s), SUM(util_covered_s), SUM(cost_usd), SUM(energy_j), MAX(energy_measured)
	FROM seedance_gpu GROUP BY cluster, bucket - bucket % 86400, node, model, price_usd_per_hour, price_source, provisional`,
	`INSERT INTO seedance_hold_day SELECT cluster, bucket - bucket % 86400, workload, provisional, SUM(held_s), SUM(used_s), SUM(idle_s), SUM(cost_usd), SUM(energy_j)
	FROM seedance_hold GROUP BY cluster, bucket - bucket % 86400, workload, provisional`,
	`UPDATE seedance_workload SET held_s = x.h, used_s = x.u, idle_s = x.i, cost_usd = x.c, energy_j = x.e
	FROM (SELECT cluster, workload, SUM(held_s) h, SUM(used_s) u, SUM(idle_s) i, SUM(cost_usd) c, SUM(energy_j) e FROM seedance_hold_day GROUP BY cluster, workload) x
	WHERE x.cluster = seedance_workload.cluster AND x.workload = seedance_workload.id`,
	`INSERT INTO seedance_owner_hold SELECT h.cluster, h.bucket, COALESCE(w.owner, 0), h.provisional, SUM(h.held_s), SUM(h.used_s), SUM(h.idle_s), SUM(h.cost_usd), SUM(h.energy_j), 0
	FROM seedance_hold h LEFT JOIN seedance_workload w ON w.cluster = h.cluster AND w.id = h.workload GROUP BY h.cluster, h.bucket, COALESCE(w.owner, 0), h.provisional`,
	`INSERT INTO seedance_owner_hold_day SELECT cluster, bucket - bucket % 86400, owner, provisional, SUM(held_s), SUM(used_s), SUM(idle_s), SUM(cost_usd), SUM(energy_j), 0
	FROM seedance_owner_hold GROUP BY cluster, bucket - bucket % 86400, owner, provisional`,
	strings.Replace(strings.TrimSpace(strings.SplitN(migration5, ";", 2)[1]), "seedance_charge_day SELECT", // the per-day charges
		"seedance_charge_day (cluster, day, node, model, workload, provisional, held_s, used_s, idle_s, held_usd, used_usd, cost_usd, energy_j, price_usd_per_hour) SELECT", 1),
	strings.TrimSpace(strings.Split(migration8, ";")[1]), // their owners
}

// batch inserts rows, size at a time, by a statement prepared once: many
// rows a statement for PostgreSQL (a round trip each), one for SQLite
// (which finds a named parameter by a linear search).
type batch struct {
	tx          *sql.Tx
	head        string
	width, size int
	stmt        *sql.Stmt
	args        []any
}

func newBatch(tx *sql.Tx, head string, width, size int) *batch {
	return &batch{tx: tx, head: head, width: width, size: size}
}

func (bt *batch) add(b *testing.B, args ...any) {
	bt.args = append(bt.args, args...)
	if len(bt.args) == bt.size*bt.width {
		if bt.stmt == nil {
			var err error
			if bt.stmt, err = bt.tx.Prepare(bt.insert(bt.size)); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := bt.stmt.Exec(bt.args...); err != nil {
			b.Fatal(err)
		}
		bt.args = bt.args[:0]
	}
}

// flush inserts the rows left.
func (bt *batch) flush(b *testing.B) {
	if len(bt.args) > 0 {
		if _, err := bt.tx.Exec(bt.insert(len(bt.args)/bt.width), bt.args...); err != nil {
			b.Fatal(err)
		}
	}
}

// insert is the statement of n rows.
func (bt *batch) insert(n int) string {
	rows := make([]string, n)
	for i := range rows {
		ps := make([]string, bt.width)
		for j := range ps {
			ps[j] = fmt.Sprintf("$%d", i*bt.width+j+1)
		}
		rows[i] = "(" + strings.Join(ps, ", ") + ")"
	}
	return `INSERT INTO ` + bt.head + ` VALUES ` + strings.Join(rows, ", ")
}

// BenchmarkMonthReport answers month-to-date by team (and by workload)
// over a month of hourly buckets of 1,000 nodes (monthLedger), across
// clusters, from a fresh open each time, as `seedance ledger report` does;
// it reports the CPU time (user + sys) of this process per report beside
// the wall time (PostgreSQL's own CPU is the server's: see
// docs/performance.md). sqlite: one cluster in an embedded file (kept at
// $SEEDANCE_BENCH_LEDGER when set); postgres: 10 clusters of 100 nodes in
// a real PostgreSQL.
func BenchmarkMonthReport(b *testing.B) {
	for _, backend := range []string{"sqlite", "postgres"} {
		b.Run(backend, func(b *testing.B) {
			dsn, clusters := os.Getenv("SEEDANCE_BENCH_LEDGER"), 1
			if dsn == "" {
				dsn = filepath.Join(b.TempDir(), "month.db")
			}
			if backend == "postgres" {
				dsn, clusters = pgtest.Start(b), 10
			}
			if _, err := os.Stat(dsn); err != nil {
				monthLedger(b, dsn, clusters)
			}
			for _, c := range []struct {
				name    string
				groupBy []string
				groups  int
				share   chargeback.Mode
			}{{"team", []string{"team=team"}, 7, ""}, {"team-shared", []string{"team=team"}, 7, chargeback.Weighted},
				{"cluster-team", []string{"cluster", "team=team"}, 7 * clusters, ""}, {"workload", []string{"workload"}, 120000, ""}} {
				b.Run(c.name, func(b *testing.B) {
					monthReports(b, dsn, Query{Since: benchMonth, GroupBy: c.groupBy, ShareIdle: c.share}, c.groups)
				})
			}
			// The month's FOCUS 1.3 export, shared weighted by cluster
			// (issue #56: ≤ 5 s with the server's CPU).
			b.Run("focus-1.3-csv", func(b *testing.B) { monthExports(b, dsn, "1.3", "csv") })
		})
	}
}

func monthReports(b *testing.B, dsn string, q Query, groups int) {
	server := pgtest.ServerCPU(b, dsn)
	cpu0, srv0 := cputime.Process(), server()
	b.ResetTimer()
	for range b.N {
		l, err := Open(context.Background(), dsn, Options{ReadOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		r, err := l.Report(context.Background(), q)
		if err != nil {
			b.Fatal(err)
		}
		if len(r.Attribution.Groups) != groups {
			b.Fatalf("groups: %d", len(r.Attribution.Groups))
		}
		l.Close()
	}
	b.ReportMetric((cputime.Process()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
	if srv := server(); srv > 0 {
		b.ReportMetric((srv-srv0).Seconds()/float64(b.N), "server-cpu-s/op")
	}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		b.ReportMetric(float64(ru.Maxrss)/1024, "peak-RSS-MiB") // the process's, the ledger's writing included
	}
}
