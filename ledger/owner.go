package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/profile"
)

// An owner is what every grouping but "workload" reads of a workload: its
// kind, its labels, its controller (named from the pod's name where no
// label names it) and its class. Workloads alike in all of these fall in
// the same group at every level, so schema 3 sums the hold rows per owner
// (seedance_owner_hold, hourly, and seedance_owner_hold_day) and keeps
// each workload's settled tenure sums on its own row: a report then reads
// one row per owner and day, not one per workload, and a month of a
// thousand nodes answers in well under a second. Owner 0 is what no
// workload held.
type owner struct {
	id                            int64
	kind, class, controller, tags string // tags: the labels as JSON
	w                             profile.Workload
}

// ownerOf is a workload's owner (without its id).
func ownerOf(w *profile.Workload) (owner, error) {
	tags, err := json.Marshal(w.Labels)
	if err != nil {
		return owner{}, err
	}
	return owner{kind: w.Kind, class: Class(*w), controller: analyze.GroupKey(*w, "controller"), tags: string(tags)}, nil
}

func (o owner) key() [3]string { return [3]string{o.kind, o.controller, o.tags} }

// schema3 is migration 3's tables; backfill3 fills them from the rows.
const schema3 = `
CREATE TABLE seedance_owner (
	id BIGINT PRIMARY KEY, kind TEXT NOT NULL, class TEXT NOT NULL, controller TEXT NOT NULL, labels TEXT NOT NULL,
	UNIQUE (kind, controller, labels));
ALTER TABLE seedance_workload ADD COLUMN owner BIGINT NOT NULL DEFAULT 0;
ALTER TABLE seedance_workload ADD COLUMN settled_last BIGINT;
ALTER TABLE seedance_workload ADD COLUMN gappy INTEGER NOT NULL DEFAULT 1;
ALTER TABLE seedance_workload ADD COLUMN held_s DOUBLE PRECISION NOT NULL DEFAULT 0;
ALTER TABLE seedance_workload ADD COLUMN used_s DOUBLE PRECISION NOT NULL DEFAULT 0;
ALTER TABLE seedance_workload ADD COLUMN idle_s DOUBLE PRECISION NOT NULL DEFAULT 0;
ALTER TABLE seedance_workload ADD COLUMN cost_usd DOUBLE PRECISION NOT NULL DEFAULT 0;
ALTER TABLE seedance_workload ADD COLUMN energy_j DOUBLE PRECISION NOT NULL DEFAULT 0;
ALTER TABLE seedance_workload ADD COLUMN energy_unknown BIGINT NOT NULL DEFAULT 0;
CREATE TABLE seedance_owner_hold (
	bucket BIGINT NOT NULL, owner BIGINT NOT NULL, provisional INTEGER NOT NULL,
	held_s DOUBLE PRECISION NOT NULL, used_s DOUBLE PRECISION NOT NULL, idle_s DOUBLE PRECISION NOT NULL,
	cost_usd DOUBLE PRECISION NOT NULL, energy_j DOUBLE PRECISION NOT NULL, energy_unknown BIGINT NOT NULL,
	PRIMARY KEY (bucket, owner, provisional));
CREATE TABLE seedance_owner_hold_day (
	day BIGINT NOT NULL, owner BIGINT NOT NULL, provisional INTEGER NOT NULL,
	held_s DOUBLE PRECISION NOT NULL, used_s DOUBLE PRECISION NOT NULL, idle_s DOUBLE PRECISION NOT NULL,
	cost_usd DOUBLE PRECISION NOT NULL, energy_j DOUBLE PRECISION NOT NULL, energy_unknown BIGINT NOT NULL,
	PRIMARY KEY (day, owner, provisional));
`

// backfill3 gives every workload its owner and settled sums, and sums the
// hold rows per owner. A migrated workload is marked gappy (its buckets
// may not be consecutive), which a report checks row by row.
func backfill3(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT id, name, kind, labels FROM seedance_workload ORDER BY id`)
	if err != nil {
		return err
	}
	var ws []profile.Workload
	for rows.Next() {
		var w profile.Workload
		var labels string
		if err := rows.Scan(&w.ID, &w.Name, &w.Kind, &labels); err != nil {
			rows.Close()
			return err
		}
		if err := json.Unmarshal([]byte(labels), &w.Labels); err != nil {
			rows.Close()
			return fmt.Errorf("workload %s's labels: %v", w.ID, err)
		}
		ws = append(ws, w)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	ex := newExecer(ctx, tx, "", false)
	defer ex.close()
	owners := &owners{ex: ex, ids: map[[3]string]int64{}}
	for i := range ws {
		o, _, err := owners.of(&ws[i])
		if err != nil {
			return err
		}
		if err := ex.execGlobal(`UPDATE seedance_workload SET owner = $1 WHERE id = $2`, o, ws[i].ID); err != nil {
			return err
		}
	}
	for _, stmt := range []string{
		`UPDATE seedance_workload SET held_s = x.h, used_s = x.u, idle_s = x.i, cost_usd = x.c, energy_j = x.e, energy_unknown = x.n
FROM (SELECT workload, SUM(held_s) h, SUM(used_s) u, SUM(idle_s) i, SUM(cost_usd) c, COALESCE(SUM(energy_j), 0) e, SUM(CASE WHEN energy_j IS NULL THEN 1 ELSE 0 END) n
FROM seedance_hold_day WHERE provisional = 0 GROUP BY workload) x WHERE x.workload = seedance_workload.id`,
		`UPDATE seedance_workload SET settled_last = x.m FROM (SELECT workload, MAX(bucket) m FROM seedance_hold WHERE provisional = 0 GROUP BY workload) x WHERE x.workload = seedance_workload.id`,
		`INSERT INTO seedance_owner_hold SELECT h.bucket, COALESCE(w.owner, 0), h.provisional, SUM(h.held_s), SUM(h.used_s), SUM(h.idle_s), SUM(h.cost_usd),
COALESCE(SUM(h.energy_j), 0), SUM(CASE WHEN h.energy_j IS NULL THEN 1 ELSE 0 END)
FROM seedance_hold h LEFT JOIN seedance_workload w ON w.id = h.workload GROUP BY h.bucket, COALESCE(w.owner, 0), h.provisional`,
		`INSERT INTO seedance_owner_hold_day SELECT bucket - bucket % 86400, owner, provisional, SUM(held_s), SUM(used_s), SUM(idle_s), SUM(cost_usd), SUM(energy_j), SUM(energy_unknown)
FROM seedance_owner_hold GROUP BY bucket - bucket % 86400, owner, provisional`,
	} {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	return nil
}

// owners finds or adds owners, by id, inside an update's transaction.
type owners struct {
	ex  *execer
	ids map[[3]string]int64
}

// of is the id of w's owner, added when new, and w's labels as JSON.
func (os *owners) of(w *profile.Workload) (id int64, labels string, err error) {
	o, err := ownerOf(w)
	if err != nil {
		return 0, "", err
	}
	if id, ok := os.ids[o.key()]; ok {
		return id, o.tags, nil
	}
	err = os.ex.queryRowGlobal(`SELECT id FROM seedance_owner WHERE kind = $1 AND controller = $2 AND labels = $3`, o.kind, o.controller, o.tags).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		if err = os.ex.queryRowGlobal(`SELECT COALESCE(MAX(id), 0) + 1 FROM seedance_owner`).Scan(&id); err == nil {
			err = os.ex.execGlobal(`INSERT INTO seedance_owner (id, kind, class, controller, labels) VALUES ($1, $2, $3, $4, $5)`, id, o.kind, o.class, o.controller, o.tags)
		}
	}
	if err != nil {
		return 0, "", err
	}
	os.ids[o.key()] = id
	return id, o.tags, nil
}

// knownWorkload is what a workload's row holds of it before an update.
type knownWorkload struct {
	owner, first, last int64
	settledLast        sql.NullInt64
	gappy              int
	name, kind, labels string
	// deleted: the update took back the row (undoProvisional), which held
	// provisional rows alone; its owner is still the one of its labels.
	deleted bool
}

// knownWorkloads reads the rows of the workloads ids, 500 at a time (one
// statement each, not one per workload: a round trip each on PostgreSQL).
func knownWorkloads(ex *execer, ids []string) (map[string]*knownWorkload, error) {
	out := make(map[string]*knownWorkload, len(ids))
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), 500)]
		ids = ids[len(chunk):]
		err := queryEach(ex, func(rows *sql.Rows) error {
			var id string
			k := &knownWorkload{}
			err := rows.Scan(&id, &k.owner, &k.settledLast, &k.gappy, &k.name, &k.kind, &k.labels, &k.first, &k.last)
			out[id] = k
			return err
		}, `SELECT id, owner, settled_last, gappy, name, kind, labels, first_bucket, last_bucket FROM seedance_workload WHERE cluster = $1 AND `+inList("id", 2, len(chunk)), names(chunk)...)
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ofKnown is of, without a look-up where w's kind and labels are those its
// row held (k, read before the update): its owner is the row's.
func (os *owners) ofKnown(w *profile.Workload, k *knownWorkload) (int64, string, error) {
	if k.labels != "" && w.Kind == k.kind {
		if tags, err := json.Marshal(w.Labels); err == nil && string(tags) == k.labels {
			return k.owner, k.labels, nil
		}
	}
	return os.of(w)
}

// readOwners reads the owners of ids (all of them when ids is nil).
func readOwners(ctx context.Context, tx *sql.Tx, ids map[int64]bool) (map[int64]*owner, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, kind, class, controller, labels FROM seedance_owner`)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrLedger, err)
	}
	defer rows.Close()
	out := map[int64]*owner{}
	for rows.Next() {
		o := &owner{}
		if err := rows.Scan(&o.id, &o.kind, &o.class, &o.controller, &o.tags); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrLedger, err)
		}
		if ids != nil && !ids[o.id] {
			continue
		}
		o.w.Kind = o.kind
		if err := json.Unmarshal([]byte(o.tags), &o.w.Labels); err != nil {
			return nil, fmt.Errorf("%w: owner %d's labels: %v", ErrLedger, o.id, err)
		}
		out[o.id] = o
	}
	return out, rows.Err()
}

// sortedIDs lists a map's keys in order, so that writes are deterministic.
func sortedIDs[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// tenure is one workload's rows in an update: the buckets they fall in and
// the sums of the settled ones.
type tenure struct {
	w          *profile.Workload
	buckets    map[int64]bool
	settledMax int64 // -1: none settled
	sums       sums
	owner      int64
}

// sums are hold rows' figures summed.
type sums struct {
	held, used, idle, cost, energy float64
	unknown                        int64 // rows without energy (counted before schema 2)
}

func (s *sums) add(o sums) {
	s.held, s.used, s.idle, s.cost, s.energy, s.unknown = s.held+o.held, s.used+o.used, s.idle+o.idle, s.cost+o.cost, s.energy+o.energy, s.unknown+o.unknown
}

func holdSums(h analyze.HoldCut) sums {
	return sums{held: h.HeldS, used: h.UsedS, idle: h.IdleS, cost: h.CostUSD, energy: h.EnergyJ}
}

// ownerRow is an owner rollup's key.
type ownerRow struct {
	bucket, owner int64
	provisional   int
}

// writeOwners keeps schema 3's per-owner rows in step with the hold rows
// the update writes: it first undoes what the last update's provisional
// rows did to the workloads' buckets (those rows are gone), then counts
// each workload's rows into its own row and its owner's rollups. It
// returns each workload's owner.
func writeOwners(ex *execer, r *rows) (map[string]int64, error) {
	ts := map[string]*tenure{}
	for _, h := range r.cuts.Holds {
		if h.Workload == nil || r.skip[h.Piece] {
			continue
		}
		b := r.bucketOf[h.Piece]
		t := ts[h.Workload.ID]
		if t == nil {
			t = &tenure{buckets: map[int64]bool{}, settledMax: -1}
			ts[h.Workload.ID] = t
		}
		t.w = h.Workload // the latest labels
		t.buckets[b] = true
		if r.provisional(h.Piece) == 0 {
			t.sums.add(holdSums(h))
			t.settledMax = max(t.settledMax, b)
		}
	}
	os := &owners{ex: ex, ids: map[[3]string]int64{}}
	ownerOf := make(map[string]int64, len(ts))
	ids := sortedIDs(ts)
	known, err := knownWorkloads(ex, ids) // before the undo: the owners of those it deletes are known too
	if err != nil {
		return nil, err
	}
	if !r.fill {
		if err := undoProvisional(ex, r.from); err != nil {
			return nil, err
		}
		for _, k := range known {
			k.deleted = !k.settledLast.Valid && k.last >= r.from
		}
	}
	for _, id := range ids {
		if err := putTenure(ex, os, ts[id], known[id], r.bucket, r.fill); err != nil {
			return nil, err
		}
		ownerOf[id] = ts[id].owner
	}
	rollup := map[ownerRow]*sums{}
	for _, h := range r.cuts.Holds {
		if r.skip[h.Piece] {
			continue
		}
		k := ownerRow{r.bucketOf[h.Piece], 0, r.provisional(h.Piece)}
		if h.Workload != nil {
			k.owner = ts[h.Workload.ID].owner
		}
		if rollup[k] == nil {
			rollup[k] = &sums{}
		}
		rollup[k].add(holdSums(h))
	}
	return ownerOf, putRollups(ex, rollup)
}

// undoProvisional takes back what the provisional rows from bucket from on
// (deleted) did to the workloads: their last buckets, and the workloads
// they alone held.
func undoProvisional(ex *execer, from int64) error {
	if err := ex.exec(`DELETE FROM seedance_workload WHERE cluster = $1 AND last_bucket >= $2 AND settled_last IS NULL`, from); err != nil {
		return err
	}
	return ex.exec(`UPDATE seedance_workload SET last_bucket = settled_last WHERE cluster = $1 AND last_bucket >= $2 AND last_bucket > settled_last`, from)
}

// putTenure counts one workload's rows of the update into its row: its
// owner (moving its history when its labels changed), first and last
// buckets, whether its buckets have a hole, and its settled sums. Rows
// that fill a gap (fill) keep a known workload's labels, which are later
// than theirs, and mark its buckets as maybe holed.
func putTenure(ex *execer, os *owners, t *tenure, k *knownWorkload, bucket int64, fill bool) error {
	if k == nil {
		k = &knownWorkload{deleted: true}
	}
	known := !k.deleted
	old, settledLast, wasGappy, name, kind, oldLabels, first := k.owner, k.settledLast, k.gappy, k.name, k.kind, k.labels, k.first
	if fill && known {
		w := *t.w
		w.Name, w.Kind = name, kind
		if err := json.Unmarshal([]byte(oldLabels), &w.Labels); err != nil {
			return fmt.Errorf("workload %s's labels: %v", w.ID, err)
		}
		t.w = &w
	}
	o, labels, err := os.ofKnown(t.w, k)
	if err != nil {
		return err
	}
	t.owner = o
	lo, hi := int64(-1), int64(-1)
	for b := range t.buckets {
		if lo < 0 || b < lo {
			lo = b
		}
		hi = max(hi, b)
	}
	gappy := int64(len(t.buckets)) != (hi-lo)/bucket+1 || fill
	if known {
		gappy = gappy || wasGappy == 1 || settledLast.Valid && lo > settledLast.Int64+bucket
		if old != o {
			if err := moveOwner(ex, t.w.ID, old, o, first); err != nil {
				return err
			}
		}
	}
	var settled any
	if t.settledMax >= 0 {
		settled = t.settledMax
	}
	s := t.sums
	return ex.add(`INSERT INTO seedance_workload AS o (cluster, id, name, kind, labels, first_bucket, last_bucket, owner, settled_last, gappy, held_s, used_s, idle_s, cost_usd, energy_j, energy_unknown)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
ON CONFLICT (cluster, id) DO UPDATE SET name = excluded.name, kind = excluded.kind, labels = excluded.labels, owner = excluded.owner, gappy = excluded.gappy,
first_bucket = CASE WHEN o.first_bucket < excluded.first_bucket THEN o.first_bucket ELSE excluded.first_bucket END,
last_bucket = CASE WHEN o.last_bucket > excluded.last_bucket THEN o.last_bucket ELSE excluded.last_bucket END,
settled_last = CASE WHEN excluded.settled_last IS NULL OR o.settled_last > excluded.settled_last THEN o.settled_last ELSE excluded.settled_last END,
held_s = o.held_s + excluded.held_s, used_s = o.used_s + excluded.used_s, idle_s = o.idle_s + excluded.idle_s,
cost_usd = o.cost_usd + excluded.cost_usd, energy_j = o.energy_j + excluded.energy_j, energy_unknown = o.energy_unknown + excluded.energy_unknown`,
		t.w.ID, t.w.Name, t.w.Kind, labels, lo, hi, o, settled, b2i(gappy), s.held, s.used, s.idle, s.cost, s.energy, s.unknown)
}

// moveOwner moves a workload's settled history from owner from to owner
// to (its labels changed: a report groups a workload by its latest), and
// its charges' rows, provisional ones too. first is its first bucket: the
// rows are found from there on, by the tables' keys (cluster, bucket or
// day first), not among all of the cluster's.
func moveOwner(ex *execer, id string, from, to, first int64) error {
	if err := ex.exec(`UPDATE seedance_charge_day SET owner = $3 WHERE cluster = $1 AND day >= $4 AND workload = $2`, id, to, day(first)); err != nil {
		return err
	}
	for _, t := range []keyedTable{{"seedance_hold", "bucket"}, {"seedance_hold_day", "day"}} {
		table, col, rollup := t.table, t.col, "seedance_owner_hold"
		if col == "day" {
			rollup = "seedance_owner_hold_day"
		}
		moved := map[ownerRow]*sums{}
		rows, err := ex.query(`SELECT `+col+`, SUM(held_s), SUM(used_s), SUM(idle_s), SUM(cost_usd), COALESCE(SUM(energy_j), 0),
SUM(CASE WHEN energy_j IS NULL THEN 1 ELSE 0 END) FROM `+table+` WHERE cluster = $1 AND `+col+` >= $3 AND workload = $2 AND provisional = 0 GROUP BY `+col,
			id, t.from(first))
		if err != nil {
			return err
		}
		for rows.Next() {
			var b int64
			var s sums
			if err := rows.Scan(&b, &s.held, &s.used, &s.idle, &s.cost, &s.energy, &s.unknown); err != nil {
				rows.Close()
				return err
			}
			moved[ownerRow{b, to, 0}] = &s
			neg := sums{-s.held, -s.used, -s.idle, -s.cost, -s.energy, -s.unknown}
			moved[ownerRow{b, from, 0}] = &neg
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if err := putRollup(ex, rollup, col, moved); err != nil {
			return err
		}
	}
	return nil
}

// putRollups adds the update's per-owner sums to the hourly and daily
// rollups.
func putRollups(ex *execer, hourly map[ownerRow]*sums) error {
	daily := map[ownerRow]*sums{}
	for k, s := range hourly {
		d := ownerRow{day(k.bucket), k.owner, k.provisional}
		if k.provisional == 1 {
			continue // the daily rollups hold settled rows only (migration12)
		}
		if daily[d] == nil {
			daily[d] = &sums{}
		}
		daily[d].add(*s)
	}
	if err := putRollup(ex, "seedance_owner_hold", "bucket", hourly); err != nil {
		return err
	}
	return putRollup(ex, "seedance_owner_hold_day", "day", daily)
}

func putRollup(ex *execer, table, col string, rows map[ownerRow]*sums) error {
	keys := make([]ownerRow, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		return a.bucket < b.bucket || a.bucket == b.bucket && (a.owner < b.owner || a.owner == b.owner && a.provisional < b.provisional)
	})
	for _, k := range keys {
		s := rows[k]
		err := ex.add(`INSERT INTO `+table+` AS o (cluster, `+col+`, owner, provisional, held_s, used_s, idle_s, cost_usd, energy_j, energy_unknown)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
ON CONFLICT (cluster, `+col+`, owner, provisional) DO UPDATE SET held_s = o.held_s + excluded.held_s, used_s = o.used_s + excluded.used_s,
idle_s = o.idle_s + excluded.idle_s, cost_usd = o.cost_usd + excluded.cost_usd, energy_j = o.energy_j + excluded.energy_j,
energy_unknown = o.energy_unknown + excluded.energy_unknown`,
			k.bucket, k.owner, k.provisional, s.held, s.used, s.idle, s.cost, s.energy, s.unknown)
		if err != nil {
			return err
		}
	}
	return nil
}
