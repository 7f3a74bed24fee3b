package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/profile"
)

// A backfill counts data older than a cluster's watermark that the ledger
// does not hold yet: a missed day counted after the days around it, or
// two cron jobs that reach the lock out of order. Hour buckets (the
// ledger's buckets) are the unit: a bucket with settled rows is held, and
// the inputs' data in it was counted already; a bucket without is a gap,
// and is counted from the inputs, whole. The buckets next to a gap were
// settled without the gap's data (an idle run or a sample's coverage that
// crosses the gap's edge, the energy counter's increase over the gap), so
// where the inputs cover such a bucket and the reach around it, it is
// counted again from them, its old rows taken back: a backfill then
// equals an in-order build (docs/ledger.md, Backfill).

// held is what a cluster's settled rows hold over the inputs' span: the
// nodes counted in each bucket.
type held map[int64]map[string]bool

// heldBuckets reads the settled buckets of the cluster over the inputs'
// span, with their nodes.
func (l *Ledger) heldBuckets(ctx context.Context, tx *sql.Tx, st *state, inputs []*profile.Profile) (held, error) {
	out := held{}
	if st.fresh || len(inputs) == 0 {
		return out, nil
	}
	lo, hi := span2(inputs)
	err := scanRows(ctx, tx, func(rows *sql.Rows) error {
		var b int64
		var node string
		if err := rows.Scan(&b, &node); err != nil {
			return err
		}
		if out[b] == nil {
			out[b] = map[string]bool{}
		}
		out[b][node] = true
		return nil
	}, `SELECT DISTINCT bucket, node FROM seedance_gpu WHERE cluster = $1 AND provisional = 0 AND bucket >= $2 AND bucket < $3`,
		st.cluster, lo.Truncate(st.bucket).Unix(), hi.Unix()+1)
	return out, err
}

// span2 is the earliest start and the latest end of the profiles.
func span2(ps []*profile.Profile) (lo, hi time.Time) {
	for i, p := range ps {
		if i == 0 || p.StartedAt.Before(lo) {
			lo = p.StartedAt
		}
		if p.EndedAt.After(hi) {
			hi = p.EndedAt
		}
	}
	return lo, hi
}

// filled is the part of an update that fills gaps: the analysis of the
// inputs cut at the buckets, and which pieces are written.
type filled struct {
	rows *rows
	// added are the gaps' buckets, recounted the held buckets next to
	// them, counted again; already the inputs' buckets held before.
	added, recounted []int64
	already          int
}

// planFill finds the inputs' buckets before the watermark's bucket that
// the cluster does not hold, and counts them; it refuses data of nodes
// that held buckets, or the carried samples, do not know: that is another
// cluster's (or one node's file after another's for the same hours), and
// counting it would leave it out unseen.
func planFill(st *state, spec UpdateSpec, h held) (*filled, error) {
	f := &filled{}
	if st.fresh {
		return f, nil
	}
	b := int64(st.bucket / time.Second)
	wmb := st.watermark.Truncate(st.bucket).Unix()
	have, err := inputBuckets(spec.Inputs, st, h, b, wmb)
	if err != nil {
		return nil, err
	}
	var gaps []int64
	for _, x := range have {
		if h[x] != nil {
			f.already++
		} else {
			gaps = append(gaps, x)
		}
	}
	if len(gaps) == 0 {
		return f, nil
	}
	f.added = gaps
	reach := margin(spec.Inputs, spec.Params.IdleWindow)
	lo, hi := span2(spec.Inputs)
	covers := func(x int64) bool {
		return !lo.After(time.Unix(x, 0).Add(-reach)) && !hi.Before(time.Unix(x+b, 0).Add(reach))
	}
	isGap := map[int64]bool{}
	for _, g := range gaps {
		isGap[g] = true
	}
	for _, g := range gaps {
		for _, n := range []int64{g - b, g + b} {
			if h[n] != nil && n < wmb && covers(n) && !isGap[n] && !contains(f.recounted, n) {
				f.recounted = append(f.recounted, n)
			}
		}
	}
	write := append(append([]int64{}, gaps...), f.recounted...)
	sort.Slice(write, func(i, j int) bool { return write[i] < write[j] })
	at := []time.Time{}
	for x := write[0]; x <= write[len(write)-1]+b; x += b {
		at = append(at, time.Unix(x, 0).UTC())
	}
	joined := profile.Join(spec.Inputs, lo.Add(-time.Millisecond), hi, false)
	sources, err := asSources([]*profile.Profile{joined})
	if err != nil {
		return nil, err
	}
	cuts, err := analyze.Cut(sources, spec.Params, at)
	if err != nil {
		return nil, err
	}
	r := &rows{cuts: cuts, settled: len(at), bucket: b, fill: true, skip: map[int]bool{}}
	for i := range at[:len(at)-1] {
		x := at[i].Unix()
		r.bucketOf = append(r.bucketOf, x)
		r.skip[i] = !isGap[x] && !contains(f.recounted, x)
	}
	f.rows = r
	if first := time.Unix(write[0], 0).UTC(); first.Before(st.first) {
		st.first = first
	}
	return f, nil
}

func contains(xs []int64, x int64) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// inputBuckets lists the buckets before wmb in which the inputs have a
// sample, in order; and refuses a node whose samples lie in a held bucket
// that does not hold it, or before the data end after wmb where the
// carried samples do not know it.
func inputBuckets(inputs []*profile.Profile, st *state, h held, b, wmb int64) ([]int64, error) {
	known := map[string]bool{}
	if st.tail != nil {
		for _, n := range st.tail.Nodes {
			known[n.Name] = true
		}
	}
	dataEnd := float64(st.dataEnd.UnixMilli())
	seen := map[int64]bool{}
	strangers := map[string]bool{}
	for _, p := range inputs {
		base := float64(p.StartedAt.UnixMilli())
		for _, n := range p.Nodes {
			for _, g := range n.GPUs {
				for _, t := range g.Series.T {
					ms := base + math.Round(t*1000)
					if ms >= dataEnd {
						break
					}
					x := int64(math.Floor(ms/1000)) / b * b
					switch {
					case x < wmb:
						seen[x] = true
						if h[x] != nil && !h[x][n.Name] {
							strangers[n.Name] = true
						}
					case !known[n.Name]:
						strangers[n.Name] = true
					}
				}
			}
		}
	}
	if len(strangers) > 0 {
		names := sortedIDs(strangers)
		if len(names) > 5 {
			names = append(names[:5], fmt.Sprintf("and %d more", len(strangers)-5))
		}
		return nil, fmt.Errorf("%w: cluster %s: node %s has data in hours this cluster counted already without it: "+
			"another cluster's data? give each cluster its own name with --cluster (or count a cluster's nodes together in one update)",
			ErrLedger, st.cluster, strings.Join(names, ", "))
	}
	out := make([]int64, 0, len(seen))
	for x := range seen {
		out = append(out, x)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
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
		if err := putGPUDay(ex, day(b), g.node, g.model, g.price, g.source, 0, negate(g.v), 0); err != nil {
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
		if err := putHoldDay(ex, day(b), h.workload, 0, v); err != nil {
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

// queryEach runs a query of the execer's cluster and hands each row to
// scan.
func queryEach(ex *execer, scan func(*sql.Rows) error, q string, args ...any) error {
	rows, err := ex.query(q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
