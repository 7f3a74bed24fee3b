package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/profile"
)

// A backfill counts data older than a cluster's watermark that the ledger
// does not hold yet: a missed day counted after the days around it, two
// cron jobs that reach the lock out of order, a scrape outage that a later
// read fills. The ledger's buckets are the unit. For each settled bucket
// the inputs have data in, an update compares, node by node, the
// GPU-seconds the inputs observe in it with those the ledger holds:
//
//   - the ledger holds nothing of it: a gap, counted from the inputs;
//   - the inputs observe nothing more: it was counted already;
//   - the inputs observe more, and at least all the ledger holds: it is
//     counted again from the inputs, its old rows taken back;
//   - the inputs observe more of one node and less of another: counting
//     either way would lose data, so the update fails, saying so; and
//     data of none of the nodes the ledger holds for the bucket is another
//     cluster's, refused the same way.
//
// The buckets next to one added or counted again were counted without its
// new data (an idle run or a sample's coverage that crosses the edge, the
// energy counter's increase), so where the inputs cover such a bucket and
// the reach around it, it is counted again as well: a backfill from a read
// that covers the hours around the gap equals an in-order build
// (docs/ledger.md, Backfill).

// held is what a cluster's settled rows hold over the inputs' span: the
// GPU-seconds observed of each node in each bucket.
type held map[int64]map[string]float64

// heldBuckets reads the settled rows of the cluster over the inputs' span.
func heldBuckets(ctx context.Context, tx *sql.Tx, st *state, inputs []*profile.Profile) (held, error) {
	out := held{}
	lo, hi := profile.Span(inputs)
	err := scanRows(ctx, tx, func(rows *sql.Rows) error {
		var b int64
		var node string
		var obs float64
		if err := rows.Scan(&b, &node, &obs); err != nil {
			return err
		}
		if out[b] == nil {
			out[b] = map[string]float64{}
		}
		out[b][node] = obs
		return nil
	}, `SELECT bucket, node, SUM(observed_s) FROM seedance_gpu WHERE cluster = $1 AND provisional = 0 AND bucket >= $2 AND bucket < $3 GROUP BY bucket, node`,
		st.cluster, lo.Truncate(st.bucket).Unix()-int64(st.bucket/time.Second), hi.Unix()+int64(st.bucket/time.Second))
	if c := st.carry; c != nil && err == nil { // the open bucket's settled rows, not yet written (carry.go)
		for _, g := range c.Cuts.GPUs {
			if out[c.Bucket] == nil {
				out[c.Bucket] = map[string]float64{}
			}
			out[c.Bucket][g.Node] += g.ObservedS
		}
	}
	return out, err
}

// filled is the part of an update that fills what the ledger lacks before
// the watermark: the analysis of the inputs cut at the buckets, and which
// pieces are written.
type filled struct {
	rows *rows
	// added are the gaps' buckets; recounted the held buckets counted
	// again; already how many of the inputs' buckets were counted before.
	added, recounted []int64
	already          int
}

// planFill decides, bucket by bucket, what of the inputs' data before the
// watermark the ledger lacks, and counts it.
func planFill(ctx context.Context, st *state, spec UpdateSpec, readHeld func() (held, error)) (*filled, error) {
	if st.fresh {
		return &filled{}, nil
	}
	b := int64(st.bucket / time.Second)
	have, err := inputBuckets(spec.Inputs, st, b)
	if err != nil || len(have) == 0 {
		return &filled{}, err
	}
	h, err := readHeld() // only when the inputs reach before the watermark
	if err != nil {
		return nil, err
	}
	at := fillTimes(have, b, st.watermark.Unix())
	lo, hi := profile.Span(spec.Inputs)
	joined := profile.Join(spec.Inputs, lo.Add(-time.Millisecond), hi, false)
	sources, err := asSources([]*profile.Profile{joined})
	if err != nil {
		return nil, err
	}
	cuts, err := analyze.Cut(ctx, sources, spec.Params, at)
	if err != nil {
		return nil, err
	}
	reach := margin(spec.Inputs, spec.Params.IdleWindow)
	fp := &fillPlan{st: st, h: h, have: have, at: at, seen: observed(cuts), f: &filled{}, write: map[int]bool{}, reach: reach, from: spec.FillFrom, to: spec.FillTo,
		covers: func(i int) bool {
			return (!lo.After(at[i].Add(-reach)) || !lo.After(st.first)) && !hi.Before(at[i+1].Add(reach))
		}}
	if err := fp.judge(); err != nil || len(fp.write) == 0 {
		return fp.f, err
	}
	if err := fp.neighbours(); err != nil {
		return nil, err
	}
	r := &rows{cuts: cuts, settled: len(at), bucket: b, fill: true, skip: map[int]bool{}}
	for i := range at[:len(at)-1] {
		r.bucketOf = append(r.bucketOf, at[i].Unix())
		r.skip[i] = !fp.write[i]
	}
	fp.f.rows = r
	if first := at[0]; first.Before(st.first) {
		st.first = first
	}
	return fp.f, nil
}

// fillTimes cuts the buckets of have, and one on each side, at their
// edges; the last piece ends at the watermark wm at the latest (have[0]
// lies before wm, so there is one piece at least).
func fillTimes(have []int64, b, wm int64) []time.Time {
	var at []time.Time
	for x := have[0] - b; x < wm && x <= have[len(have)-1]+b; x += b {
		at = append(at, time.Unix(x, 0).UTC())
	}
	return append(at, time.Unix(min(at[len(at)-1].Unix()+b, wm), 0).UTC())
}

// fillPlan is planFill's bucket-by-bucket decision.
type fillPlan struct {
	st     *state
	h      held
	have   []int64
	at     []time.Time
	seen   []map[string]float64
	reach  time.Duration
	covers func(piece int) bool
	f      *filled
	write  map[int]bool // pieces written
	// from and to, when set, bound the buckets judged (UpdateSpec.FillFrom).
	from, to time.Time
}

// own says whether the bucket that begins at x is one the update may add
// or count again for its own data (not only as a neighbour).
func (fp *fillPlan) own(x time.Time) bool {
	return (fp.from.IsZero() || !x.Before(fp.from.Truncate(fp.st.bucket))) && (fp.to.IsZero() || x.Before(fp.to))
}

// judge weighs each bucket the inputs have data in against the ledger.
func (fp *fillPlan) judge() error {
	for i := range fp.at[:len(fp.at)-1] {
		x := fp.at[i].Unix()
		if !slices.Contains(fp.have, x) || !fp.own(fp.at[i]) {
			continue
		}
		switch verdict, err := weigh(fp.st, x, fp.h[x], fp.seen[i]); {
		case err != nil:
			return err
		case verdict == bucketGap:
			fp.f.added, fp.write[i] = append(fp.f.added, x), true
		case verdict == bucketMore && fp.covers(i):
			fp.f.recounted, fp.write[i] = append(fp.f.recounted, x), true
		case verdict == bucketMore:
			return fmt.Errorf("%w: cluster %s: the ledger holds part of the bucket %s, and the input more of it but not the idle window around it: read %s to %s to count the bucket again, whole",
				ErrLedger, fp.st.cluster, fp.at[i].Format(time.RFC3339), fp.at[i].Add(-fp.reach).Format(time.RFC3339), fp.at[i+1].Add(fp.reach).Format(time.RFC3339))
		default:
			fp.f.already++
		}
	}
	return nil
}

// neighbours adds the held buckets next to a written one that the inputs
// cover whole: they are counted again with its data. A held bucket right
// after a gap the inputs fill, which they do not cover, is refused: it was
// counted without the gap's data, and its energy holds the counter's
// increase over the whole gap, which the gap's buckets now count again.
func (fp *fillPlan) neighbours() error {
	for i := range fp.at[:len(fp.at)-1] {
		x := fp.at[i].Unix()
		if fp.write[i] || !fp.write[i-1] && !fp.write[i+1] || fp.h[x] == nil {
			continue
		}
		switch {
		case fp.covers(i) && len(lostNodes(fp.h[x], fp.seen[i])) == 0:
			fp.f.recounted, fp.write[i] = append(fp.f.recounted, x), true
			if slices.Contains(fp.have, x) {
				fp.f.already--
			}
		case fp.write[i-1] && slices.Contains(fp.f.added, fp.at[i-1].Unix()):
			return fmt.Errorf("%w: cluster %s: the bucket %s after the hole this input fills was counted without the hole's data, its energy with the counter's increase over the hole: "+
				"read %s to %s (the hole and the idle window past that bucket) to count it again, or the hole's energy would count twice",
				ErrLedger, fp.st.cluster, fp.at[i].Format(time.RFC3339), fp.at[i-1].Add(-fp.reach).Format(time.RFC3339), fp.at[i+1].Add(fp.reach).Format(time.RFC3339))
		}
	}
	slices.Sort(fp.f.recounted)
	return nil
}

// observed is what the cuts observed of each node in each piece, in
// GPU-seconds.
func observed(c *analyze.Cuts) []map[string]float64 {
	out := make([]map[string]float64, len(c.At))
	for _, g := range c.GPUs {
		if out[g.Piece] == nil {
			out[g.Piece] = map[string]float64{}
		}
		out[g.Piece][g.Node] += g.ObservedS
	}
	return out
}

// What the inputs hold of a bucket against the ledger.
const (
	bucketAlready = iota // nothing more
	bucketGap            // the ledger holds nothing of it
	bucketMore           // more, and at least all the ledger holds
)

// roughly: two sums of GPU-seconds that differ by rounding alone.
func roughly(a, b float64) bool { return math.Abs(a-b) <= 1e-3+1e-7*math.Max(a, b) }

// weigh says what the inputs (in) hold of bucket x against the ledger
// (have), and refuses what counting could lose: data of other nodes
// alone (another cluster's), or more of one node and less of another.
func weigh(st *state, x int64, have, in map[string]float64) (int, error) {
	when := time.Unix(x, 0).UTC().Format(time.RFC3339)
	if len(have) == 0 {
		return bucketGap, nil
	}
	var strangers, gained, lost []string
	for n, v := range in {
		_, known := have[n]
		switch {
		case !known && v > 0:
			strangers, gained = append(strangers, n), append(gained, n)
		case known && v > have[n] && !roughly(v, have[n]):
			gained = append(gained, n)
		}
	}
	lost = lostNodes(have, in)
	slices.Sort(strangers)
	switch {
	case len(gained) == 0:
		return bucketAlready, nil
	case len(strangers) == len(gained) && len(lost) == len(have):
		return 0, fmt.Errorf("%w: cluster %s: node %s has data in %s, which this cluster counted already without it: "+
			"another cluster's data? give each cluster its own name with --cluster", ErrLedger, st.cluster, few(strangers), when)
	case len(lost) > 0:
		return 0, fmt.Errorf("%w: cluster %s: the input holds more of %s than the ledger for some nodes but less for node %s: "+
			"counting it would lose data; count the bucket's nodes together in one update", ErrLedger, st.cluster, when, few(lost))
	}
	return bucketMore, nil
}

// lostNodes are the nodes of a bucket that the inputs observe less of than
// the ledger holds, in order: counting the bucket again from the inputs
// would lose their data.
func lostNodes(have, in map[string]float64) []string {
	var lost []string
	for n, v := range have {
		if in[n] < v && !roughly(in[n], v) {
			lost = append(lost, n)
		}
	}
	slices.Sort(lost)
	return lost
}

// few names up to five, and how many more.
func few(names []string) string {
	if len(names) > 5 {
		return strings.Join(names[:5], ", ") + fmt.Sprintf(" and %d more", len(names)-5)
	}
	return strings.Join(names, ", ")
}

// inputBuckets lists the buckets in which the inputs have a sample before
// the watermark, in order; and refuses a node with samples between the
// watermark and the data end that the carried samples do not know (that
// data would be dropped as read before).
func inputBuckets(inputs []*profile.Profile, st *state, b int64) ([]int64, error) {
	known := map[string]bool{}
	if st.tail != nil {
		for _, n := range st.tail.Nodes {
			known[n.Name] = true
		}
	}
	wm, dataEnd := float64(st.watermark.UnixMilli()), float64(st.dataEnd.UnixMilli())
	seen := map[int64]bool{}
	strangers := map[string]bool{}
	for _, p := range inputs {
		base := float64(p.StartedAt.UnixMilli())
		for _, n := range p.Nodes {
			for _, g := range n.GPUs {
				for _, t := range g.Series.T {
					ms := base + math.Round(t*1000)
					if ms >= dataEnd {
						break // a series ascends: the rest was read before, or is new
					}
					switch {
					case ms < wm:
						seen[int64(math.Floor(ms/1000))/b*b] = true
					case !known[n.Name]:
						strangers[n.Name] = true
					}
				}
			}
		}
	}
	if len(strangers) > 0 {
		return nil, fmt.Errorf("%w: cluster %s: node %s has data before the ledger's data end that the ledger did not count: "+
			"another cluster's data? give each cluster its own name with --cluster", ErrLedger, st.cluster, few(sortedIDs(strangers)))
	}
	out := make([]int64, 0, len(seen))
	for x := range seen {
		out = append(out, x)
	}
	slices.Sort(out)
	return out, nil
}

// undoBucket takes a settled bucket's rows back, to count it again: its
// GPU, hold and owner rows are deleted, and what they added to the daily
// rollups and to the workloads' settled sums is subtracted.
func undoBucket(ex *execer, b int64) error {
	type gpuRow struct {
		node, model, source string
		price               float64
		v                   []float64
	}
	var gpus []gpuRow
	err := queryEach(ex, func(rows *sql.Rows) error {
		g := gpuRow{v: make([]float64, 6)}
		err := rows.Scan(&g.node, &g.model, &g.price, &g.source, &g.v[0], &g.v[1], &g.v[2], &g.v[3], &g.v[4], &g.v[5])
		gpus = append(gpus, g)
		return err
	}, `SELECT node, model, price_usd_per_hour, price_source, observed_s, idle_s, util_s, util_covered_s, cost_usd, energy_j
FROM seedance_gpu WHERE cluster = $1 AND bucket = $2 AND provisional = 0`, b)
	if err != nil {
		return err
	}
	for _, g := range gpus {
		if err := putGPUDay(ex, day(b), g.node, g.model, g.price, g.source, negate(g.v), 0); err != nil {
			return err
		}
	}
	type holdRow struct {
		workload string
		v        []float64
		unknown  int64
	}
	var holds []holdRow
	err = queryEach(ex, func(rows *sql.Rows) error {
		h := holdRow{v: make([]float64, 5)}
		err := rows.Scan(&h.workload, &h.v[0], &h.v[1], &h.v[2], &h.v[3], &h.v[4], &h.unknown)
		holds = append(holds, h)
		return err
	}, `SELECT workload, SUM(held_s), SUM(used_s), SUM(idle_s), SUM(cost_usd), COALESCE(SUM(energy_j), 0), SUM(CASE WHEN energy_j IS NULL THEN 1 ELSE 0 END)
FROM seedance_hold WHERE cluster = $1 AND bucket = $2 AND provisional = 0 GROUP BY workload`, b)
	if err != nil {
		return err
	}
	for _, h := range holds {
		v := negate(h.v)
		if err := putHoldDay(ex, day(b), h.workload, v); err != nil {
			return err
		}
		if h.workload == "" {
			continue
		}
		err := ex.exec(`UPDATE seedance_workload SET held_s = held_s + $3, used_s = used_s + $4, idle_s = idle_s + $5, cost_usd = cost_usd + $6,
energy_j = energy_j + $7, energy_unknown = energy_unknown - $8 WHERE cluster = $1 AND id = $2`, h.workload, v[0], v[1], v[2], v[3], v[4], h.unknown)
		if err != nil {
			return err
		}
	}
	owners := map[ownerRow]*sums{}
	err = queryEach(ex, func(rows *sql.Rows) error {
		var o int64
		var s sums
		err := rows.Scan(&o, &s.held, &s.used, &s.idle, &s.cost, &s.energy, &s.unknown)
		owners[ownerRow{day(b), o, 0}] = &sums{-s.held, -s.used, -s.idle, -s.cost, -s.energy, -s.unknown}
		return err
	}, `SELECT owner, held_s, used_s, idle_s, cost_usd, energy_j, energy_unknown FROM seedance_owner_hold WHERE cluster = $1 AND bucket = $2 AND provisional = 0`, b)
	if err != nil {
		return err
	}
	if err := putRollup(ex, "seedance_owner_hold_day", "day", owners); err != nil {
		return err
	}
	if err := undoChargeDay(ex, b); err != nil {
		return err
	}
	if err := undoWork(ex, b); err != nil {
		return err
	}
	if err := undoQueues(ex, b); err != nil {
		return err
	}
	for _, table := range []string{"seedance_gpu", "seedance_hold", "seedance_owner_hold"} {
		if err := ex.exec(`DELETE FROM `+table+` WHERE cluster = $1 AND bucket = $2 AND provisional = 0`, b); err != nil {
			return err
		}
	}
	return nil
}

func negate(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = -x
	}
	return out
}

// queryEach runs a query of the execer's cluster ($1) and hands each row
// to scan.
func queryEach(ex *execer, scan func(*sql.Rows) error, q string, args ...any) error {
	if err := ex.flush(); err != nil {
		return err
	}
	return scanRows(ex.ctx, ex.tx, scan, q, append([]any{ex.cluster}, args...)...)
}
