package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/seedance/seedance/reclaim"
)

// migration7 adds reclaim's state (docs/reclaim.md): each idle episode of
// a target, the owners' keeps and an audit line per notice and action. At
// most one episode of a target is open (the partial unique index), so
// that two replicas on one database never begin two; a state change is
// conditional on the state and update time it read, so that they never
// act twice.
const migration7 = `
CREATE TABLE seedance_reclaim_episode (cluster TEXT NOT NULL, target TEXT NOT NULL, idle_since_ms BIGINT NOT NULL,
	state TEXT NOT NULL, notices BIGINT NOT NULL, attempts BIGINT NOT NULL, last_error TEXT NOT NULL,
	noticed_ms BIGINT NOT NULL, deadline_ms BIGINT NOT NULL, acted_ms BIGINT NOT NULL, restored_ms BIGINT NOT NULL,
	action TEXT NOT NULL, previous TEXT NOT NULL, gpus BIGINT NOT NULL, model TEXT NOT NULL,
	idle_gpu_hours DOUBLE PRECISION NOT NULL, usd_so_far DOUBLE PRECISION NOT NULL, usd_per_hour DOUBLE PRECISION NOT NULL,
	labels TEXT NOT NULL, updated_ms BIGINT NOT NULL, PRIMARY KEY (cluster, target, idle_since_ms));
CREATE UNIQUE INDEX seedance_reclaim_open ON seedance_reclaim_episode (cluster, target) WHERE state IN ('noticing', 'noticed', 'acting');
CREATE TABLE seedance_reclaim_keep (cluster TEXT NOT NULL, target TEXT NOT NULL, until_ms BIGINT NOT NULL,
	reason TEXT NOT NULL, by_whom TEXT NOT NULL, at_ms BIGINT NOT NULL, PRIMARY KEY (cluster, target));
CREATE TABLE seedance_reclaim_audit (at_ms BIGINT NOT NULL, cluster TEXT NOT NULL, target TEXT NOT NULL,
	event TEXT NOT NULL, line TEXT NOT NULL);
CREATE INDEX seedance_reclaim_audit_at ON seedance_reclaim_audit (cluster, event, at_ms)
`

// ErrLost marks a state change another writer made first: the episode is
// not what this pass read, and the pass leaves it alone.
var ErrLost = errors.New("another reclaim pass changed this episode first")

const episodeColumns = `cluster, target, idle_since_ms, state, notices, attempts, last_error, noticed_ms, deadline_ms,
acted_ms, restored_ms, action, previous, gpus, model, idle_gpu_hours, usd_so_far, usd_per_hour, labels, updated_ms`

// Cluster is the cluster this ledger was opened for.
func (l *Ledger) Cluster() string { return l.cluster }

// Episodes are the cluster's episodes that are open, acted or restored
// (until compaction folds them: Folded), and those that changed at or
// after since.
func (l *Ledger) Episodes(ctx context.Context, since time.Time) ([]reclaim.Episode, error) {
	return queryEpisodes(ctx, l.db, `WHERE cluster = $1 AND (state IN ('noticing', 'noticed', 'acting', 'acted', 'restored') OR updated_ms >= $2) ORDER BY target, idle_since_ms`,
		l.cluster, since.UnixMilli())
}

// querier is a database or a transaction.
type querier interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

// queryEpisodes are the episodes the clause (WHERE …) selects.
func queryEpisodes(ctx context.Context, db querier, clause string, args ...any) ([]reclaim.Episode, error) {
	rows, err := db.QueryContext(ctx, `SELECT `+episodeColumns+` FROM seedance_reclaim_episode `+clause, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []reclaim.Episode
	for rows.Next() {
		ep, err := scanEpisode(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, ep)
	}
	return out, rows.Err()
}

// ActedBetween are the episodes of the clusters (all when none) acted on
// before to and not restored by from: what reclaim freed within a
// report's window.
func (l *Ledger) ActedBetween(ctx context.Context, clusters []string, from, to time.Time) ([]reclaim.Episode, error) {
	eps, err := queryEpisodes(ctx, l.db, `WHERE acted_ms > 0 AND acted_ms < $1 AND (restored_ms = 0 OR restored_ms > $2) ORDER BY cluster, target, idle_since_ms`,
		to.UnixMilli(), from.UnixMilli())
	if err != nil || len(clusters) == 0 {
		return eps, err
	}
	return slices.DeleteFunc(eps, func(ep reclaim.Episode) bool { return !slices.Contains(clusters, ep.Cluster) }), nil
}

func scanEpisode(rows *sql.Rows) (reclaim.Episode, error) {
	var ep reclaim.Episode
	var target, labels string
	var since, noticed, deadline, acted, restored, updated int64
	if err := rows.Scan(&ep.Cluster, &target, &since, &ep.State, &ep.Notices, &ep.Attempts, &ep.LastError, &noticed, &deadline,
		&acted, &restored, &ep.Action, &ep.Previous, &ep.GPUs, &ep.Model, &ep.IdleGPUHours, &ep.USDSoFar, &ep.USDPerHour,
		&labels, &updated); err != nil {
		return ep, err
	}
	t, err := reclaim.ParseStored(target)
	if err != nil {
		return ep, fmt.Errorf("reclaim episode of %q: %v", target, err)
	}
	ep.Target = t
	ep.IdleSince, ep.NoticedAt, ep.Deadline = msTime(since), msTime(noticed), msTime(deadline)
	ep.ActedAt, ep.RestoredAt, ep.Updated = msTime(acted), msTime(restored), msTime(updated)
	if err := json.Unmarshal([]byte(labels), &ep.Labels); err != nil {
		return ep, fmt.Errorf("reclaim episode of %q: its labels: %v", target, err)
	}
	return ep, nil
}

// msTime is a stored time (0: none).
func msTime(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

// timeMS is a time to store (none: 0).
func timeMS(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// BeginEpisode records a new episode; ErrLost when the target already has
// an open one (another pass began it).
func (l *Ledger) BeginEpisode(ctx context.Context, ep reclaim.Episode) error {
	labels, err := json.Marshal(ep.Labels)
	if err != nil {
		return err
	}
	_, err = l.db.ExecContext(ctx, `INSERT INTO seedance_reclaim_episode (`+episodeColumns+`)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)`,
		l.cluster, ep.Target.Stored(), ep.IdleSince.UnixMilli(), ep.State, ep.Notices, ep.Attempts, ep.LastError,
		timeMS(ep.NoticedAt), timeMS(ep.Deadline), timeMS(ep.ActedAt), timeMS(ep.RestoredAt), ep.Action, ep.Previous,
		ep.GPUs, ep.Model, ep.IdleGPUHours, ep.USDSoFar, ep.USDPerHour, string(labels), timeMS(ep.Updated))
	if err != nil && uniqueViolation(err) {
		return ErrLost
	}
	return err
}

func uniqueViolation(err error) bool {
	s := err.Error()
	return strings.Contains(s, "UNIQUE constraint") || strings.Contains(s, "SQLSTATE 23505")
}

// UpdateEpisode writes ep over the episode as it was read (was): the
// change is made only when the stored state and update time are still
// was's, else ErrLost.
func (l *Ledger) UpdateEpisode(ctx context.Context, was, ep reclaim.Episode) error {
	labels, err := json.Marshal(ep.Labels)
	if err != nil {
		return err
	}
	res, err := l.db.ExecContext(ctx, `UPDATE seedance_reclaim_episode SET state = $4, notices = $5, attempts = $6,
last_error = $7, noticed_ms = $8, deadline_ms = $9, acted_ms = $10, restored_ms = $11, action = $12, previous = $13,
gpus = $14, model = $15, idle_gpu_hours = $16, usd_so_far = $17, usd_per_hour = $18, labels = $19, updated_ms = $20
WHERE cluster = $1 AND target = $2 AND idle_since_ms = $3 AND state = $21 AND updated_ms = $22`,
		l.cluster, was.Target.Stored(), was.IdleSince.UnixMilli(), ep.State, ep.Notices, ep.Attempts, ep.LastError,
		timeMS(ep.NoticedAt), timeMS(ep.Deadline), timeMS(ep.ActedAt), timeMS(ep.RestoredAt), ep.Action, ep.Previous,
		ep.GPUs, ep.Model, ep.IdleGPUHours, ep.USDSoFar, ep.USDPerHour, string(labels), timeMS(ep.Updated),
		was.State, timeMS(was.Updated))
	if err != nil {
		if uniqueViolation(err) {
			return ErrLost
		}
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n != 1 {
		return ErrLost
	}
	return nil
}

// SetKeep records an owner's keep of a target (replacing an earlier one).
func (l *Ledger) SetKeep(ctx context.Context, k reclaim.Keep) error {
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, `DELETE FROM seedance_reclaim_keep WHERE cluster = $1 AND target = $2`, l.cluster, k.Target.Stored()); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO seedance_reclaim_keep (cluster, target, until_ms, reason, by_whom, at_ms) VALUES ($1, $2, $3, $4, $5, $6)`,
		l.cluster, k.Target.Stored(), k.Until.UnixMilli(), k.Reason, k.By, k.At.UnixMilli()); err != nil {
		return err
	}
	return tx.Commit()
}

// Keeps are the cluster's keeps in force at now, by target.
func (l *Ledger) Keeps(ctx context.Context, now time.Time) (map[reclaim.Target]reclaim.Keep, error) {
	rows, err := l.db.QueryContext(ctx, `SELECT target, until_ms, reason, by_whom, at_ms FROM seedance_reclaim_keep WHERE cluster = $1 AND until_ms > $2`,
		l.cluster, now.UnixMilli())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[reclaim.Target]reclaim.Keep{}
	for rows.Next() {
		var target string
		var until, at int64
		k := reclaim.Keep{Cluster: l.cluster}
		if err := rows.Scan(&target, &until, &k.Reason, &k.By, &at); err != nil {
			return nil, err
		}
		if k.Target, err = reclaim.ParseStored(target); err != nil {
			return nil, err
		}
		k.Until, k.At = msTime(until), msTime(at)
		out[k.Target] = k
	}
	return out, rows.Err()
}

// Audit records one line of what reclaim did (a notice, an action, a
// refusal), with its figures and command.
func (l *Ledger) Audit(ctx context.Context, at time.Time, t reclaim.Target, event, line string) error {
	_, err := l.db.ExecContext(ctx, `INSERT INTO seedance_reclaim_audit (at_ms, cluster, target, event, line) VALUES ($1, $2, $3, $4, $5)`,
		at.UnixMilli(), l.cluster, t.Stored(), event, line)
	return err
}

// AuditCount counts the cluster's audit lines of an event since a time
// (the actions of the last hour, for the hourly cap).
func (l *Ledger) AuditCount(ctx context.Context, event string, since time.Time) (int, error) {
	var n int
	err := l.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM seedance_reclaim_audit WHERE cluster = $1 AND event = $2 AND at_ms >= $3`,
		l.cluster, event, since.UnixMilli()).Scan(&n)
	return n, err
}

// Compact deletes the cluster's finished episodes, expired keeps and audit
// lines older than before, so that reclaim's tables stay bounded.
func (l *Ledger) Compact(ctx context.Context, before time.Time) error {
	ms := before.UnixMilli()
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if err := l.foldRestored(ctx, tx, ms); err != nil {
		return err
	}
	for _, q := range []string{
		`DELETE FROM seedance_reclaim_episode WHERE cluster = $1 AND state IN ('dropped', 'failed', 'kept', 'restored') AND updated_ms < $2`,
		`DELETE FROM seedance_reclaim_keep WHERE cluster = $1 AND until_ms < $2`,
		`DELETE FROM seedance_reclaim_audit WHERE cluster = $1 AND at_ms < $2`,
	} {
		if _, err := tx.ExecContext(ctx, q, l.cluster, ms); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// foldRestored adds what the restored episodes compaction deletes freed to
// the cluster's folded savings (seedance_meta), so that what reclaim
// reports freed never goes down: /metrics' counters.
func (l *Ledger) foldRestored(ctx context.Context, tx *sql.Tx, before int64) error {
	gone, err := queryEpisodes(ctx, tx, `WHERE cluster = $1 AND state = 'restored' AND updated_ms < $2`, l.cluster, before)
	if err != nil || len(gone) == 0 {
		return err
	}
	folded, err := readFolded(ctx, tx, l.cluster)
	if err != nil {
		return err
	}
	far := time.Unix(1<<40, 0) // each up to its restore
	b, err := json.Marshal(folded.Plus(reclaim.Saved(gone, far)))
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO seedance_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, foldedKey(l.cluster), string(b))
	return err
}

// Folded is what the cluster's compacted episodes freed: with what the
// episodes still held freed (reclaim.Saved), what reclaim freed in all.
func (l *Ledger) Folded(ctx context.Context) (reclaim.Savings, error) {
	tx, err := l.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return reclaim.Savings{}, err
	}
	defer func() { _ = tx.Rollback() }()
	return readFolded(ctx, tx, l.cluster)
}

func readFolded(ctx context.Context, tx *sql.Tx, cluster string) (reclaim.Savings, error) {
	var v string
	err := tx.QueryRowContext(ctx, `SELECT value FROM seedance_meta WHERE key = $1`, foldedKey(cluster)).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return reclaim.Savings{ByTeam: map[string]reclaim.Savings{}}, nil
	}
	var s reclaim.Savings
	if err == nil {
		err = json.Unmarshal([]byte(v), &s)
	}
	return s, err
}

func foldedKey(cluster string) string { return "reclaim.folded/" + cluster }
