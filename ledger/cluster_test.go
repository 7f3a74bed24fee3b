package ledger

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seedance/seedance/pricing"
	"github.com/seedance/seedance/profile"
)

func mustTx(t testing.TB, l *Ledger) *sql.Tx {
	t.Helper()
	tx, err := l.db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback() })
	return tx
}

// hours cuts p into consecutive profiles at every hour from its start.
func hours(p *profile.Profile) []*profile.Profile {
	var out []*profile.Profile
	from := p.StartedAt.Add(-time.Millisecond)
	for to := p.StartedAt.Add(time.Hour); ; to = to.Add(time.Hour) {
		if !to.Before(p.EndedAt) {
			to = p.EndedAt
		}
		out = append(out, profile.Join([]*profile.Profile{p}, from, to, false))
		if !to.Before(p.EndedAt) {
			return out
		}
		from = to
	}
}

// renamed is p with every node renamed and every GPU given another UUID,
// as another cluster's.
func renamed(p *profile.Profile, prefix string) *profile.Profile {
	q := *p
	q.Nodes = append([]profile.Node(nil), p.Nodes...)
	for i := range q.Nodes {
		n := &q.Nodes[i]
		n.Name = prefix + n.Name
		n.GPUs = append([]profile.GPU(nil), n.GPUs...)
		for gi := range n.GPUs {
			n.GPUs[gi].UUID = prefix + n.GPUs[gi].UUID
		}
	}
	return &q
}

// reportJSON is the ledger's report as JSON, by cluster and namespace.
func reportJSON(t testing.TB, l *Ledger, q Query) []byte {
	t.Helper()
	r, err := l.Report(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// reopen opens another handle of the same ledger as cluster, as another
// process would.
func reopen(t testing.TB, l *Ledger, cluster string) *Ledger {
	t.Helper()
	m, err := Open(context.Background(), l.dsn, Options{Cluster: cluster})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// TestConcurrentUpdaters: N updaters started together on a fresh ledger,
// each counting every hour of its cluster in order (the same cluster for
// all, as cron jobs that overlap; or a cluster each), give byte for byte
// the report that serial updates give, in SQLite and PostgreSQL.
func TestConcurrentUpdaters(t *testing.T) {
	p := cluster(t)
	parts := hours(p)
	q := Query{GroupBy: []string{"cluster", "namespace"}, EnergyUSDPerKWh: 0.12}
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			newLedger := ledgers(t, backend)
			for _, n := range []int{2, 4, 8} {
				for _, several := range []bool{false, true} {
					name := func(i int) string {
						if several {
							return fmt.Sprintf("c%d", i)
						}
						return "one"
					}
					serial := newLedger()
					for i := range n {
						if i > 0 && !several {
							break
						}
						m := reopen(t, serial, name(i))
						for _, part := range parts {
							if _, err := m.Update(context.Background(), UpdateSpec{Inputs: []*profile.Profile{renamed(part, name(i)+"-")}, Params: params()}); err != nil {
								t.Fatal(err)
							}
						}
					}
					want := reportJSON(t, serial, q)
					l := newLedger()
					var wg sync.WaitGroup
					errs := make(chan error, n)
					start := make(chan struct{})
					for i := range n {
						m := reopen(t, l, name(i))
						wg.Add(1)
						go func() {
							defer wg.Done()
							<-start
							for _, part := range parts {
								if _, err := m.Update(context.Background(), UpdateSpec{Inputs: []*profile.Profile{renamed(part, name(i)+"-")}, Params: params()}); err != nil {
									errs <- err
									return
								}
							}
						}()
					}
					close(start)
					wg.Wait()
					close(errs)
					for err := range errs {
						t.Fatalf("%d updaters (several clusters: %v): %v", n, several, err)
					}
					if got := reportJSON(t, l, q); !bytes.Equal(got, want) {
						t.Fatalf("%d updaters (several clusters: %v): the report differs from the serial one:\n%s\nserial:\n%s", n, several, got, want)
					}
				}
			}
		})
	}
}

// TestBackfill: an hour the ledger lacks, counted after the hours around
// it, from a read that covers them, equals the in-order build (its
// neighbours are counted again with the gap's data); counting it once more
// adds nothing; an update whose data all lies in held hours is nothing
// new, and says how much it held.
func TestBackfill(t *testing.T) {
	p := cluster(t)
	parts := hours(p)
	if len(parts) != 3 {
		t.Fatalf("%d hours", len(parts))
	}
	q := Query{GroupBy: []string{"namespace"}, EnergyUSDPerKWh: 0.12}
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			newLedger := ledgers(t, backend)
			inOrder := newLedger()
			for _, part := range parts {
				if _, err := inOrder.Update(context.Background(), UpdateSpec{Inputs: []*profile.Profile{part}, Params: params()}); err != nil {
					t.Fatal(err)
				}
			}
			l := newLedger()
			for _, part := range []*profile.Profile{parts[0], parts[2]} {
				if _, err := l.Update(context.Background(), UpdateSpec{Inputs: []*profile.Profile{part}, Params: params()}); err != nil {
					t.Fatal(err)
				}
			}
			up, err := l.Update(context.Background(), UpdateSpec{Inputs: []*profile.Profile{profile.Join([]*profile.Profile{p}, p.StartedAt.Add(-time.Millisecond), p.EndedAt, false)}, Params: params()})
			if err != nil {
				t.Fatal(err)
			}
			// The missed hour holds the sample at its start (the last of
			// the hour before's read): it is counted again, whole, and so
			// are the hours around it.
			hour := p.StartedAt.Truncate(time.Hour)
			if up.Nothing || len(up.Added) != 0 || len(up.Recounted) != 3 || !up.Recounted[1].Equal(hour.Add(time.Hour)) || up.Already != 0 {
				t.Fatalf("the backfill: %+v", up)
			}
			want := oneAnalysis(t, p, []string{"namespace"})
			got, err := l.Report(context.Background(), q)
			if err != nil {
				t.Fatal(err)
			}
			sameFigures(t, got, want)
			ordered, err := inOrder.Report(context.Background(), q)
			if err != nil {
				t.Fatal(err)
			}
			sameReports(t, got, ordered)
			sameChargeDays(t, l)
			sameRollups(t, l, inOrder)
			for h := range 3 {
				a := reportJSON(t, l, Query{Since: hour.Add(time.Duration(h) * time.Hour), Until: hour.Add(time.Duration(h+1) * time.Hour), GroupBy: []string{"namespace"}})
				b := reportJSON(t, inOrder, Query{Since: hour.Add(time.Duration(h) * time.Hour), Until: hour.Add(time.Duration(h+1) * time.Hour), GroupBy: []string{"namespace"}})
				var ra, rb Report
				_ = json.Unmarshal(a, &ra)
				_ = json.Unmarshal(b, &rb)
				sameReports(t, &ra, &rb)
			}
			again, err := l.Update(context.Background(), UpdateSpec{Inputs: []*profile.Profile{parts[1]}, Params: params()})
			if err != nil || !again.Nothing || again.Already < 1 || len(again.Added)+len(again.Recounted) != 0 {
				t.Fatalf("the hour once more: %+v, %v", again, err)
			}
			// Only the missed hour's own read, on a ledger that holds its
			// first sample: counting it again whole needs the minutes
			// around it, which the error names.
			part := newLedger()
			for _, in := range []*profile.Profile{parts[0], parts[2]} {
				if _, err := part.Update(context.Background(), UpdateSpec{Inputs: []*profile.Profile{in}, Params: params()}); err != nil {
					t.Fatal(err)
				}
			}
			_, err = part.Update(context.Background(), UpdateSpec{Inputs: []*profile.Profile{parts[1]}, Params: params()})
			if err == nil || !strings.Contains(err.Error(), "the ledger holds part of the bucket 2026-01-05T10:00:00Z") || !strings.Contains(err.Error(), "read 2026-01-05T09:58:29Z to 2026-01-05T11:01:31Z ") {
				t.Fatalf("the missed hour alone: %v", err)
			}
			after, err := l.Report(context.Background(), q)
			if err != nil {
				t.Fatal(err)
			}
			sameFigures(t, after, want)
		})
	}
}

// withCounted runs f on each backend with a fresh ledger that has
// counted the test cluster's profile.
func withCounted(t *testing.T, f func(t *testing.T, l *Ledger, p *profile.Profile)) {
	p := cluster(t)
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			l := ledgers(t, backend)()
			if _, err := l.Update(context.Background(), UpdateSpec{Inputs: []*profile.Profile{p}, Params: params()}); err != nil {
				t.Fatal(err)
			}
			f(t, l, p)
		})
	}
}

// TestAnotherClusterUnderOneName: data of other nodes for hours a cluster
// counted already is refused, naming the nodes and --cluster; under its
// own name it is counted, and a report by cluster shows both, each equal
// to its own analysis.
func TestAnotherClusterUnderOneName(t *testing.T) {
	withCounted(t, func(t *testing.T, l *Ledger, p *profile.Profile) {
		other := renamed(p, "b-")
		_, err := l.Update(context.Background(), UpdateSpec{Inputs: []*profile.Profile{other}, Params: params()})
		if err == nil || !strings.Contains(err.Error(), "another cluster's data? give each cluster its own name with --cluster") ||
			!strings.Contains(err.Error(), "b-") || strings.Contains(err.Error(), "\n") {
			t.Fatalf("another cluster's data under the same name: %v", err)
		}
		b := reopen(t, l, "b")
		if _, err := b.Update(context.Background(), UpdateSpec{Inputs: []*profile.Profile{other}, Params: params()}); err != nil {
			t.Fatal(err)
		}
		one := oneAnalysis(t, p, []string{"namespace"})
		for _, c := range []string{DefaultCluster, "b"} {
			got, err := l.Report(context.Background(), Query{Clusters: []string{c}, GroupBy: []string{"namespace"}, EnergyUSDPerKWh: 0.12})
			if err != nil {
				t.Fatal(err)
			}
			sameFigures(t, got, one)
		}
		both, err := l.Report(context.Background(), Query{GroupBy: []string{"cluster"}, EnergyUSDPerKWh: 0.12})
		if err != nil {
			t.Fatal(err)
		}
		if len(both.Attribution.Groups) != 2 || both.Summary.GPUHours < 1.99*one.Summary.GPUHours || both.Summary.Nodes != 2*len(p.Nodes) {
			t.Fatalf("by cluster: %+v %+v", both.Attribution.Groups, both.Summary)
		}
		if _, err := l.Report(context.Background(), Query{Clusters: []string{"nope"}, GroupBy: []string{"namespace"}}); err == nil ||
			!strings.Contains(err.Error(), `no cluster "nope" in it (it holds b, default)`) {
			t.Fatalf("an unknown cluster: %v", err)
		}
	})
}

// TestReaderNeverWrites: a report opens the ledger read-only: it runs
// while an update holds the write lock, a path that does not exist is an
// error naming it (and nothing is created), and a reader cannot update.
func TestReaderNeverWrites(t *testing.T) {
	withCounted(t, func(t *testing.T, l *Ledger, p *profile.Profile) {
		// An update in progress: the write lock taken, the state rows
		// read as an update reads them.
		tx, err := l.db.Begin()
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback() }()
		if err := l.lock(context.Background(), tx); err != nil {
			t.Fatal(err)
		}
		if _, err := l.load(context.Background(), tx, DefaultCluster); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(`UPDATE seedance_state SET updates = updates + 1`); err != nil {
			t.Fatal(err)
		}
		r, err := Open(context.Background(), l.dsn, Options{ReadOnly: true, Wait: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		got, err := r.Report(ctx, Query{GroupBy: []string{"namespace"}, EnergyUSDPerKWh: 0.12})
		if err != nil {
			t.Fatalf("a report during an update: %v", err)
		}
		sameFigures(t, got, oneAnalysis(t, p, []string{"namespace"}))
		if _, err := r.Update(ctx, UpdateSpec{Inputs: []*profile.Profile{p}, Params: params()}); err == nil {
			t.Fatal("a reader updated the ledger")
		}
	})
	missing := filepath.Join(t.TempDir(), "typo.db")
	if _, err := Open(context.Background(), missing, Options{ReadOnly: true}); err == nil || !strings.Contains(err.Error(), missing) {
		t.Fatalf("a reader of a path that does not exist: %v", err)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Fatalf("a reader created %s: %v", missing, err)
	}
}

// TestImplausibleRowsAreErrors: a value beyond its physical bounds (a
// flipped byte) is an error naming the cluster, node and bucket, in every
// report.
func TestImplausibleRowsAreErrors(t *testing.T) {
	p := cluster(t)
	for _, tt := range []struct{ name, stmt, want string }{
		{"held hours", `UPDATE seedance_gpu SET observed_s = 1.5e207 WHERE bucket = (SELECT MIN(bucket) FROM seedance_gpu)`, "GPU-hours observed, more than 1024 GPUs could"},
		{"utilization", `UPDATE seedance_gpu SET util_s = util_covered_s * 2 + 1 WHERE bucket = (SELECT MIN(bucket) FROM seedance_gpu)`, "utilization of"},
		{"negative", `UPDATE seedance_gpu SET idle_s = -5 WHERE bucket = (SELECT MIN(bucket) FROM seedance_gpu)`, "below 0"},
		{"workload", `UPDATE seedance_owner_hold SET used_s = held_s * 3 + 10 WHERE owner > 0`, "GPU-hours used of"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := openDSN(t, filepath.Join(t.TempDir(), "l.db"))
			if _, err := l.Update(context.Background(), UpdateSpec{Inputs: []*profile.Profile{p}, Params: params()}); err != nil {
				t.Fatal(err)
			}
			if _, err := l.db.Exec(tt.stmt); err != nil {
				t.Fatal(err)
			}
			_, err := l.Report(context.Background(), Query{GroupBy: []string{"namespace"}})
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "the ledger is damaged") || !strings.Contains(err.Error(), "cluster default") {
				t.Fatalf("a damaged row: %v", err)
			}
		})
	}
}

// TestClusterNames: an update without --cluster counts a profile as the
// cluster it names (the source's cluster label), else as the ledger's only
// cluster; on a ledger of several named clusters it is refused, saying
// which; a bad name is a one-line error.
func TestClusterNames(t *testing.T) {
	p := cluster(t)
	l := openDSN(t, filepath.Join(t.TempDir(), "l.db"))
	a := renamed(p, "a-")
	a.Cluster = "prod-a"
	if up, err := l.Update(context.Background(), UpdateSpec{Inputs: []*profile.Profile{a}, Params: params()}); err != nil || up.Cluster != "prod-a" {
		t.Fatalf("a profile that names its cluster: %+v, %v", up, err)
	}
	if _, end, ok, err := l.DataEndOf(context.Background()); err != nil || !ok || !end.Equal(p.EndedAt) {
		t.Fatalf("the only cluster's data end: %v %v %v", end, ok, err)
	}
	b := reopen(t, l, "prod-b")
	if _, err := b.Update(context.Background(), UpdateSpec{Inputs: []*profile.Profile{renamed(p, "b-")}, Params: params()}); err != nil {
		t.Fatal(err)
	}
	_, err := l.Update(context.Background(), UpdateSpec{Inputs: []*profile.Profile{renamed(p, "c-")}, Params: params()})
	if err == nil || !strings.Contains(err.Error(), "it holds clusters prod-a, prod-b, and this update names none: give its cluster with --cluster") {
		t.Fatalf("an unnamed update of a ledger of named clusters: %v", err)
	}
	if _, err := Open(context.Background(), l.dsn, Options{Cluster: "bad name;"}); err == nil || !strings.Contains(err.Error(), `cluster name "bad name;"`) {
		t.Fatalf("a bad name: %v", err)
	}
}

// TestPriceChangeBetweenUpdates: a price that changes between two updates
// prices the data read after the change: the hour the first update ended
// in keeps the old price whole (the minutes between its watermark and its
// data end were read at it), and the new price's first bucket is the next
// hour.
func TestPriceChangeBetweenUpdates(t *testing.T) {
	p := cluster(t)
	parts := hours(p)
	l := openDSN(t, filepath.Join(t.TempDir(), "l.db"))
	for i, usd := range []float64{2, 4, 4} {
		ps := params()
		ps.Pricer = pricing.New(map[string]float64{"NVIDIA": usd}, 1)
		if _, err := l.Update(context.Background(), UpdateSpec{Inputs: []*profile.Profile{parts[i]}, Params: ps}); err != nil {
			t.Fatal(err)
		}
	}
	hour := p.StartedAt.Truncate(time.Hour)
	for h, usd := range []float64{2, 4, 4} {
		r, err := l.Report(context.Background(), Query{Since: hour.Add(time.Duration(h) * time.Hour), Until: hour.Add(time.Duration(h+1) * time.Hour), GroupBy: []string{"namespace"}})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := *r.Summary.IdleCostUSD, *r.Summary.IdleGPUHours*usd; math.Abs(got-want) > 1e-6*want || want == 0 {
			t.Errorf("hour %d: idle cost %v, %v idle GPU-hours at $%v: %v", h, got, *r.Summary.IdleGPUHours, usd, want)
		}
	}
	r, err := l.Report(context.Background(), Query{GroupBy: []string{"namespace"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, pr := range r.Prices {
		if first := hour.Add(time.Duration(pr.USDPerHour/2-1) * time.Hour).Format(time.RFC3339); pr.FirstBucket != first {
			t.Errorf("%s at $%v: first bucket %s, want %s", pr.Model, pr.USDPerHour, pr.FirstBucket, first)
		}
	}
}

// TestReportEndsWithTheLastCluster: a report with no end runs to the end
// of the last bucket any of its clusters holds, not the first to stop
// (lastBucket: the last of each cluster's), in SQLite and PostgreSQL.
func TestReportEndsWithTheLastCluster(t *testing.T) {
	p := cluster(t)
	short := profile.Join([]*profile.Profile{p}, p.StartedAt.Add(-time.Millisecond), p.StartedAt.Add(time.Hour), false)
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			l := ledgers(t, backend)()
			a, b := reopen(t, l, "prod-a"), reopen(t, l, "prod-b")
			if _, err := a.Update(context.Background(), UpdateSpec{Inputs: []*profile.Profile{renamed(p, "a-")}, Params: params()}); err != nil {
				t.Fatal(err)
			}
			if _, err := b.Update(context.Background(), UpdateSpec{Inputs: []*profile.Profile{renamed(short, "b-")}, Params: params()}); err != nil {
				t.Fatal(err)
			}
			ends := map[string]time.Time{}
			for _, c := range [][]string{nil, {"prod-a"}, {"prod-b"}} {
				r, err := l.Report(context.Background(), Query{Clusters: c, GroupBy: []string{"namespace"}})
				if err != nil {
					t.Fatal(err)
				}
				ends[strings.Join(c, ",")] = r.Window.End
			}
			if !ends[""].Equal(ends["prod-a"]) || !ends["prod-b"].Before(ends["prod-a"]) {
				t.Fatalf("the report's end %s; prod-a's alone %s, prod-b's %s", ends[""], ends["prod-a"], ends["prod-b"])
			}
		})
	}
}
