package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
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
	// FillFrom and FillTo, when set, bound the buckets before the
	// watermark that the inputs may add or count again (a step of a
	// backfill read in steps, whose inputs reach a bucket and the idle
	// window past it on each side so that the held buckets next to it are
	// counted again whole); the buckets next to those are counted again
	// where the inputs cover them.
	FillFrom, FillTo time.Time
	// Origin names what the inputs were read from (a Prometheus server's
	// address and selector; "" for files): an update that names no
	// cluster, from an origin its cluster was never read from, with none
	// of its nodes, is refused (identity.go).
	Origin string
}

// Updated says what an update did.
type Updated struct {
	// Cluster is the cluster counted.
	Cluster string
	// Nothing: the inputs held no sample after the cluster's data end,
	// and none in a bucket the ledger lacked.
	Nothing bool
	// Added are the buckets before the watermark that the ledger lacked
	// and this update counted (a backfill); Recounted the held buckets
	// next to them counted again with the gap's data; Already how many of
	// the inputs' buckets before the watermark it held already.
	Added, Recounted []time.Time
	Already          int
	// Warnings are what the update warns of, as analyze would: the
	// sources' notes (owner labels unknown, a partial answer), models
	// without a price, price keys that matched none. A report over the
	// buckets counted repeats them.
	Warnings []string
	// From is where this update's counting began (the previous
	// watermark), Watermark where its settled rows end, DataEnd the end of
	// the data read so far.
	From, Watermark, DataEnd time.Time
	Rows                     int
	// Steps is how many updates in a row these figures join (a long range
	// read in steps); 0 or 1 for one.
	Steps int
}

// state is a cluster's carried state (one row).
type state struct {
	cluster                   string
	first, watermark, dataEnd time.Time
	bucket                    time.Duration
	params                    string
	tail                      *profile.Profile
	// carry is what it settled in its open bucket, not yet written as
	// settled rows (carry.go).
	carry   *carry
	updates int64
	// fresh: the cluster has no state row yet.
	fresh bool
}

// Update counts the inputs' new data into the ledger, as the ledger's
// cluster's (Options.Cluster), in one transaction: a failure or a kill
// leaves the ledger as it was, and an update that is run twice counts
// nothing twice (the second finds nothing new). Updates run one at a
// time, whichever their clusters: each takes the ledger's write lock
// first (SQLite's, or an advisory lock in PostgreSQL), and one that finds
// the state changed under it fails rather than overwrite it.
func (l *Ledger) Update(ctx context.Context, spec UpdateSpec) (Updated, error) {
	if l.readOnly {
		return Updated{}, fmt.Errorf("%w: opened for reading", ErrLedger)
	}
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return Updated{}, fmt.Errorf("%w: %v", ErrLedger, err)
	}
	defer func() { _ = tx.Rollback() }() // after a commit, a no-op
	if err := l.lock(ctx, tx); err != nil {
		return Updated{}, err
	}
	cluster, err := l.clusterOf(ctx, tx, spec.Inputs)
	if err != nil {
		return Updated{}, err
	}
	st, err := l.load(ctx, tx, cluster)
	if err != nil {
		return Updated{}, err
	}
	params := paramsKey(spec.Params)
	if st == nil {
		if st, err = l.newState(ctx, tx, cluster, spec, params); err != nil {
			return Updated{}, err
		}
	} else if st.params != params {
		return Updated{}, fmt.Errorf("%w: it counts idle time with %s, this update with %s: keep the ledger's settings or start a new ledger", ErrLedger, st.params, params)
	}
	if err := sameNodesElsewhere(ctx, tx, st, spec.Inputs); err != nil {
		return Updated{}, err
	}
	spans := gpuSpans(spec.Inputs)
	if err := checkIdentity(ctx, tx, st, l.namedBy(spec.Inputs), spec.Origin, spans); err != nil {
		return Updated{}, err
	}
	fill, err := planFill(ctx, st, spec, func() (held, error) { return heldBuckets(ctx, tx, st, spec.Inputs) })
	if err != nil {
		return Updated{}, err
	}
	up, rows, err := plan(ctx, st, spec)
	if err != nil {
		return up, err
	}
	if rows, err = replanned(ctx, st, spec, fill, rows); err != nil {
		return up, err
	}
	up.Cluster, up.Already, up.Warnings = st.cluster, fill.already, warnings(spec)
	if fill.rows == nil && up.Nothing {
		return up, nil
	}
	up.Nothing = false
	up.Added, up.Recounted = times(fill.added), times(fill.recounted)
	if fill.rows != nil {
		up.Rows += len(fill.rows.cuts.GPUs) + len(fill.rows.cuts.Holds)
	}
	err = l.write(ctx, tx, st, rows, fill.rows, up.Warnings)
	if err == nil {
		ex := newExecer(ctx, tx, st.cluster, l.postgres)
		if err = noteIdentity(ex, spec.Origin, spans); err == nil {
			err = ex.flush()
		}
		ex.close()
	}
	if err != nil {
		if errors.Is(err, ErrLedger) {
			return Updated{}, err
		}
		return Updated{}, fmt.Errorf("%w: %v", ErrLedger, err)
	}
	if err := tx.Commit(); err != nil {
		return Updated{}, fmt.Errorf("%w: commit: %v", ErrLedger, err)
	}
	if rows != nil {
		for _, h := range rows.holes { // kept with the hole's buckets alone
			up.Warnings = append(up.Warnings, h.note(st.cluster, st.bucket))
		}
	}
	return up, nil
}

// lock takes the ledger's write lock for the transaction: SQLite took it
// at BEGIN (IMMEDIATE); PostgreSQL takes an advisory lock, which, unlike
// a row lock, holds before the cluster's state row exists.
func (l *Ledger) lock(ctx context.Context, tx *sql.Tx) error {
	if !l.postgres {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(7158)`); err != nil {
		return fmt.Errorf("%w: take the write lock: %v", ErrLedger, err)
	}
	return nil
}

// newState is the state of a cluster before its first update: it begins
// where the first input does, with the ledger's bucket and idle rules
// where another cluster has them already.
func (l *Ledger) newState(ctx context.Context, tx *sql.Tx, cluster string, spec UpdateSpec, params string) (*state, error) {
	bucket := spec.Bucket
	if bucket <= 0 {
		bucket = DefaultBucket
	}
	var other, otherParams string
	var otherBucket int64
	err := tx.QueryRowContext(ctx, `SELECT cluster, bucket_s, params FROM seedance_state ORDER BY cluster LIMIT 1`).Scan(&other, &otherBucket, &otherParams)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return nil, fmt.Errorf("%w: read its state: %v", ErrLedger, err)
	case otherParams != params:
		return nil, fmt.Errorf("%w: it counts idle time with %s (cluster %s), this update with %s: keep the ledger's settings or start a new ledger", ErrLedger, otherParams, other, params)
	default:
		bucket = time.Duration(otherBucket) * time.Second
	}
	first, _ := profile.Span(spec.Inputs)
	first = first.Truncate(time.Millisecond)
	return &state{cluster: cluster, first: first, watermark: first, dataEnd: first.Add(-time.Millisecond), bucket: bucket, params: params, fresh: true}, nil
}

// paramsKey is what an update must share with the ledger: the idle rules.
func paramsKey(p analyze.Params) string {
	return fmt.Sprintf("--idle-threshold %g --idle-window %s", p.IdleThresholdPct, p.IdleWindow)
}

// warnings are the inputs' notes and the pricer's warnings, each once.
func warnings(spec UpdateSpec) []string {
	var out []string
	for _, p := range spec.Inputs {
		for _, n := range p.Notes {
			if !profile.IsInfo(n) {
				out = append(out, n)
			}
		}
	}
	if spec.Params.Pricer != nil {
		out = append(out, analyze.PriceWarnings(spec.Params.Pricer)...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func times(buckets []int64) []time.Time {
	var out []time.Time
	for _, b := range buckets {
		out = append(out, time.Unix(b, 0).UTC())
	}
	return out
}

// rows is what an update writes.
type rows struct {
	// fill: the rows fill gaps before the watermark (backfill.go): all
	// settled, the pieces in skip left out, and a workload's labels
	// those it has already.
	fill    bool
	skip    map[int]bool
	cuts    *analyze.Cuts
	settled int // pieces before this index are settled
	// prov, when set, says which pieces are provisional instead (the
	// pieces regroup made).
	prov     []bool
	bucketOf []int64
	tail     *profile.Profile
	// from is the bucket of the previous watermark, where the previous
	// update's provisional rows began; bucket is the buckets' length, s.
	from, bucket int64
	// readBefore: the pieces before this index end at or before the
	// previous data end: the previous update read their data, and priced
	// them (reprice.go).
	readBefore int
	// holes are the stretches without a sample in the data (hole.go).
	holes []hole
}

// plan analyzes the carried tail and the new data and cuts the analysis
// into pieces: settled up to the new watermark, provisional after it.
// Nothing new: nil rows.
func plan(ctx context.Context, st *state, spec UpdateSpec) (Updated, *rows, error) {
	inputs := dropSeen(spec.Inputs, st.tail)
	_, end := profile.Span(spec.Inputs)
	from := st.dataEnd
	if st.fresh {
		// A first update keeps the context samples before its inputs'
		// window (docs/profile-format.md): they are counted in no piece,
		// the pieces begin at its start, but give the figures at that edge.
		from = st.first.Add(-margin(spec.Inputs, spec.Params.IdleWindow))
	}
	fresh := profile.Join(inputs, from, end, false)
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
	at := withCut(cutTimes(st.watermark, wm, dataEnd.Add(reach), st.bucket), st.dataEnd)
	sources, err := asSources(all)
	if err != nil {
		return up, nil, err
	}
	p := spec.Params
	cuts, err := analyze.Cut(ctx, sources, p, at)
	if err != nil {
		return up, nil, err
	}
	r := &rows{cuts: cuts, tail: profile.Join(all, wm.Add(-reach), dataEnd, true),
		from: st.watermark.Truncate(st.bucket).Unix(), bucket: int64(st.bucket / time.Second)}
	for _, h := range holes(st.tail, fresh, maxInterval(all), reach) {
		if h.to.After(st.dataEnd) { // the tail's own were the previous update's
			r.holes = append(r.holes, h)
		}
	}
	for i := range at[:len(at)-1] {
		if !at[i+1].After(wm) {
			r.settled = i + 1
		}
		if !at[i+1].After(st.dataEnd) {
			r.readBefore = i + 1
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
	return analyze.Reach(window, maxInterval(ps))
}

// maxInterval is the longest sample interval of the profiles and their
// GPUs.
func maxInterval(ps []*profile.Profile) time.Duration {
	iv := 0.0
	for _, p := range ps {
		iv = math.Max(iv, p.IntervalS)
		for _, n := range p.Nodes {
			for _, g := range n.GPUs {
				iv = math.Max(iv, g.IntervalS)
			}
		}
	}
	return time.Duration(iv * float64(time.Second))
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

// dropSeen is the inputs without each GPU's samples at or before its
// last sample in the tail or in an earlier input: those were counted (a
// source's range may hold the sample at its left edge, which the previous
// range held at its right; a profile's context samples before its window
// may be the previous input's last ones). The inputs are copied down to
// their series' headers, which are cut: the caller's profiles stay whole.
func dropSeen(ps []*profile.Profile, tail *profile.Profile) []*profile.Profile {
	if tail == nil && len(ps) < 2 {
		return ps
	}
	seen := map[[2]string]int64{}
	if tail != nil {
		noteLast(seen, tail)
	}
	inputs := make([]*profile.Profile, len(ps))
	for i, p := range ps {
		q := *p
		q.Nodes = slices.Clone(p.Nodes)
		for ni := range q.Nodes {
			q.Nodes[ni].GPUs = slices.Clone(q.Nodes[ni].GPUs)
			for gi := range q.Nodes[ni].GPUs {
				dropUpTo(&q.Nodes[ni].GPUs[gi], q.StartedAt.UnixMilli(), seen, [2]string{q.Nodes[ni].Name, q.Nodes[ni].GPUs[gi].UUID})
			}
		}
		inputs[i] = &q
		noteLast(seen, &q)
	}
	return inputs
}

// noteLast records each GPU's last sample in p (Unix ms), where it is later
// than what seen holds.
func noteLast(seen map[[2]string]int64, p *profile.Profile) {
	for _, n := range p.Nodes {
		for _, g := range n.GPUs {
			if k := len(g.Series.T); k > 0 {
				t := p.StartedAt.UnixMilli() + int64(math.Round(g.Series.T[k-1]*1000))
				if last, ok := seen[[2]string{n.Name, g.UUID}]; !ok || t > last {
					seen[[2]string{n.Name, g.UUID}] = t
				}
			}
		}
	}
}

// dropUpTo cuts a GPU's samples at or before seen[key] (base: the
// profile's start, Unix ms), and their usage.
func dropUpTo(g *profile.GPU, base int64, seen map[[2]string]int64, key [2]string) {
	last, ok := seen[key]
	if !ok {
		return
	}
	s := &g.Series
	i := sort.Search(len(s.T), func(i int) bool { return base+int64(math.Round(s.T[i]*1000)) > last })
	s.T = s.T[i:]
	for m := profile.Metric(0); m < profile.NumMetrics; m++ {
		if col := s.Col(m); len(*col) >= i {
			*col = (*col)[i:]
		}
	}
	if len(g.Usage) > 0 {
		usage := make([]profile.Usage, len(g.Usage))
		for k, u := range g.Usage {
			usage[k] = profile.Usage{Workload: u.Workload, UtilPct: u.UtilPct[min(i, len(u.UtilPct)):]}
		}
		g.Usage = usage
	}
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
