package ledger

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/seedance/seedance/profile"
)

// DataEndOf is where the cluster's data ends (Options.Cluster; unnamed,
// the only cluster the ledger holds or DefaultCluster), and which cluster
// that is; ok is false for a cluster never counted.
func (l *Ledger) DataEndOf(ctx context.Context) (cluster string, end time.Time, ok bool, err error) {
	tx, err := l.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: l.readOnly})
	if err != nil {
		return "", end, false, fmt.Errorf("%w: %v", ErrLedger, err)
	}
	defer func() { _ = tx.Rollback() }()
	if cluster, err = l.clusterOf(ctx, tx, nil); err != nil {
		return "", end, false, err
	}
	st, err := l.loadHead(ctx, tx, cluster, false)
	if err != nil || st == nil {
		return cluster, end, false, err
	}
	return cluster, st.dataEnd, true, nil
}

// Bucket is the length of the ledger's buckets: those of its clusters, or
// def (a new ledger's) when it has none yet.
func (l *Ledger) Bucket(ctx context.Context, def time.Duration) (time.Duration, error) {
	var b int64
	err := l.db.QueryRowContext(ctx, `SELECT bucket_s FROM seedance_state LIMIT 1`).Scan(&b)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if def <= 0 {
			def = DefaultBucket
		}
		return def, nil
	case err != nil:
		return 0, fmt.Errorf("%w: read its buckets' length: %v", ErrLedger, err)
	}
	return time.Duration(b) * time.Second, nil
}

// load reads a cluster's carried state; nil for a cluster never counted.
// A writer holds the ledger's write lock already (Update).
func (l *Ledger) load(ctx context.Context, tx *sql.Tx, cluster string) (*state, error) {
	return l.loadHead(ctx, tx, cluster, true)
}

// loadHead is load, with the carried samples only when withTail: where
// the data ends needs no decoding of them (a tenth of a five-minute
// update's CPU, each time it was asked).
func (l *Ledger) loadHead(ctx context.Context, tx *sql.Tx, cluster string, withTail bool) (*state, error) {
	q := `SELECT first_ms, watermark_ms, data_end_ms, bucket_s, params, tail, held, updates FROM seedance_state WHERE cluster = $1`
	if !withTail {
		q = `SELECT first_ms, watermark_ms, data_end_ms, bucket_s, params, '', '', updates FROM seedance_state WHERE cluster = $1`
	}
	var first, wm, end, bucket int64
	var tail, held []byte
	st := &state{cluster: cluster}
	err := tx.QueryRowContext(ctx, q, cluster).Scan(&first, &wm, &end, &bucket, &st.params, &tail, &held, &st.updates)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: read its state: %v", ErrLedger, err)
	}
	st.first, st.watermark, st.dataEnd = time.UnixMilli(first).UTC(), time.UnixMilli(wm).UTC(), time.UnixMilli(end).UTC()
	st.bucket = time.Duration(bucket) * time.Second
	if err := plausibleState(cluster, first, wm, end, bucket); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrLedger, err)
	}
	if len(tail) > 0 {
		if st.tail, err = readTail(tail); err != nil {
			return nil, fmt.Errorf("%w: its carried samples: %v", ErrLedger, err)
		}
	}
	if st.carry, err = decodeCarry(held); err != nil {
		return nil, err
	}
	return st, nil
}

// migration13 changes no table: since schema 13 the state keeps its
// carried samples in the carried form (profile.MarshalCarried), which a
// seedance before it cannot read; the version tells it to upgrade.
const migration13 = ""

// migration13Postgres keeps PostgreSQL from trying to compress the
// carried samples, compressed already, at every update (TOAST's pglz).
const migration13Postgres = `ALTER TABLE seedance_state ALTER COLUMN tail SET STORAGE EXTERNAL`

// readTail reads the carried samples as the state keeps them: in the
// carried form since schema 13, as a JSON profile (zstd) before.
func readTail(b []byte) (*profile.Profile, error) {
	if profile.IsCarried(b) {
		return profile.UnmarshalCarried(b)
	}
	return profile.Read(bytes.NewReader(b))
}

// write writes an update inside tx: the rows that fill gaps (nil: none),
// then the forward rows (nil: none new), replacing the cluster's
// provisional rows; and saves the cluster's state.
func (l *Ledger) write(ctx context.Context, tx *sql.Tx, st *state, r, fill *rows, notes []string) error {
	ex := newExecer(ctx, tx, st.cluster, l.postgres)
	defer ex.close()
	if err := putNotes(ex, notes, r, fill); err != nil {
		return err
	}
	if fill != nil {
		if err := takeBackHoles(ex, fill); err != nil {
			return err
		}
		for i, b := range fill.bucketOf {
			if fill.skip[i] {
				continue
			}
			if err := undoBucket(ex, b); err != nil {
				return err
			}
			if st.carry != nil && st.carry.Bucket == b {
				st.carry = fill.carried(i) // counted again to the watermark: carried, not settled
			}
		}
		if err := putRows(ex, fill); err != nil {
			return err
		}
	}
	tail := st.tail
	if r != nil {
		if err := reprice(ex, r); err != nil {
			return err
		}
		st.carry = regroup(r, st.carry, st.watermark.Truncate(st.bucket).Unix())
		if err := dropProvisional(ex, r.from); err != nil {
			return err
		}
		if err := putRows(ex, r); err != nil {
			return err
		}
		if err := putHoles(ex, r.holes, st.bucket); err != nil {
			return err
		}
		tail = r.tail
	}
	if err := ex.flush(); err != nil {
		return err
	}
	return l.save(ctx, tx, st, tail)
}

// putNotes keeps the update's warnings for each bucket it writes.
func putNotes(ex *execer, notes []string, written ...*rows) error {
	buckets := map[int64]bool{}
	for _, r := range written {
		if r == nil {
			continue
		}
		for i, b := range r.bucketOf {
			buckets[b] = buckets[b] || !r.skip[i]
		}
	}
	for b, w := range buckets {
		for _, n := range notes {
			if !w {
				continue
			}
			if err := ex.exec(`INSERT INTO seedance_note (cluster, bucket, note) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, b, n); err != nil {
				return err
			}
		}
	}
	return nil
}

// putRows adds the rows' pieces (but those skipped) to the GPU and hold
// tables and their rollups.
func putRows(ex *execer, r *rows) error {
	for _, g := range r.cuts.GPUs {
		if r.skip[g.Piece] {
			continue
		}
		err := ex.add(`INSERT INTO seedance_gpu AS o (cluster, bucket, node, model, provisional, observed_s, idle_s, util_s, util_covered_s, cost_usd, energy_j, energy_measured, price_usd_per_hour, price_source)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
ON CONFLICT (cluster, bucket, node, model, provisional) DO UPDATE SET observed_s = o.observed_s + excluded.observed_s, idle_s = o.idle_s + excluded.idle_s,
util_s = o.util_s + excluded.util_s, util_covered_s = o.util_covered_s + excluded.util_covered_s, cost_usd = o.cost_usd + excluded.cost_usd,
energy_j = o.energy_j + excluded.energy_j, energy_measured = CASE WHEN o.energy_measured > excluded.energy_measured THEN o.energy_measured ELSE excluded.energy_measured END,
price_usd_per_hour = excluded.price_usd_per_hour, price_source = excluded.price_source`,
			r.bucketOf[g.Piece], g.Node, g.Model, r.provisional(g.Piece), g.ObservedS, g.IdleS, g.UtilS, g.UtilCoveredS, g.CostUSD, g.EnergyJ, b2i(g.EnergyMeasured),
			g.PriceUSDPerHour, g.PriceSource)
		if err != nil {
			return err
		}
		if r.provisional(g.Piece) == 1 {
			continue // the daily rollups hold settled rows only (migration12)
		}
		err = putGPUDay(ex, day(r.bucketOf[g.Piece]), g.Node, g.Model, g.PriceUSDPerHour, g.PriceSource,
			[]float64{g.ObservedS, g.IdleS, g.UtilS, g.UtilCoveredS, g.CostUSD, g.EnergyJ}, b2i(g.EnergyMeasured))
		if err != nil {
			return err
		}
	}
	ownerOf, err := writeOwners(ex, r)
	if err != nil {
		return err
	}
	price := map[priceKey]float64{} // a piece's node's GPUs of a model
	for _, g := range r.cuts.GPUs {
		price[priceKey{int64(g.Piece), g.Node, g.Model}] = g.PriceUSDPerHour
	}
	for _, h := range r.cuts.Holds {
		if r.skip[h.Piece] {
			continue
		}
		id := ""
		if h.Workload != nil {
			id = h.Workload.ID
		}
		err := ex.add(`INSERT INTO seedance_hold AS o (cluster, bucket, node, model, workload, provisional, held_s, used_s, idle_s, cost_usd, energy_j)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
ON CONFLICT (cluster, bucket, node, model, workload, provisional) DO UPDATE SET held_s = o.held_s + excluded.held_s, used_s = o.used_s + excluded.used_s,
idle_s = o.idle_s + excluded.idle_s, cost_usd = o.cost_usd + excluded.cost_usd, energy_j = o.energy_j + excluded.energy_j`,
			r.bucketOf[h.Piece], h.Node, h.Model, id, r.provisional(h.Piece), h.HeldS, h.UsedS, h.IdleS, h.CostUSD, h.EnergyJ)
		if err != nil {
			return err
		}
		if r.provisional(h.Piece) == 1 {
			continue // the daily rollups hold settled rows only (migration12)
		}
		if err := putHoldDay(ex, day(r.bucketOf[h.Piece]), id, []float64{h.HeldS, h.UsedS, h.IdleS, h.CostUSD, h.EnergyJ}); err != nil {
			return err
		}
		p := price[priceKey{int64(h.Piece), h.Node, h.Model}]
		err = putChargeDay(ex, chargeDay{day: day(r.bucketOf[h.Piece]), node: h.Node, model: h.Model, workload: id, owner: ownerOf[id],
			held: h.HeldS, used: h.UsedS, idle: h.IdleS, heldUSD: h.HeldS * p / 3600, usedUSD: h.UsedS * p / 3600, cost: h.CostUSD, energy: h.EnergyJ, price: p})
		if err != nil {
			return err
		}
	}
	if err := writeWork(ex, r); err != nil {
		return err
	}
	return writeQueues(ex, r, price)
}

// putGPUDay adds to a node's and model's daily rollup, settled rows only
// (migration12): v are observed, idle, util, util-covered seconds, cost
// and energy.
func putGPUDay(ex *execer, d int64, node, model string, price float64, source string, v []float64, measured int) error {
	return ex.add(`INSERT INTO seedance_gpu_day AS o (cluster, day, node, model, price_usd_per_hour, price_source, provisional, observed_s, idle_s, util_s, util_covered_s, cost_usd, energy_j, energy_measured)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
ON CONFLICT (cluster, day, node, model, price_usd_per_hour, price_source, provisional) DO UPDATE SET observed_s = o.observed_s + excluded.observed_s, idle_s = o.idle_s + excluded.idle_s,
util_s = o.util_s + excluded.util_s, util_covered_s = o.util_covered_s + excluded.util_covered_s, cost_usd = o.cost_usd + excluded.cost_usd,
energy_j = o.energy_j + excluded.energy_j, energy_measured = CASE WHEN o.energy_measured > excluded.energy_measured THEN o.energy_measured ELSE excluded.energy_measured END`,
		d, node, model, price, source, 0, v[0], v[1], v[2], v[3], v[4], v[5], measured)
}

// putHoldDay adds to a workload's daily rollup, settled rows only
// (migration12): v are held, used, idle seconds, cost and energy.
func putHoldDay(ex *execer, d int64, workload string, v []float64) error {
	return ex.add(`INSERT INTO seedance_hold_day AS o (cluster, day, workload, provisional, held_s, used_s, idle_s, cost_usd, energy_j)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
ON CONFLICT (cluster, day, workload, provisional) DO UPDATE SET held_s = o.held_s + excluded.held_s, used_s = o.used_s + excluded.used_s,
idle_s = o.idle_s + excluded.idle_s, cost_usd = o.cost_usd + excluded.cost_usd, energy_j = o.energy_j + excluded.energy_j`,
		d, workload, 0, v[0], v[1], v[2], v[3], v[4])
}

func (r *rows) provisional(piece int) int {
	if r.prov != nil {
		return b2i(r.prov[piece])
	}
	return b2i(piece >= r.settled)
}

// execer runs an update's statements for one cluster, each prepared once:
// $1 is the cluster, the arguments given follow it. Upserts given to add
// are gathered and sent many rows a statement (batch.go); every other
// statement sends them first, and so must flush at the end.
type execer struct {
	ctx     context.Context
	tx      *sql.Tx
	cluster string
	stmts   map[string]*sql.Stmt
	parsed  map[string]*upsert
	byTable map[string]*upsertBatch // the rows gathered, per table (batch.go)
	order   []*upsertBatch
	// batched: add gathers rows (PostgreSQL); else it runs each at once
	// (SQLite, in the process, runs a row's statement in microseconds and
	// a statement of many rows no faster: it parses each anew).
	batched bool
	// err is the first error a batch met where no caller could be told
	// (before a query): every later call returns it.
	err error
}

func newExecer(ctx context.Context, tx *sql.Tx, cluster string, batched bool) *execer {
	return &execer{ctx: ctx, tx: tx, cluster: cluster, stmts: map[string]*sql.Stmt{}, parsed: map[string]*upsert{},
		byTable: map[string]*upsertBatch{}, batched: batched}
}

func (e *execer) prepared(q string) (*sql.Stmt, error) {
	st := e.stmts[q]
	if st == nil {
		var err error
		if st, err = e.tx.PrepareContext(e.ctx, q); err != nil {
			return nil, err
		}
		e.stmts[q] = st
	}
	return st, nil
}

func (e *execer) exec(q string, args ...any) error {
	return e.execGlobal(q, append([]any{e.cluster}, args...)...)
}

func (e *execer) query(q string, args ...any) (*sql.Rows, error) {
	if err := e.flush(); err != nil {
		return nil, err
	}
	return e.tx.QueryContext(e.ctx, q, append([]any{e.cluster}, args...)...)
}

func (e *execer) close() {
	for _, st := range e.stmts {
		st.Close()
	}
}

// keyedTable is a table of rows by bucket, or by UTC day, after the
// cluster: its key's second column.
type keyedTable struct{ table, col string }

// from is the first key of the table's rows from a bucket on.
func (t keyedTable) from(bucket int64) int64 {
	if t.col == "day" {
		return day(bucket)
	}
	return bucket
}

// provisionalTables are the tables an update leaves provisional rows in:
// the hourly ones (the daily rollups hold settled rows only, migration12).
var provisionalTables = []keyedTable{{"seedance_gpu", "bucket"}, {"seedance_hold", "bucket"}, {"seedance_owner_hold", "bucket"},
	{"seedance_work", "bucket"}, {"seedance_queue", "bucket"}}

// dropProvisional deletes the cluster's provisional rows: those of the
// buckets from the previous watermark's (from) on, the only ones an
// update leaves provisional. Each table is searched by its key (cluster,
// then bucket or day) from there, not scanned whole: an update's cost
// does not grow with the ledger's age.
func dropProvisional(ex *execer, from int64) error {
	for _, t := range provisionalTables {
		if err := ex.exec(`DELETE FROM `+t.table+` WHERE cluster = $1 AND `+t.col+` >= $2 AND provisional = 1`, t.from(from)); err != nil {
			return err
		}
	}
	return nil
}

// day is the start of a bucket's UTC day, in Unix seconds.
func day(bucket int64) int64 { return bucket - bucket%86400 }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// errRace marks an update that found its cluster's state changed under
// it: another writer that took no lock (an older seedance).
var errRace = errors.New("another update changed the ledger meanwhile (one without the write lock: an older seedance?): nothing was written; run this update again")

// save writes the cluster's state and tail: a new cluster's row is
// inserted (a row there already fails it), an existing one is changed only
// if no other update changed it since it was read.
func (l *Ledger) save(ctx context.Context, tx *sql.Tx, st *state, tail *profile.Profile) error {
	var b []byte
	if tail != nil { // the carried form keeps no topology: no ledger row reads one
		var err error
		if b, err = profile.MarshalCarried(tail); err != nil {
			return fmt.Errorf("%w: %v", ErrLedger, err)
		}
	}
	held, err := encodeCarry(st.carry)
	if err != nil {
		return err
	}
	st.updates++
	if st.fresh {
		_, err := tx.ExecContext(ctx, `INSERT INTO seedance_state (cluster, first_ms, watermark_ms, data_end_ms, bucket_s, params, tail, held, updates) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			st.cluster, st.first.UnixMilli(), st.watermark.UnixMilli(), st.dataEnd.UnixMilli(), int64(st.bucket/time.Second), st.params, nonNil(b), nonNil(held), st.updates)
		if err != nil {
			return fmt.Errorf("%w: %v (%v)", ErrLedger, errRace, err)
		}
		return nil
	}
	res, err := tx.ExecContext(ctx, `UPDATE seedance_state SET first_ms = $2, watermark_ms = $3, data_end_ms = $4, tail = $5, held = $6, updates = $7 WHERE cluster = $1 AND updates = $8`,
		st.cluster, st.first.UnixMilli(), st.watermark.UnixMilli(), st.dataEnd.UnixMilli(), nonNil(b), nonNil(held), st.updates, st.updates-1)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("%w: %v", ErrLedger, errRace)
	}
	return nil
}

// execGlobal and queryRowGlobal run a statement without the cluster: on
// the tables all clusters share (the owners), and in migrations.
func (e *execer) execGlobal(q string, args ...any) error {
	if err := e.flush(); err != nil {
		return err
	}
	st, err := e.prepared(q)
	if err != nil {
		return err
	}
	_, err = st.ExecContext(e.ctx, args...)
	return err
}

func (e *execer) queryRowGlobal(q string, args ...any) *sql.Row {
	if err := e.flush(); err != nil { // kept in e.err: the next call, and the last flush, return it
		return e.tx.QueryRowContext(e.ctx, q, args...)
	}
	st, err := e.prepared(q)
	if err != nil {
		return e.tx.QueryRowContext(e.ctx, q, args...) // reports the error
	}
	return st.QueryRowContext(e.ctx, args...)
}
