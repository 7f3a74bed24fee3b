package ledger

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/profile"
)

// DefaultBucket is the length of a new ledger's buckets.
const DefaultBucket = time.Hour

// UpdateSpec is one update: the new data and the analysis' parameters.
type UpdateSpec struct {
	// Inputs are profiles in time order; what lies at or before the
	// ledger's data end was read before and is left out.
	Inputs []*profile.Profile
	// Params are the analysis' parameters. The idle threshold and window
	// must be the ledger's own; the prices may change from one update to
	// the next (each bucket keeps the price it was counted at).
	Params analyze.Params
	// Bucket is a new ledger's bucket length (0: DefaultBucket); an
	// existing ledger keeps its own.
	Bucket time.Duration
}

// Updated says what an update did.
type Updated struct {
	// Nothing: the inputs held no sample after the ledger's data end.
	Nothing bool
	// From is where this update's counting began (the previous
	// watermark), Watermark where its settled rows end, DataEnd the end of
	// the data read so far.
	From, Watermark, DataEnd time.Time
	Rows                     int
	// Steps is how many updates in a row these figures join (a long range
	// read in steps); 0 or 1 for one.
	Steps int
}

// state is the ledger's carried state (one row).
type state struct {
	first, watermark, dataEnd time.Time
	bucket                    time.Duration
	params                    string
	tail                      *profile.Profile
	updates                   int64
}

// Update counts the inputs' new data into the ledger, in one transaction:
// a failure or a kill leaves the ledger as it was, and an update that is
// run twice counts nothing twice (the second finds nothing new).
func (l *Ledger) Update(ctx context.Context, spec UpdateSpec) (Updated, error) {
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return Updated{}, fmt.Errorf("%w: %v", ErrLedger, err)
	}
	defer func() { _ = tx.Rollback() }() // after a commit, a no-op
	st, err := l.load(ctx, tx)
	if err != nil {
		return Updated{}, err
	}
	params := paramsKey(spec.Params)
	if st == nil {
		st = newState(spec, params)
	} else if st.params != params {
		return Updated{}, fmt.Errorf("%w: it counts idle time with %s, this update with %s: keep the ledger's settings or start a new ledger", ErrLedger, st.params, params)
	}
	up, rows, err := plan(st, spec)
	if err != nil || up.Nothing {
		return up, err
	}
	if err := l.write(ctx, tx, st, rows); err != nil {
		return Updated{}, fmt.Errorf("%w: %v", ErrLedger, err)
	}
	if err := tx.Commit(); err != nil {
		return Updated{}, fmt.Errorf("%w: commit: %v", ErrLedger, err)
	}
	return up, nil
}

// newState is the state of a ledger before its first update: it begins
// where the first input does.
func newState(spec UpdateSpec, params string) *state {
	bucket := spec.Bucket
	if bucket <= 0 {
		bucket = DefaultBucket
	}
	first := time.Time{}
	for _, p := range spec.Inputs {
		if first.IsZero() || p.StartedAt.Before(first) {
			first = p.StartedAt
		}
	}
	first = first.Truncate(time.Millisecond)
	return &state{first: first, watermark: first, dataEnd: first.Add(-time.Millisecond), bucket: bucket, params: params}
}

// paramsKey is what an update must share with the ledger: the idle rules.
func paramsKey(p analyze.Params) string {
	return fmt.Sprintf("--idle-threshold %g --idle-window %s", p.IdleThresholdPct, p.IdleWindow)
}

// rows is what an update writes.
type rows struct {
	cuts     *analyze.Cuts
	settled  int // pieces before this index are settled
	bucketOf []int64
	tail     *profile.Profile
	// from is the bucket of the previous watermark, where the previous
	// update's provisional rows began; bucket is the buckets' length, s.
	from, bucket int64
}

// plan analyzes the carried tail and the new data and cuts the analysis
// into pieces: settled up to the new watermark, provisional after it.
func plan(st *state, spec UpdateSpec) (Updated, *rows, error) {
	dropSeen(spec.Inputs, st.tail)
	fresh := profile.Join(spec.Inputs, st.dataEnd, latestEnd(spec.Inputs), false)
	up := Updated{From: st.watermark, Watermark: st.watermark, DataEnd: st.dataEnd}
	if !hasSamples(fresh) {
		up.Nothing = true
		return up, nil, nil
	}
	dataEnd := fresh.EndedAt
	all := []*profile.Profile{fresh}
	if st.tail != nil {
		bridgeTenure(st.tail, fresh)
		all = []*profile.Profile{st.tail, fresh}
	}
	reach := margin(all, spec.Params.IdleWindow)
	wm := dataEnd.Add(-reach).Truncate(time.Second)
	if wm.Before(st.watermark) {
		wm = st.watermark
	}
	at := cutTimes(st.watermark, wm, dataEnd.Add(reach), st.bucket)
	sources, err := asSources(all)
	if err != nil {
		return up, nil, err
	}
	p := spec.Params
	cuts, err := analyze.Cut(sources, p, at)
	if err != nil {
		return up, nil, err
	}
	r := &rows{cuts: cuts, tail: profile.Join(all, wm.Add(-reach), dataEnd, true),
		from: st.watermark.Truncate(st.bucket).Unix(), bucket: int64(st.bucket / time.Second)}
	for i := range at[:len(at)-1] {
		if !at[i+1].After(wm) {
			r.settled = i + 1
		}
		r.bucketOf = append(r.bucketOf, at[i].Truncate(st.bucket).Unix())
	}
	st.watermark, st.dataEnd = wm, dataEnd
	up.Watermark, up.DataEnd, up.Rows = wm, dataEnd, len(cuts.GPUs)+len(cuts.Holds)
	return up, r, nil
}

// margin is how far the data must reach past a second for the analysis to
// settle it: the idle window (a run may still reach it) and two sample
// intervals (the next sample fixes a sample's coverage), and a second.
func margin(ps []*profile.Profile, window time.Duration) time.Duration {
	iv := 0.0
	for _, p := range ps {
		iv = math.Max(iv, p.IntervalS)
		for _, n := range p.Nodes {
			for _, g := range n.GPUs {
				iv = math.Max(iv, g.IntervalS)
			}
		}
	}
	return window + time.Duration(2*iv*float64(time.Second)) + time.Second
}

// cutTimes cuts [from, end) at the watermark and at every bucket edge.
func cutTimes(from, wm, end time.Time, bucket time.Duration) []time.Time {
	at := []time.Time{from}
	for _, stop := range []time.Time{wm, end} {
		for e := at[len(at)-1].Truncate(bucket).Add(bucket); e.Before(stop); e = e.Add(bucket) {
			at = append(at, e)
		}
		if stop.After(at[len(at)-1]) {
			at = append(at, stop)
		}
	}
	return at
}

// bridgeTenure joins a workload's tenure across the update's edge as a
// source joins it within one read: a source knows a workload from its
// samples, each counting for one interval, so one read ending and the next
// starting between two samples leaves a hole of less than an interval
// that one read of both would not have. A workload that held its GPUs to
// the tail's end and holds them again within an interval of it held them
// all along.
func bridgeTenure(tail, fresh *profile.Profile) {
	gap := fresh.IntervalS
	end := tail.EndedAt.Sub(tail.StartedAt).Seconds()
	shift := fresh.StartedAt.Sub(tail.EndedAt).Seconds() // fresh's start, from the tail's end
	held := map[[2]string]bool{}
	for _, n := range tail.Nodes {
		for _, w := range n.Workloads {
			if k := len(w.Intervals); w.Intervals == nil || k > 0 && w.Intervals[k-1].EndS >= end-1e-6 {
				held[[2]string{n.Name, w.ID}] = true
			}
		}
	}
	for ni := range fresh.Nodes {
		n := &fresh.Nodes[ni]
		for wi := range n.Workloads {
			w := &n.Workloads[wi]
			if len(w.Intervals) == 0 || !held[[2]string{n.Name, w.ID}] {
				continue
			}
			if first := &w.Intervals[0]; first.StartS+shift > 1e-6 && first.StartS+shift <= gap+1e-6 {
				first.StartS = -shift
			}
		}
	}
}

// dropSeen drops from the inputs each GPU's samples at or before its last
// sample in the tail: those were counted (a source's range may hold the
// sample at its left edge, which the previous range held at its right).
func dropSeen(inputs []*profile.Profile, tail *profile.Profile) {
	if tail == nil {
		return
	}
	seen := map[[2]string]int64{}
	for _, n := range tail.Nodes {
		for _, g := range n.GPUs {
			if k := len(g.Series.T); k > 0 {
				seen[[2]string{n.Name, g.UUID}] = tail.StartedAt.UnixMilli() + int64(math.Round(g.Series.T[k-1]*1000))
			}
		}
	}
	for _, p := range inputs {
		base := p.StartedAt.UnixMilli()
		for ni := range p.Nodes {
			n := &p.Nodes[ni]
			for gi := range n.GPUs {
				last, ok := seen[[2]string{n.Name, n.GPUs[gi].UUID}]
				if !ok {
					continue
				}
				s := &n.GPUs[gi].Series
				i := sort.Search(len(s.T), func(i int) bool { return base+int64(math.Round(s.T[i]*1000)) > last })
				s.T = s.T[i:]
				for m := profile.Metric(0); m < profile.NumMetrics; m++ {
					if col := s.Col(m); len(*col) >= i {
						*col = (*col)[i:]
					}
				}
			}
		}
	}
}

func latestEnd(ps []*profile.Profile) time.Time {
	var end time.Time
	for _, p := range ps {
		if p.EndedAt.After(end) {
			end = p.EndedAt
		}
	}
	return end
}

func hasSamples(p *profile.Profile) bool {
	for _, n := range p.Nodes {
		for _, g := range n.GPUs {
			if len(g.Series.T) > 0 {
				return true
			}
		}
	}
	return false
}

// asSources streams the profiles for analysis, which reads streams.
func asSources(ps []*profile.Profile) ([]analyze.Source, error) {
	out := make([]analyze.Source, len(ps))
	for i, p := range ps {
		s, err := profile.StreamOf(p, fmt.Sprintf("ledger input %d", i+1))
		if err != nil {
			return nil, err
		}
		out[i] = analyze.Source{Name: s.Name(), Stream: s}
	}
	return out, nil
}

// DataEnd is where the ledger's data ends; ok is false for a ledger never
// updated.
func (l *Ledger) DataEnd(ctx context.Context) (end time.Time, ok bool, err error) {
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return end, false, fmt.Errorf("%w: %v", ErrLedger, err)
	}
	defer func() { _ = tx.Rollback() }()
	st, err := l.load(ctx, tx)
	if err != nil || st == nil {
		return end, false, err
	}
	return st.dataEnd, true, nil
}

// load reads the carried state; nil for a ledger never updated.
func (l *Ledger) load(ctx context.Context, tx *sql.Tx) (*state, error) {
	q := `SELECT first_ms, watermark_ms, data_end_ms, bucket_s, params, tail, updates FROM seedance_state WHERE id = 1`
	if l.postgres {
		q += ` FOR UPDATE`
	}
	var first, wm, end, bucket int64
	var tail []byte
	st := &state{}
	err := tx.QueryRowContext(ctx, q).Scan(&first, &wm, &end, &bucket, &st.params, &tail, &st.updates)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: read its state: %v", ErrLedger, err)
	}
	st.first, st.watermark, st.dataEnd = time.UnixMilli(first).UTC(), time.UnixMilli(wm).UTC(), time.UnixMilli(end).UTC()
	st.bucket = time.Duration(bucket) * time.Second
	if len(tail) > 0 {
		if st.tail, err = profile.Read(bytes.NewReader(tail)); err != nil {
			return nil, fmt.Errorf("%w: its carried samples: %v", ErrLedger, err)
		}
	}
	return st, nil
}

// write replaces the provisional rows, adds the settled ones and saves the
// state, inside tx.
func (l *Ledger) write(ctx context.Context, tx *sql.Tx, st *state, r *rows) error {
	ex := &execer{ctx: ctx, tx: tx, stmts: map[string]*sql.Stmt{}}
	defer ex.close()
	for _, table := range []string{"seedance_gpu", "seedance_hold", "seedance_gpu_day", "seedance_hold_day", "seedance_owner_hold", "seedance_owner_hold_day"} {
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE provisional = 1`); err != nil {
			return err
		}
	}
	for _, g := range r.cuts.GPUs {
		err := ex.exec(`INSERT INTO seedance_gpu AS o (bucket, node, model, provisional, observed_s, idle_s, util_s, util_covered_s, cost_usd, energy_j, energy_measured, price_usd_per_hour, price_source)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
ON CONFLICT (bucket, node, model, provisional) DO UPDATE SET observed_s = o.observed_s + excluded.observed_s, idle_s = o.idle_s + excluded.idle_s,
util_s = o.util_s + excluded.util_s, util_covered_s = o.util_covered_s + excluded.util_covered_s, cost_usd = o.cost_usd + excluded.cost_usd,
energy_j = o.energy_j + excluded.energy_j, energy_measured = CASE WHEN o.energy_measured > excluded.energy_measured THEN o.energy_measured ELSE excluded.energy_measured END,
price_usd_per_hour = excluded.price_usd_per_hour, price_source = excluded.price_source`,
			r.bucketOf[g.Piece], g.Node, g.Model, r.provisional(g.Piece), g.ObservedS, g.IdleS, g.UtilS, g.UtilCoveredS, g.CostUSD, g.EnergyJ, b2i(g.EnergyMeasured),
			g.PriceUSDPerHour, g.PriceSource)
		if err != nil {
			return err
		}
		err = ex.exec(`INSERT INTO seedance_gpu_day AS o (day, node, model, price_usd_per_hour, price_source, provisional, observed_s, idle_s, util_s, util_covered_s, cost_usd, energy_j, energy_measured)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
ON CONFLICT (day, node, model, price_usd_per_hour, price_source, provisional) DO UPDATE SET observed_s = o.observed_s + excluded.observed_s, idle_s = o.idle_s + excluded.idle_s,
util_s = o.util_s + excluded.util_s, util_covered_s = o.util_covered_s + excluded.util_covered_s, cost_usd = o.cost_usd + excluded.cost_usd,
energy_j = o.energy_j + excluded.energy_j, energy_measured = CASE WHEN o.energy_measured > excluded.energy_measured THEN o.energy_measured ELSE excluded.energy_measured END`,
			day(r.bucketOf[g.Piece]), g.Node, g.Model, g.PriceUSDPerHour, g.PriceSource, r.provisional(g.Piece), g.ObservedS, g.IdleS, g.UtilS, g.UtilCoveredS, g.CostUSD, g.EnergyJ, b2i(g.EnergyMeasured))
		if err != nil {
			return err
		}
	}
	if err := writeOwners(ex, r); err != nil {
		return err
	}
	for _, h := range r.cuts.Holds {
		id := ""
		if h.Workload != nil {
			id = h.Workload.ID
		}
		err := ex.exec(`INSERT INTO seedance_hold AS o (bucket, node, model, workload, provisional, held_s, used_s, idle_s, cost_usd, energy_j)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
ON CONFLICT (bucket, node, model, workload, provisional) DO UPDATE SET held_s = o.held_s + excluded.held_s, used_s = o.used_s + excluded.used_s,
idle_s = o.idle_s + excluded.idle_s, cost_usd = o.cost_usd + excluded.cost_usd, energy_j = o.energy_j + excluded.energy_j`,
			r.bucketOf[h.Piece], h.Node, h.Model, id, r.provisional(h.Piece), h.HeldS, h.UsedS, h.IdleS, h.CostUSD, h.EnergyJ)
		if err != nil {
			return err
		}
		err = ex.exec(`INSERT INTO seedance_hold_day AS o (day, workload, provisional, held_s, used_s, idle_s, cost_usd, energy_j)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
ON CONFLICT (day, workload, provisional) DO UPDATE SET held_s = o.held_s + excluded.held_s, used_s = o.used_s + excluded.used_s,
idle_s = o.idle_s + excluded.idle_s, cost_usd = o.cost_usd + excluded.cost_usd, energy_j = o.energy_j + excluded.energy_j`,
			day(r.bucketOf[h.Piece]), id, r.provisional(h.Piece), h.HeldS, h.UsedS, h.IdleS, h.CostUSD, h.EnergyJ)
		if err != nil {
			return err
		}
	}
	return l.save(ctx, tx, st, r.tail)
}

func (r *rows) provisional(piece int) int { return b2i(piece >= r.settled) }

// execer runs an update's statements, each prepared once.
type execer struct {
	ctx   context.Context
	tx    *sql.Tx
	stmts map[string]*sql.Stmt
}

func (e *execer) exec(q string, args ...any) error {
	st := e.stmts[q]
	if st == nil {
		var err error
		if st, err = e.tx.PrepareContext(e.ctx, q); err != nil {
			return err
		}
		e.stmts[q] = st
	}
	_, err := st.ExecContext(e.ctx, args...)
	return err
}

func (e *execer) queryRow(q string, args ...any) *sql.Row {
	st := e.stmts[q]
	if st == nil {
		var err error
		if st, err = e.tx.PrepareContext(e.ctx, q); err != nil {
			return e.tx.QueryRowContext(e.ctx, q, args...) // reports the error
		}
		e.stmts[q] = st
	}
	return st.QueryRowContext(e.ctx, args...)
}

func (e *execer) close() {
	for _, st := range e.stmts {
		st.Close()
	}
}

// day is the start of a bucket's UTC day, in Unix seconds.
func day(bucket int64) int64 { return bucket - bucket%86400 }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// save writes the state and the tail.
func (l *Ledger) save(ctx context.Context, tx *sql.Tx, st *state, tail *profile.Profile) error {
	var b bytes.Buffer
	if err := profile.Write(&b, tail, profile.Zstd); err != nil {
		return err
	}
	st.updates++
	_, err := tx.ExecContext(ctx, `INSERT INTO seedance_state AS o (id, first_ms, watermark_ms, data_end_ms, bucket_s, params, tail, updates) VALUES (1, $1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (id) DO UPDATE SET watermark_ms = excluded.watermark_ms, data_end_ms = excluded.data_end_ms, tail = excluded.tail, updates = excluded.updates`,
		st.first.UnixMilli(), st.watermark.UnixMilli(), st.dataEnd.UnixMilli(), int64(st.bucket/time.Second), st.params, b.Bytes(), st.updates)
	return err
}
