package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/chargeback"
	"github.com/seedance/seedance/internal/testkit/engine"
	"github.com/seedance/seedance/internal/testkit/pgtest"
	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source/sim"

	"github.com/seedance/seedance/internal/testkit/jsonnear"
)

// cluster is a simulated cluster's profile over three hours, changed where
// the simulator is regular: some workloads came and went, a GPU was not
// scraped for ten minutes, another for 40 s (shorter than the idle window).
func cluster(t testing.TB) *profile.Profile {
	t.Helper()
	p, err := sim.Record(sim.Options{Nodes: 8, Scenario: sim.ScenarioMixed, Seed: 7}, 15*time.Second, 3*time.Hour, profile.Generator{Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	span := p.EndedAt.Sub(p.StartedAt).Seconds()
	for ni := range p.Nodes {
		n := &p.Nodes[ni]
		for wi := range n.Workloads {
			if wi%2 == 1 {
				n.Workloads[wi].Intervals = []profile.Tenure{{StartS: 1000, EndS: 4000.5}, {StartS: 6100, EndS: span}}
			}
		}
	}
	drop := func(g *profile.GPU, lo, hi float64) {
		s := &g.Series
		keep := []int{}
		for i, t := range s.T {
			if t < lo || t >= hi {
				keep = append(keep, i)
			}
		}
		for m := profile.Metric(-1); m < profile.NumMetrics; m++ {
			col := &s.T
			if m >= 0 {
				col = s.Col(m)
			}
			if *col == nil {
				continue
			}
			out := make(profile.Values, len(keep))
			for j, i := range keep {
				out[j] = (*col)[i]
			}
			*col = out
		}
	}
	drop(&p.Nodes[3].GPUs[2], 3000, 3600)
	drop(&p.Nodes[7].GPUs[0], 5000, 5040)
	return p
}

// pieces cuts p at random times into consecutive profiles.
func pieces(p *profile.Profile, r *rand.Rand, n int) []*profile.Profile {
	span := p.EndedAt.Sub(p.StartedAt)
	var at []time.Time
	for range n - 1 {
		at = append(at, p.StartedAt.Add(time.Duration(r.Int64N(int64(span))).Truncate(time.Millisecond)))
	}
	at = append(at, p.EndedAt)
	sortTimes(at)
	var out []*profile.Profile
	from := p.StartedAt.Add(-time.Millisecond)
	for _, to := range at {
		if to.After(from) {
			out = append(out, profile.Join([]*profile.Profile{p}, from, to, false))
			from = to
		}
	}
	return out
}

func sortTimes(ts []time.Time) {
	for i := range ts {
		for j := i + 1; j < len(ts); j++ {
			if ts[j].Before(ts[i]) {
				ts[i], ts[j] = ts[j], ts[i]
			}
		}
	}
}

func params() analyze.Params {
	p := analyze.DefaultParams()
	p.Attribution = &analyze.AttributionParams{GroupBy: []string{"namespace"}}
	return p
}

// oneAnalysis is analyze's report of p, the figures the ledger must equal.
func oneAnalysis(t testing.TB, p *profile.Profile, groupBy []string) *analyze.Report {
	t.Helper()
	src, err := asSources([]*profile.Profile{p})
	if err != nil {
		t.Fatal(err)
	}
	ps := params()
	ps.Attribution.GroupBy = groupBy
	r, err := analyze.Analyze(context.Background(), src, ps)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// sameFigures compares the ledger's summary and attribution with one
// analysis', key by key, to 1e-7 (sums in another order).
func sameFigures(t testing.TB, got *Report, want *analyze.Report) {
	t.Helper()
	sameAs(t, got, want.Summary, want.Attribution)
}

// sameReports compares two ledger reports' summaries and attributions.
func sameReports(t testing.TB, got, want *Report) {
	t.Helper()
	sameAs(t, got, want.Summary, want.Attribution)
}

func sameAs(t testing.TB, got *Report, summary, attribution any) {
	t.Helper()
	want := struct{ Summary, Attribution any }{summary, attribution}
	g, w := asMap(t, got.Summary), asMap(t, want.Summary)
	for k, v := range g {
		if k == "provisional_from" {
			continue
		}
		jsonnear.Equal(t, "summary."+k, v, w[k])
	}
	ga, wa := asMap(t, got.Attribution), asMap(t, want.Attribution)
	jsonnear.Equal(t, "attribution", ga, wa)
}

func asMap(t testing.TB, v any) map[string]any {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestLedgerEqualsOneAnalysis: after any sequence of updates over the
// pieces of a profile, the ledger's totals equal one analysis of it, in
// SQLite and in PostgreSQL.
func TestLedgerEqualsOneAnalysis(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) { equalsOneAnalysis(t, ledgers(t, backend)) })
	}
}

// ledgers returns a maker of empty ledgers of the backend.
func ledgers(t *testing.T, backend string) func() *Ledger {
	if backend == "sqlite" {
		return func() *Ledger { return openDSN(t, filepath.Join(t.TempDir(), "ledger.db")) }
	}
	dsn := pgtest.Start(t)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	n := 0
	return func() *Ledger {
		n++
		if _, err := db.Exec(fmt.Sprintf("CREATE DATABASE ledger%d", n)); err != nil {
			t.Fatal(err)
		}
		l := openDSN(t, strings.Replace(dsn, "/seedance?", fmt.Sprintf("/ledger%d?", n), 1))
		// Migration 13: the server leaves the carried samples, compressed
		// already, as they are.
		var storage string
		if err := l.db.QueryRow(`SELECT attstorage FROM pg_attribute WHERE attrelid = 'seedance_state'::regclass AND attname = 'tail'`).Scan(&storage); err != nil || storage != "e" {
			t.Fatalf("the carried samples' storage is %q (%v), not EXTERNAL", storage, err)
		}
		return l
	}
}

func equalsOneAnalysis(t *testing.T, newLedger func() *Ledger) {
	equalsOneAnalysisOf(t, newLedger, cluster(t))
}

// equalsOneAnalysisOf: p cut at random into pieces that overlap by their
// edge sample, counted one or two at a time, gives one analysis's figures.
func equalsOneAnalysisOf(t *testing.T, newLedger func() *Ledger, p *profile.Profile) {
	want := oneAnalysis(t, p, []string{"namespace"})
	if *want.Summary.IdleGPUHours == 0 || want.Attribution == nil || len(want.Attribution.Groups) < 2 {
		t.Fatalf("the cluster has no idle time or groups to count: %+v", want.Summary)
	}
	for seed := range uint64(4) {
		r := rand.New(rand.NewPCG(seed, 1))
		parts := pieces(p, r, 2+int(seed)*5)
		l := newLedger()
		for i := 0; i < len(parts); {
			k := 1 + r.IntN(2) // one file or two at a time
			batch := parts[i:min(len(parts), i+k)]
			if _, err := l.Update(context.Background(), UpdateSpec{Inputs: batch, Params: params()}); err != nil {
				t.Fatalf("seed %d update %d: %v", seed, i, err)
			}
			if r.IntN(3) == 0 { // the same update again counts nothing
				up, err := l.Update(context.Background(), UpdateSpec{Inputs: batch, Params: params()})
				if err != nil || !up.Nothing {
					t.Fatalf("seed %d: the update again: %+v, %v", seed, up, err)
				}
			}
			i += len(batch)
		}
		got, err := l.Report(context.Background(), Query{GroupBy: []string{"namespace"}, EnergyUSDPerKWh: 0.12})
		if err != nil {
			t.Fatal(err)
		}
		sameFigures(t, got, want)
		sameChargeDays(t, l)
		if t.Failed() {
			t.Fatalf("seed %d: %d pieces", seed, len(parts))
		}
	}
}

func openDSN(t testing.TB, dsn string) *Ledger {
	t.Helper()
	l, err := Open(context.Background(), dsn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// TestLedgerAcrossDays: over two days and a bit, a report reads the whole
// day from the daily rollups and the partial days from the hourly rows,
// and still equals one analysis; so does the whole day alone against the
// sum of its hours.
func TestLedgerAcrossDays(t *testing.T) {
	engine.SkipShort(t, "simulates 50 hours")
	p, err := sim.Record(sim.Options{Nodes: 4, Scenario: sim.ScenarioMixed, Seed: 3}, time.Minute, 50*time.Hour, profile.Generator{Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	want := oneAnalysis(t, p, []string{"namespace"})
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			l := ledgers(t, backend)()
			for _, part := range pieces(p, rand.New(rand.NewPCG(5, 5)), 3) {
				if _, err := l.Update(context.Background(), UpdateSpec{Inputs: []*profile.Profile{part}, Params: params()}); err != nil {
					t.Fatal(err)
				}
			}
			got, err := l.Report(context.Background(), Query{GroupBy: []string{"namespace"}, EnergyUSDPerKWh: 0.12})
			if err != nil {
				t.Fatal(err)
			}
			sameFigures(t, got, want)
			day := time.Date(2026, 1, 6, 0, 0, 0, 0, time.UTC)
			whole, err := l.Report(context.Background(), Query{Since: day, Until: day.Add(24 * time.Hour), GroupBy: []string{"namespace"}})
			if err != nil {
				t.Fatal(err)
			}
			var hours float64
			for h := range 24 {
				r, err := l.Report(context.Background(), Query{Since: day.Add(time.Duration(h) * time.Hour), Until: day.Add(time.Duration(h+1) * time.Hour), GroupBy: []string{"namespace"}})
				if err != nil {
					t.Fatal(err)
				}
				hours += *r.Summary.IdleCostUSD
			}
			if math.Abs(*whole.Summary.IdleCostUSD-hours) > 1e-6*hours || hours == 0 {
				t.Errorf("the day's idle cost from the rollup %v, from its hours %v", *whole.Summary.IdleCostUSD, hours)
			}
			sameChargeDays(t, l)
			chargesFromDaysAndHours(t, l)
		})
	}
}

// chargesFromDaysAndHours: the charges of a window of whole days and
// partial ones, read from the per-day rollup and from the hourly rows
// (a grid intensity reads every bucket apart), are the same.
func chargesFromDaysAndHours(t *testing.T, l *Ledger) {
	t.Helper()
	q := Query{Since: time.Date(2026, 1, 5, 13, 0, 0, 0, time.UTC), GroupBy: []string{"namespace"}, ShareIdle: chargeback.Weighted, ShareIdleBy: chargeback.ScopeNode}
	chargesAsHours(t, l, q, time.Date(2026, 1, 4, 0, 0, 0, 0, time.UTC), 24*5)
}

// chargesAsHours: the query's charges, read as it reads them, equal those
// read bucket by bucket (a grid intensity of the hours from from on reads
// every bucket apart), row for row, to jsonnear's tolerance: the two sum
// the same rows in another order.
func chargesAsHours(t *testing.T, l *Ledger, q Query, from time.Time, hours int) {
	t.Helper()
	var grid strings.Builder
	grid.WriteString("datetime,zone,gco2e_per_kwh\n")
	for h := range hours {
		fmt.Fprintf(&grid, "%s,default,100\n", from.Add(time.Duration(h)*time.Hour).Format(time.RFC3339))
	}
	in, err := chargeback.ReadIntensity(strings.NewReader(grid.String()), "grid.csv")
	if err != nil {
		t.Fatal(err)
	}
	days, err := l.Report(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	q.Carbon = in
	byHours, err := l.Report(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	a, b := days.Chargeback, byHours.Chargeback
	if len(a.Rows) != len(b.Rows) || len(a.Rows) < 2 {
		t.Fatalf("by %v: %d rows as read, %d from the hours", q.GroupBy, len(a.Rows), len(b.Rows))
	}
	for i, r := range append(a.Rows, a.Unallocated, a.Total) {
		w := append(b.Rows, b.Unallocated, b.Total)[i]
		w.EmissionsKgCO2e = nil
		jsonnear.Equal(t, fmt.Sprintf("by %v, row %d", q.GroupBy, i), decoded(t, r), decoded(t, w))
	}
}

// TestGroupByModel (#57): grouped by the models the workloads' counters
// name, the ledger counted in pieces equals one analysis, the groups being
// the models (and "(none)" for the workloads without counters).
func TestGroupByModel(t *testing.T) {
	p := cluster(t)
	want := oneAnalysis(t, p, []string{"model"})
	var keys []string
	for _, g := range want.Attribution.Groups {
		keys = append(keys, g.Key...)
	}
	if !slices.Contains(keys, "(none)") || len(keys) < 2 {
		t.Fatalf("the cluster's models: %v", keys)
	}
	l := ledgers(t, "sqlite")()
	for _, part := range hours(p) {
		if _, err := l.Update(context.Background(), UpdateSpec{Inputs: []*profile.Profile{part}, Params: params()}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := l.Report(context.Background(), Query{GroupBy: []string{"model"}, EnergyUSDPerKWh: 0.12})
	if err != nil {
		t.Fatal(err)
	}
	sameFigures(t, got, want)
}
