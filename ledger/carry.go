package ledger

import (
	"bytes"
	"context"
	"encoding/gob"
	"fmt"
	"time"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/profile"
)

// Settled rows are written once, when their bucket closes (issue #56,
// docs/ledger.md, Updates): what an update settles in the bucket its
// watermark lies in (the open bucket) is carried with the cluster's state
// instead (schema 11, seedance_state.held), and written as provisional
// rows together with the pieces after the watermark. A five-minute update
// therefore writes each row of the open bucket once, as provisional, where
// it wrote it three times (two settled pieces added, one provisional
// piece); the update whose watermark passes the bucket's end writes the
// carried rows, and what it settles before that end, as the bucket's
// settled rows.

// migration11 keeps the open bucket's settled rows with the state.
// It also keeps a queue's GPU-minute budget (Slurm's GrpTRESMins) and its
// lending limit with its hourly rows, as their nominal quota.
const migration11 = `ALTER TABLE seedance_state ADD COLUMN held BYTEA NOT NULL DEFAULT '';
ALTER TABLE seedance_queue ADD COLUMN budget_gpu_minutes DOUBLE PRECISION;
ALTER TABLE seedance_queue ADD COLUMN lending_limit_gpus DOUBLE PRECISION`

// migration12 takes the provisional rows out of the daily rollups: since
// schema 12 they hold settled rows only, and a report reads the days of
// the provisional rows from the hourly tables (span.daily). A five-minute
// update then writes its provisional rows once, not twice.
const migration12 = `DELETE FROM seedance_gpu_day WHERE provisional = 1;
DELETE FROM seedance_hold_day WHERE provisional = 1;
DELETE FROM seedance_owner_hold_day WHERE provisional = 1;
DELETE FROM seedance_charge_day WHERE provisional = 1;
DELETE FROM seedance_work_day WHERE provisional = 1`

// carry is what the cluster settled in its open bucket, not yet written as
// settled rows: the rows in pieces of one price each (a price that
// changed within the bucket makes a second piece).
type carry struct {
	Bucket int64
	Pieces int
	Cuts   *analyze.Cuts
}

// encodeCarry is c as the state keeps it (gob, carryWire); nil: none.
func encodeCarry(c *carry) ([]byte, error) {
	if c == nil || c.Pieces == 0 {
		return nil, nil
	}
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(wireOf(c)); err != nil {
		return nil, fmt.Errorf("%w: its open bucket's settled rows: %v", ErrLedger, err)
	}
	return b.Bytes(), nil
}

// decodeCarry reads what encodeCarry wrote.
func decodeCarry(b []byte) (*carry, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var w carryWire
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&w); err != nil {
		return nil, fmt.Errorf("%w: its open bucket's settled rows: %v", ErrLedger, err)
	}
	return w.carry()
}

// A piece's class, for regroup.
const (
	classSettled = iota // settled, in a bucket before the open one
	classHeld           // settled, in the open bucket: carried
	classProvisional
)

// regroup turns a forward update's pieces (r, repriced) and the carry of
// its previous update (prev, nil: none) into the rows to write, each of
// its bucket and class summed into one row per key where their prices
// agree, and returns the carry to keep: what the update settled in the
// open bucket (open, the watermark's bucket), with prev's when prev is of
// the same bucket. prev of an earlier bucket is written as settled rows of
// that bucket.
func regroup(r *rows, prev *carry, open int64) *carry {
	all, bucket, class := withCarry(r, prev, open)
	var next *carry
	heldOnly := func(p int) (int64, bool, bool) { return bucket[p], true, class[p] == classHeld }
	if held, groups := merge(all, heldOnly, len(bucket)); len(groups) > 0 {
		next = &carry{Bucket: open, Pieces: len(groups), Cuts: held}
	}
	written := func(p int) (int64, bool, bool) { return bucket[p], class[p] != classSettled, true }
	cuts, groups := merge(all, written, len(bucket))
	r.cuts, r.bucketOf, r.prov = cuts, make([]int64, len(groups)), make([]bool, len(groups))
	for p, g := range groups {
		r.bucketOf[p], r.prov[p] = g.bucket, g.prov
	}
	r.readBefore, r.skip = 0, nil
	return next
}

// withCarry is prev's rows and r's in one set of pieces (prev's first:
// the rows of a key are summed, and the latest describes it, in the order
// they were read), with each piece's bucket and class.
func withCarry(r *rows, prev *carry, open int64) (*analyze.Cuts, []int64, []int) {
	var bucket []int64
	var class []int
	base := 0
	if prev != nil {
		base = prev.Pieces
		for range prev.Pieces {
			c := classSettled
			if prev.Bucket >= open {
				c = classHeld
			}
			bucket, class = append(bucket, prev.Bucket), append(class, c)
		}
	}
	for p, b := range r.bucketOf {
		c := classProvisional
		if p < r.settled {
			c = classSettled
			if b >= open {
				c = classHeld
			}
		}
		bucket, class = append(bucket, b), append(class, c)
	}
	if prev == nil {
		return r.cuts, bucket, class
	}
	all := *r.cuts
	all.GPUs = append(prev.Cuts.GPUs, shifted(all.GPUs, base, func(g *analyze.GPUCut) *int { return &g.Piece })...)
	all.Holds = append(prev.Cuts.Holds, shifted(all.Holds, base, func(h *analyze.HoldCut) *int { return &h.Piece })...)
	all.Work = append(prev.Cuts.Work, shifted(all.Work, base, func(w *analyze.WorkCut) *int { return &w.Piece })...)
	all.Queues = append(prev.Cuts.Queues, shifted(all.Queues, base, func(q *analyze.QueueCut) *int { return &q.Piece })...)
	return &all, bucket, class
}

// shifted is a copy of rows with each row's piece moved by base.
func shifted[T any](rows []T, base int, piece func(*T) *int) []T {
	out := make([]T, len(rows))
	for i := range rows {
		out[i] = rows[i]
		*piece(&out[i]) += base
	}
	return out
}

// nonNil is b, or an empty value for a NOT NULL column.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// writes says whether the rows write bucket b.
func (r *rows) writes(b int64) bool {
	for i, x := range r.bucketOf {
		if x == b && !r.skip[i] {
			return true
		}
	}
	return false
}

// carried takes a fill's piece i out of what it writes and gives it as
// the carry of its bucket: a backfill that counts the open bucket again,
// to the watermark, replaces what the updates carried of it.
func (r *rows) carried(i int) *carry {
	r.skip[i] = true
	c := &carry{Bucket: r.bucketOf[i], Pieces: 1, Cuts: &analyze.Cuts{}}
	to := make([]int, len(r.bucketOf))
	for p := range to {
		to[p] = -1
	}
	to[i] = 0
	mergeGPUs(c.Cuts, r.cuts.GPUs, to)
	mergeHolds(c.Cuts, r.cuts.Holds, to)
	mergeWork(c.Cuts, r.cuts.Work, to)
	mergeQueues(c.Cuts, r.cuts.Queues, to)
	return c
}

// replanned is r, or, where the update reads nothing new but its fill
// counts the open bucket again, the open bucket's provisional rows anew,
// without the carry the fill replaces (replan).
func replanned(ctx context.Context, st *state, spec UpdateSpec, fill *filled, r *rows) (*rows, error) {
	if r != nil || fill.rows == nil || st.carry == nil || !fill.rows.writes(st.carry.Bucket) {
		return r, nil
	}
	return replan(ctx, st, spec)
}

// replan cuts the carried samples alone again from the watermark on: the
// provisional rows of an update that reads nothing new but replaces the
// carry (carried), which the previous update's provisional rows hold. The
// samples reach the idle window and two intervals before the watermark,
// what the previous update's analysis had of them.
func replan(ctx context.Context, st *state, spec UpdateSpec) (*rows, error) {
	reach := margin([]*profile.Profile{st.tail}, spec.Params.IdleWindow)
	at := cutTimes(st.watermark, st.watermark, st.dataEnd.Add(reach), st.bucket)
	sources, err := asSources([]*profile.Profile{st.tail})
	if err != nil {
		return nil, err
	}
	cuts, err := analyze.Cut(ctx, sources, spec.Params, at)
	if err != nil {
		return nil, err
	}
	r := &rows{cuts: cuts, tail: st.tail, from: st.watermark.Truncate(st.bucket).Unix(), bucket: int64(st.bucket / time.Second), readBefore: len(at) - 1}
	for i := range at[:len(at)-1] {
		r.bucketOf = append(r.bucketOf, at[i].Truncate(st.bucket).Unix())
	}
	return r, nil
}
