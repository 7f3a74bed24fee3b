package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/chargeback"
	"github.com/seedance/seedance/ledger/history"
)

// ReportSchema names the shape of a ledger report's JSON.
const ReportSchema = history.Schema

// The report's types live in package history, which links no database
// driver (docs/architecture.md); these are their names here.
type (
	// Report is history.Report.
	Report = history.Report
	// Window is history.Window.
	Window = history.Window
	// Summary is history.Summary.
	Summary = history.Summary
	// Day is history.Day.
	Day = history.Day
	// DayWaste is history.DayWaste.
	DayWaste = history.DayWaste
	// Price is history.Price.
	Price = history.Price
	// Jobs is history.Jobs.
	Jobs = history.Jobs
	// JobGroup is history.JobGroup.
	JobGroup = history.JobGroup
	// ClassFigures is history.ClassFigures.
	ClassFigures = history.ClassFigures
	// Comparison is history.Comparison.
	Comparison = history.Comparison
	// Change is history.Change.
	Change = history.Change
)

// Query is what a report covers: the buckets that begin in [Since,
// Until) (zero: from the first, to the last), grouped by GroupBy.
type Query struct {
	Since, Until time.Time
	// GroupBy are the attribution's levels: analyze's, and "cluster".
	GroupBy []string
	// Clusters, when set, are the clusters reported (else every one).
	Clusters        []string
	EnergyUSDPerKWh float64
	// Settled leaves the provisional rows out: the figures then only grow
	// from one update to the next (counters for Prometheus).
	Settled bool
	// BaselineSince and BaselineUntil, when set, are a window to compare
	// with (Report.Comparison); Baseline, when set, a report read by
	// ReadBaseline.
	BaselineSince, BaselineUntil time.Time
	Baseline                     *Report
	// ShareIdle, when set, adds the charges (Report.Chargeback), the
	// unallocated cost shared so within ShareIdleBy's scopes.
	ShareIdle   chargeback.Mode
	ShareIdleBy chargeback.Scope
	// Budgets, when set, adds their status for the month of the data's
	// end (Report.Budgets), the charges shared by ShareIdle.
	Budgets []chargeback.Budget
	// Carbon, when set, prices the charges' energy in emissions by the
	// grid intensity of its hours.
	Carbon *chargeback.Intensity
	// MaxLag is how far a cluster's data end may lag the latest cluster's
	// (and Now, when set) before the report warns of it and the budgets
	// it bears on have no forecast (0: two buckets).
	MaxLag time.Duration
	Now    time.Time
	// MinObserved is the least time of the month a budget's forecast
	// rests on in each cluster (chargeback.NewStatusOf).
	MinObserved time.Duration
	// Units adds the unit figures (Report.Units, docs/units.md).
	Units bool
	// Queues, when set, adds the queue figures (Report.Queues,
	// docs/queues.md) with these thresholds.
	Queues *analyze.QueueParams
}

// span is the rows a report reads: the clusters' buckets in [lo, hi),
// provisional ones when maxProv is 1.
type span struct {
	lo, hi   int64
	maxProv  int
	clusters []string
	bucket   time.Duration // the buckets' length (charges' grid intensity)
	// provDay is the first day with provisional rows: the daily rollups
	// hold settled rows only, so with provisional rows the days from it
	// are read from the hourly tables.
	provDay int64
}

// daily is whether the span reads the whole day d from the daily
// rollups: a day before the provisional rows, or settled rows only.
func (sp span) daily(d int64) bool { return sp.maxProv == 0 || d < sp.provDay }

// args are the arguments of a query over the span's rows (from): the
// hourly rows of its partial days ($1–$4), then the daily rollups of its
// whole days ($6, $7), provisional ones up to $5.
func (sp span) args() []any {
	dlo := sp.lo
	if d := day(sp.lo); d < sp.lo {
		dlo = d + 86400
	}
	dhi := max(dlo, day(sp.hi))
	if sp.maxProv == 1 {
		dhi = max(dlo, min(dhi, sp.provDay))
	}
	args := []any{sp.lo, dlo, dhi, sp.hi, sp.maxProv, dlo, dhi}
	if dhi == dlo { // no whole day: every row hourly
		args = []any{sp.lo, sp.hi, sp.hi, sp.hi, sp.maxProv, 0, 0}
	}
	return append(args, names(sp.clusters)...)
}

// rows selects cols of the span's rows of the hourly table and of its
// daily rollup (whose bucket column is day).
func (sp span) rows(table, cols, dayCols string) string {
	in := inList("cluster", 8, len(sp.clusters))
	return `SELECT ` + cols + ` FROM ` + table + ` WHERE ((bucket >= $1 AND bucket < $2) OR (bucket >= $3 AND bucket < $4)) AND provisional <= $5 AND ` + in + `
UNION ALL SELECT ` + dayCols + ` FROM ` + table + `_day WHERE day >= $6 AND day < $7 AND provisional <= $5 AND ` + in
}

// inList is "col IN ($first, …)" for n arguments.
func inList(col string, first, n int) string {
	ps := make([]string, n)
	for i := range ps {
		ps[i] = "$" + strconv.Itoa(first+i)
	}
	return col + ` IN (` + strings.Join(ps, ", ") + `)`
}

func names(clusters []string) []any {
	out := make([]any, len(clusters))
	for i, c := range clusters {
		out[i] = c
	}
	return out
}

// Report reads the rows of the query's window, in a read-only
// transaction: it takes no lock, and runs beside an update.
func (l *Ledger) Report(ctx context.Context, q Query) (*Report, error) {
	if err := checkGroupBy(q.GroupBy); err != nil {
		return nil, err
	}
	tx, err := l.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true, Isolation: l.snapshot()})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrLedger, err)
	}
	defer func() { _ = tx.Rollback() }() // after a commit, a no-op
	v, err := l.view(ctx, tx, q.Clusters)
	if err != nil {
		return nil, err
	}
	lo, hi, err := l.bounds(ctx, tx, v, q.Since, q.Until)
	if err != nil {
		return nil, err
	}
	r, err := l.window(ctx, tx, v, q, lo, hi)
	if err == nil && len(q.Budgets) > 0 {
		r.Budgets, err = l.budgets(ctx, tx, v, q)
	}
	if err == nil && q.Baseline != nil {
		r.Comparison = compare(q.Baseline, r)
	}
	if err != nil || q.BaselineSince.IsZero() {
		return r, err
	}
	blo, bhi, err := l.bounds(ctx, tx, v, q.BaselineSince, q.BaselineUntil)
	if err != nil {
		return nil, err
	}
	base, err := l.window(ctx, tx, v, q, blo, bhi)
	if err != nil {
		return nil, err
	}
	r.Comparison = compare(base, r)
	return r, nil
}

// snapshot is the isolation that makes a report's several queries read one
// state of the ledger: SQLite's transactions are snapshots already.
func (l *Ledger) snapshot() sql.IsolationLevel {
	if l.postgres {
		return sql.LevelRepeatableRead
	}
	return sql.LevelDefault
}

// checkGroupBy checks the levels: analyze's, and cluster.
func checkGroupBy(levels []string) error {
	var rest []string
	for _, l := range levels {
		if l != "cluster" {
			rest = append(rest, l)
		}
	}
	if len(rest) == 0 && len(levels) > 0 {
		return nil
	}
	return analyze.CheckGroupBy(rest)
}

// view is what a report reads of the clusters' states: which clusters,
// the first bucket of any, the earliest watermark, the buckets' length.
type view struct {
	clusters         []string
	first, watermark time.Time
	bucket           time.Duration
	ends             map[string]time.Time // each cluster's data end
	firsts           map[string]time.Time // each cluster's first data
	last             time.Time            // the latest data end
}

// view reads the states of the clusters asked for (all: every one).
func (l *Ledger) view(ctx context.Context, tx *sql.Tx, want []string) (*view, error) {
	v := &view{ends: map[string]time.Time{}, firsts: map[string]time.Time{}}
	all := map[string]bool{}
	err := scanRows(ctx, tx, func(rows *sql.Rows) error {
		var c string
		var first, wm, end, bucket int64
		if err := rows.Scan(&c, &first, &wm, &end, &bucket); err != nil {
			return err
		}
		all[c] = true
		if len(want) > 0 && !slices.Contains(want, c) {
			return nil
		}
		if err := plausibleState(c, first, wm, end, bucket); err != nil {
			return err
		}
		f, w := time.UnixMilli(first).UTC(), time.UnixMilli(wm).UTC()
		if len(v.clusters) == 0 || f.Before(v.first) {
			v.first = f
		}
		if len(v.clusters) == 0 || w.Before(v.watermark) {
			v.watermark = w
		}
		v.bucket = time.Duration(bucket) * time.Second
		v.clusters = append(v.clusters, c)
		v.ends[c], v.firsts[c] = time.UnixMilli(end).UTC(), f
		v.last = later(v.last, v.ends[c])
		return nil
	}, `SELECT cluster, first_ms, watermark_ms, data_end_ms, bucket_s FROM seedance_state ORDER BY cluster`)
	if err != nil {
		return nil, err
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("%w: it holds nothing yet: run seedance ledger update first", ErrLedger)
	}
	for _, c := range want {
		if !all[c] {
			return nil, fmt.Errorf("%w: no cluster %q in it (it holds %s)", ErrLedger, c, strings.Join(sortedIDs(all), ", "))
		}
	}
	return v, nil
}

// span is the rows of the window [lo, hi) the view's clusters hold: from
// their first bucket at the earliest, so that a window from 1970 reads
// (and walks day by day) only the days that can hold rows.
func (v *view) span(lo, hi time.Time) span {
	return span{max(lo.Unix(), v.first.Truncate(v.bucket).Unix()), hi.Unix(), 1, v.clusters, v.bucket, day(v.watermark.Truncate(v.bucket).Unix())}
}

// lastBucket is the clusters' last bucket (0: none): the last of each
// cluster's, each found at the end of the table's key, where one MAX over
// an IN list of clusters read every row of them in PostgreSQL (a fifth
// of a month's report by team, server included).
func lastBucket(ctx context.Context, tx *sql.Tx, clusters []string) (int64, error) {
	if len(clusters) == 0 {
		return 0, nil
	}
	each := make([]string, len(clusters))
	for i := range clusters {
		each[i] = fmt.Sprintf("SELECT MAX(bucket) AS b FROM seedance_gpu WHERE cluster = $%d", i+1)
	}
	var last int64
	err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(b), 0) FROM (`+strings.Join(each, " UNION ALL ")+`) x`, names(clusters)...).Scan(&last)
	return last, err
}

// bounds are the buckets of [since, until): since floored to its bucket,
// zero times the clusters' first and last buckets.
func (l *Ledger) bounds(ctx context.Context, tx *sql.Tx, v *view, since, until time.Time) (lo, hi time.Time, err error) {
	lo, hi = since.Truncate(v.bucket), until
	if since.IsZero() {
		lo = v.first.Truncate(v.bucket)
	}
	if hi.IsZero() {
		last, err := lastBucket(ctx, tx, v.clusters)
		if err != nil {
			return lo, hi, fmt.Errorf("%w: %v", ErrLedger, err)
		}
		hi = time.Unix(last, 0).Add(v.bucket)
		if !hi.After(lo) { // a window after the ledger's data: empty
			hi = lo.Add(v.bucket)
		}
	} else if c := hi.Truncate(v.bucket); c.Before(hi) {
		hi = c.Add(v.bucket) // the window covers whole buckets: its end says where the last ends
	}
	if !hi.After(lo) {
		return lo, hi, fmt.Errorf("%w: the window's end %s is not after its start %s", ErrLedger, hi.UTC().Format(time.RFC3339), lo.UTC().Format(time.RFC3339))
	}
	return lo, hi, nil
}

// window is the report of the buckets in [lo, hi).
func (l *Ledger) window(ctx context.Context, tx *sql.Tx, v *view, q Query, lo, hi time.Time) (*Report, error) {
	r := &Report{SchemaVersion: ReportSchema, Window: Window{Start: lo.UTC(), End: hi.UTC(), BucketS: int64(v.bucket / time.Second)}, Watermark: v.watermark,
		Clusters: v.clusters}
	sp := v.span(lo, hi)
	if q.Settled {
		sp.maxProv = 0
	}
	total, err := l.gpuFigures(ctx, tx, r, sp, q.EnergyUSDPerKWh)
	if err != nil {
		return nil, err
	}
	// Jobs finish in the window and before the watermark's bucket: every
	// row of theirs is settled.
	fhi := min(sp.hi, v.watermark.Truncate(v.bucket).Unix())
	var inWindow, finished []workloadRow
	if slices.Contains(q.GroupBy, "workload") {
		if inWindow, err = l.workloadRows(ctx, tx, sp); err == nil {
			finished, err = l.finishedRows(ctx, tx, sp, sp.lo, fhi, inWindow)
		}
	} else if inWindow, err = l.ownerRows(ctx, tx, sp); err == nil {
		if finished, err = l.finishedOwners(ctx, tx, sp, fhi); err == nil {
			r.DailyWaste, err = l.dailyWaste(ctx, tx, sp, inWindow, q.GroupBy)
		}
	}
	if err == nil {
		err = plausible(inWindow, total, sp)
	}
	if err != nil {
		return nil, err
	}
	r.Attribution = attribution(inWindow, total, q.GroupBy)
	r.EnergyByGroup = energyByGroup(inWindow, q.GroupBy)
	if q.ShareIdle != "" || q.Carbon != nil {
		if r.Chargeback, err = l.chargeback(ctx, tx, sp, q); err != nil {
			return nil, err
		}
	}
	r.Jobs = jobs(finished, inWindow, q.GroupBy)
	if q.Units {
		rows, err := l.unitRows(ctx, tx, sp)
		if err != nil {
			return nil, err
		}
		u := analyze.Units(rows, q.GroupBy)
		r.Units, r.UnitGroups, r.UnitModels, r.UnitWorkloads = u.Fleet, u.Groups, u.Models, u.Workloads
		if err := l.dailyUnits(ctx, tx, sp, r); err != nil {
			return nil, err
		}
	}
	if q.Queues != nil {
		qs, err := l.queueSections(ctx, tx, sp, int64(v.bucket/time.Second), *q.Queues)
		if err != nil {
			return nil, err
		}
		if qs != nil {
			r.Queues, r.Cohorts, r.Hoarding, r.QuotaWhatIf = qs.Queues, qs.Cohorts, qs.Hoarding, qs.WhatIf
		}
	}
	if r.Warnings, err = l.notes(ctx, tx, sp); err != nil {
		return nil, err
	}
	r.Warnings = append(r.Warnings, v.stale(hi, q)...)
	if q.Carbon != nil {
		r.Warnings = append(r.Warnings, q.Carbon.Missing()...)
	}
	r.DataEnds = v.ends
	if from := v.watermark.Truncate(v.bucket); from.Before(hi) && !q.Settled { // the open bucket's rows are provisional (carry.go)
		s := from.UTC().Format(time.RFC3339)
		r.Summary.ProvisionalFrom = &s
	}
	return r, nil
}

// notes are the warnings kept with the span's buckets, each once, named by
// cluster when the span has several.
func (l *Ledger) notes(ctx context.Context, tx *sql.Tx, sp span) ([]string, error) {
	var out []string
	err := scanRows(ctx, tx, func(rows *sql.Rows) error {
		var c, n string
		err := rows.Scan(&c, &n)
		if len(sp.clusters) > 1 {
			n = "cluster " + c + ": " + n
		}
		out = append(out, n)
		return err
	}, `SELECT DISTINCT cluster, note FROM seedance_note WHERE bucket >= $1 AND bucket < $2 AND `+inList("cluster", 3, len(sp.clusters))+` ORDER BY cluster, note`,
		append([]any{sp.lo, sp.hi}, names(sp.clusters)...)...)
	return out, err
}

// stale names the clusters whose data lags, inside a window that reaches
// past their data end: their updates may have stopped, and the window
// lacks their part. A window that reaches now's bucket lags now too.
func (v *view) stale(hi time.Time, q Query) []string {
	var out []string
	now := !q.Now.IsZero() && !hi.Before(q.Now.Truncate(v.bucket))
	for _, c := range v.clusters {
		if w := v.lagWarning(c, q, now); w != "" && v.ends[c].Before(hi) {
			out = append(out, w)
		}
	}
	return out
}

// lagWarning says that cluster c's data lags (lag), or nothing.
func (v *view) lagWarning(c string, q Query, withNow bool) string {
	lag, behind := v.lag(c, q, withNow)
	if lag == 0 {
		return ""
	}
	return fmt.Sprintf("cluster %s's data ends at %s, %s behind %s: are its updates running?", c, v.ends[c].Format(time.RFC3339), lag.Truncate(time.Minute), behind)
}

// Lags are the data ends of the query's clusters, and a warning for each
// that lags (Query.MaxLag) inside the query's window.
func (l *Ledger) Lags(ctx context.Context, q Query) (map[string]time.Time, []string, error) {
	tx, err := l.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true, Isolation: l.snapshot()})
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrLedger, err)
	}
	defer func() { _ = tx.Rollback() }()
	v, err := l.view(ctx, tx, q.Clusters)
	if err != nil {
		return nil, nil, err
	}
	_, hi, err := l.bounds(ctx, tx, v, q.Since, q.Until)
	if err != nil {
		return nil, nil, err
	}
	return v.ends, v.stale(hi, q), nil
}

// lag is how far cluster c's data end lags the latest cluster's, or now
// (q.Now, with withNow), when that is more than q.MaxLag (two buckets when
// unset); 0 when it does not lag. behind says what it lags.
func (v *view) lag(c string, q Query, withNow bool) (time.Duration, string) {
	maxLag := q.MaxLag
	if maxLag <= 0 {
		maxLag = 2 * v.bucket
	}
	e := v.ends[c]
	switch {
	case withNow && !q.Now.IsZero() && q.Now.Sub(e) > maxLag && q.Now.Sub(e) >= v.last.Sub(e):
		return q.Now.Sub(e), "now"
	case v.last.Sub(e) > maxLag:
		return v.last.Sub(e), "the cluster data that ends latest"
	}
	return 0, ""
}

// gpuFigures fills the summary, the days and the prices, and returns the
// GPUs' totals (for the attribution's total).
func (l *Ledger) gpuFigures(ctx context.Context, tx *sql.Tx, r *Report, sp span, energyPrice float64) (analyze.Held, error) {
	cols := `node, model, observed_s, idle_s, util_s, util_covered_s, cost_usd, energy_j, energy_measured, price_usd_per_hour, price_source`
	rows, err := tx.QueryContext(ctx, sp.rows("seedance_gpu", "bucket, cluster, "+cols, "day, cluster, "+cols), sp.args()...)
	if err != nil {
		return analyze.Held{}, fmt.Errorf("%w: %v", ErrLedger, err)
	}
	defer rows.Close()
	var obs, idle, util, utilW, cost, energy float64
	measured := false
	nodes := map[string]bool{}
	days := map[string]*Day{}
	prices := map[[2]string]*Price{}
	for rows.Next() {
		var bucket int64
		var cluster, node, model, source string
		var o, i, u, uw, c, e, price float64
		var m int
		if err := rows.Scan(&bucket, &cluster, &node, &model, &o, &i, &u, &uw, &c, &e, &m, &price, &source); err != nil {
			return analyze.Held{}, fmt.Errorf("%w: %v", ErrLedger, err)
		}
		if err := plausibleGPU(cluster, bucket, node, model, sp, o, i, u, uw, c, e); err != nil {
			return analyze.Held{}, err
		}
		nodes[cluster+"\x00"+node] = true
		obs, idle, util, utilW, cost, energy = obs+o, idle+i, util+u, utilW+uw, cost+c, energy+e
		measured = measured || m == 1
		t := time.Unix(bucket, 0).UTC()
		d := days[t.Format(time.DateOnly)]
		if d == nil {
			d = &Day{Date: t.Format(time.DateOnly)}
			days[d.Date] = d
		}
		d.GPUHours += o / 3600
		d.UsedGPUHours += u / 3600
		d.IdleGPUHours += i / 3600
		d.IdleCostUSD += c
		if m == 1 {
			d.EnergyKWh = ptr(value(d.EnergyKWh) + e/3.6e6)
		}
		k := [2]string{model, fmt.Sprint(price) + source}
		if p := prices[k]; p == nil || t.Format(time.RFC3339) < p.FirstBucket {
			prices[k] = &Price{Model: model, USDPerHour: price, Source: source, FirstBucket: t.Format(time.RFC3339)}
		}
	}
	if err := rows.Err(); err != nil {
		return analyze.Held{}, fmt.Errorf("%w: %v", ErrLedger, err)
	}
	s := &r.Summary
	s.Nodes, s.GPUHours = len(nodes), analyze.Sig(obs/3600)
	if utilW > 0 {
		s.AvgGPUUtilPct = ptr(analyze.Sig(100 * util / utilW))
		s.IdleGPUHours, s.IdleCostUSD = ptr(analyze.Sig(idle/3600)), ptr(analyze.Sig(cost))
		s.IdleRatio = ptr(analyze.Sig(idle / obs))
	}
	if measured {
		s.EnergyKWh, s.EnergyCostUSD = ptr(analyze.Sig(energy/3.6e6)), ptr(analyze.Sig(energy/3.6e6*energyPrice))
	}
	r.Daily = []Day{}
	for _, d := range days {
		d.GPUHours, d.UsedGPUHours, d.IdleGPUHours, d.IdleCostUSD = analyze.Sig(d.GPUHours), analyze.Sig(d.UsedGPUHours), analyze.Sig(d.IdleGPUHours), analyze.Sig(d.IdleCostUSD)
		if d.EnergyKWh != nil {
			d.EnergyKWh = ptr(analyze.Sig(*d.EnergyKWh))
		}
		r.Daily = append(r.Daily, *d)
	}
	sort.Slice(r.Daily, func(i, j int) bool { return r.Daily[i].Date < r.Daily[j].Date })
	r.Prices = []Price{}
	for _, p := range prices {
		r.Prices = append(r.Prices, *p)
	}
	sort.Slice(r.Prices, func(i, j int) bool {
		a, b := r.Prices[i], r.Prices[j]
		return a.Model < b.Model || a.Model == b.Model && a.FirstBucket < b.FirstBucket
	})
	return analyze.Held{HeldH: obs / 3600, UsedH: util / 3600, IdleH: idle / 3600, CostUSD: cost}, nil
}

// attribution groups the workloads' rows of the window; total is the
// GPUs' own sums.
func attribution(window []workloadRow, total analyze.Held, levels []string) *analyze.Attribution {
	var held []analyze.Held
	var unalloc analyze.Held
	for _, r := range window {
		h := analyze.Held{Workload: r.w, HeldH: r.held / 3600, UsedH: r.used / 3600, IdleH: r.idle / 3600, CostUSD: r.cost}
		if r.unallocated() { // one row for every cluster's
			unalloc.HeldH, unalloc.UsedH, unalloc.IdleH, unalloc.CostUSD = unalloc.HeldH+h.HeldH, unalloc.UsedH+h.UsedH, unalloc.IdleH+h.IdleH, unalloc.CostUSD+h.CostUSD
			continue
		}
		h.Workloads, h.Keys = 1, r.keys(levels)
		if r.owner != nil {
			h.Workloads = r.n
		}
		held = append(held, h)
	}
	return analyze.Attribute(held, unalloc, total, levels)
}

// energyByGroup sums the rows' energy by group (history.GroupKey), null
// for a group with a row whose energy is not known.
func energyByGroup(window []workloadRow, levels []string) map[string]*float64 {
	sums, unknown := map[string]float64{}, map[string]bool{}
	for _, r := range window {
		k := history.UnallocatedKey
		if !r.unallocated() {
			k = history.GroupKey(r.keys(levels))
		}
		sums[k] += r.energy / 3.6e6
		unknown[k] = unknown[k] || !r.energyKnown
	}
	out := map[string]*float64{}
	for k, v := range sums {
		out[k] = nil
		if !unknown[k] {
			out[k] = ptr(analyze.Sig(v))
		}
	}
	return out
}

func ptr(v float64) *float64 { return &v }

func value(p *float64) float64 {
	if p == nil || math.IsNaN(*p) {
		return 0
	}
	return *p
}
