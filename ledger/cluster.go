package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/seedance/seedance/profile"
)

// Schema 4 keys every row by its cluster, so that one ledger holds many
// clusters, each with its own carried state and data end. A table cannot
// change its primary key in place in SQLite, so migration 4 makes each
// table anew with the key and copies the rows into it, under the name
// the migrating update was given (--cluster, else DefaultCluster).

// table4 is one table of schema 4: its columns after cluster, its key
// after cluster, and its indexes.
type table4 struct {
	name, cols, key string
	indexes         []string
}

// tables4 are the tables that migration 4 makes anew; the columns' types
// are those both databases read alike.
var tables4 = []table4{
	{name: "seedance_state", cols: `first_ms BIGINT NOT NULL, watermark_ms BIGINT NOT NULL, data_end_ms BIGINT NOT NULL,
	bucket_s BIGINT NOT NULL, params TEXT NOT NULL, tail BYTEA NOT NULL, updates BIGINT NOT NULL`},
	{name: "seedance_gpu", cols: `bucket BIGINT NOT NULL, node TEXT NOT NULL, model TEXT NOT NULL, provisional INTEGER NOT NULL,
	observed_s DOUBLE PRECISION NOT NULL, idle_s DOUBLE PRECISION NOT NULL,
	util_s DOUBLE PRECISION NOT NULL, util_covered_s DOUBLE PRECISION NOT NULL,
	cost_usd DOUBLE PRECISION NOT NULL, energy_j DOUBLE PRECISION NOT NULL, energy_measured INTEGER NOT NULL,
	price_usd_per_hour DOUBLE PRECISION NOT NULL, price_source TEXT NOT NULL`, key: "bucket, node, model, provisional"},
	{name: "seedance_hold", cols: `bucket BIGINT NOT NULL, node TEXT NOT NULL, model TEXT NOT NULL, workload TEXT NOT NULL, provisional INTEGER NOT NULL,
	held_s DOUBLE PRECISION NOT NULL, used_s DOUBLE PRECISION NOT NULL, idle_s DOUBLE PRECISION NOT NULL,
	cost_usd DOUBLE PRECISION NOT NULL, energy_j DOUBLE PRECISION`, key: "bucket, node, model, workload, provisional"},
	{name: "seedance_workload", cols: `id TEXT NOT NULL, name TEXT NOT NULL, kind TEXT NOT NULL, labels TEXT NOT NULL,
	first_bucket BIGINT NOT NULL, last_bucket BIGINT NOT NULL, owner BIGINT NOT NULL, settled_last BIGINT, gappy INTEGER NOT NULL,
	held_s DOUBLE PRECISION NOT NULL, used_s DOUBLE PRECISION NOT NULL, idle_s DOUBLE PRECISION NOT NULL,
	cost_usd DOUBLE PRECISION NOT NULL, energy_j DOUBLE PRECISION NOT NULL, energy_unknown BIGINT NOT NULL`, key: "id",
		indexes: []string{"seedance_workload_last ON seedance_workload (last_bucket)"}},
	{name: "seedance_gpu_day", cols: `day BIGINT NOT NULL, node TEXT NOT NULL, model TEXT NOT NULL, price_usd_per_hour DOUBLE PRECISION NOT NULL,
	price_source TEXT NOT NULL, provisional INTEGER NOT NULL,
	observed_s DOUBLE PRECISION NOT NULL, idle_s DOUBLE PRECISION NOT NULL,
	util_s DOUBLE PRECISION NOT NULL, util_covered_s DOUBLE PRECISION NOT NULL,
	cost_usd DOUBLE PRECISION NOT NULL, energy_j DOUBLE PRECISION NOT NULL, energy_measured INTEGER NOT NULL`,
		key: "day, node, model, price_usd_per_hour, price_source, provisional"},
	{name: "seedance_hold_day", cols: `day BIGINT NOT NULL, workload TEXT NOT NULL, provisional INTEGER NOT NULL,
	held_s DOUBLE PRECISION NOT NULL, used_s DOUBLE PRECISION NOT NULL, idle_s DOUBLE PRECISION NOT NULL,
	cost_usd DOUBLE PRECISION NOT NULL, energy_j DOUBLE PRECISION`, key: "day, workload, provisional",
		indexes: []string{"seedance_hold_day_workload ON seedance_hold_day (workload)"}},
	{name: "seedance_owner_hold", cols: ownerSums("bucket"), key: "bucket, owner, provisional"},
	{name: "seedance_owner_hold_day", cols: ownerSums("day"), key: "day, owner, provisional"},
}

func ownerSums(col string) string {
	return col + ` BIGINT NOT NULL, owner BIGINT NOT NULL, provisional INTEGER NOT NULL,
	held_s DOUBLE PRECISION NOT NULL, used_s DOUBLE PRECISION NOT NULL, idle_s DOUBLE PRECISION NOT NULL,
	cost_usd DOUBLE PRECISION NOT NULL, energy_j DOUBLE PRECISION NOT NULL, energy_unknown BIGINT NOT NULL`
}

// names are the table's column names after cluster.
func (t table4) names() string {
	var out []string
	for _, c := range strings.Split(t.cols, ",") {
		if f := strings.Fields(c); len(f) > 0 {
			out = append(out, f[0])
		}
	}
	return strings.Join(out, ", ")
}

// migrate4 makes each table anew with its cluster key and copies its rows
// into it, all of them the cluster's.
func migrate4(ctx context.Context, tx *sql.Tx, cluster string) error {
	for _, t := range tables4 {
		key := "cluster"
		if t.key != "" {
			key += ", " + t.key
		}
		cols := t.names()
		stmts := []string{
			`CREATE TABLE ` + t.name + `_4 (cluster TEXT NOT NULL, ` + t.cols + `, PRIMARY KEY (` + key + `))`,
			`INSERT INTO ` + t.name + `_4 (cluster, ` + cols + `) SELECT $1, ` + cols + ` FROM ` + t.name,
			`DROP TABLE ` + t.name,
			`ALTER TABLE ` + t.name + `_4 RENAME TO ` + t.name,
		}
		for _, ix := range t.indexes {
			stmts = append(stmts, `CREATE INDEX `+ix)
		}
		for _, stmt := range stmts {
			var args []any
			if strings.Contains(stmt, "$1") {
				args = []any{cluster}
			}
			if _, err := tx.ExecContext(ctx, stmt, args...); err != nil {
				return fmt.Errorf("%s: %v", t.name, err)
			}
		}
	}
	_, err := tx.ExecContext(ctx, noteTable)
	return err
}

// noteTable keeps, per cluster and bucket, the warnings of the updates
// that counted it (a source's notes, prices that matched no model), for
// a report over the bucket to repeat.
const noteTable = `CREATE TABLE seedance_note (cluster TEXT NOT NULL, bucket BIGINT NOT NULL, note TEXT NOT NULL, PRIMARY KEY (cluster, bucket, note))`

// CheckCluster checks a cluster's name: 1 to 253 letters, digits and
// . _ - : / (a Kubernetes context's or a Prometheus label's value).
func CheckCluster(name string) error {
	ok := len(name) > 0 && len(name) <= 253
	for _, r := range name {
		ok = ok && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-:/", r))
	}
	if !ok {
		return fmt.Errorf("%w: cluster name %q: use 1 to 253 letters, digits and . _ - : /", ErrLedger, name)
	}
	return nil
}

// clusterOf is the cluster an update counts its inputs as: the one it was
// given (Options.Cluster), else the one every input names (the source's:
// Prometheus' cluster label), else the ledger's only cluster, else
// DefaultCluster. A ledger that holds several clusters, none of them
// DefaultCluster, needs a name: counting into a new "default" beside them
// is refused.
func (l *Ledger) clusterOf(ctx context.Context, tx *sql.Tx, inputs []*profile.Profile) (string, error) {
	if l.named {
		return l.cluster, nil
	}
	named := ""
	for i, p := range inputs {
		if i > 0 && p.Cluster != named {
			named = ""
			break
		}
		named = p.Cluster
	}
	if named != "" {
		return named, CheckCluster(named)
	}
	var have []string
	err := scanRows(ctx, tx, func(rows *sql.Rows) error {
		var c string
		err := rows.Scan(&c)
		have = append(have, c)
		return err
	}, `SELECT cluster FROM seedance_state ORDER BY cluster`)
	switch {
	case err != nil:
		return "", err
	case len(have) == 0 || slices.Contains(have, DefaultCluster):
		return DefaultCluster, nil
	case len(have) == 1:
		return have[0], nil
	}
	return "", fmt.Errorf("%w: it holds clusters %s, and this update names none: give its cluster with --cluster (ledger.cluster)", ErrLedger, few(have))
}

// namedBy says whether an update of the inputs names its cluster: it was
// given one, or every input names the same.
func (l *Ledger) namedBy(inputs []*profile.Profile) bool {
	if l.named {
		return true
	}
	for i, p := range inputs {
		if p.Cluster == "" || i > 0 && p.Cluster != inputs[0].Cluster {
			return false
		}
	}
	return len(inputs) > 0
}

// sameNodesElsewhere refuses the first update of a named cluster when
// every node of its inputs is counted already, for hours the inputs
// cover, as DefaultCluster's: the same cluster under a new name (a ledger
// migrated without --cluster, then updated with one), which would count
// it twice. Two named clusters may share node names (kubeadm's defaults).
func sameNodesElsewhere(ctx context.Context, tx *sql.Tx, st *state, inputs []*profile.Profile) error {
	if !st.fresh || len(inputs) == 0 || st.cluster == DefaultCluster {
		return nil
	}
	mine := map[string]bool{}
	for _, p := range inputs {
		for _, n := range p.Nodes {
			mine[n.Name] = true
		}
	}
	lo, hi := profile.Span(inputs)
	others := map[string]map[string]bool{}
	err := scanRows(ctx, tx, func(rows *sql.Rows) error {
		var c, n string
		err := rows.Scan(&c, &n)
		if others[c] == nil {
			others[c] = map[string]bool{}
		}
		others[c][n] = true
		return err
	}, `SELECT DISTINCT cluster, node FROM seedance_gpu WHERE cluster = $1 AND bucket >= $2 AND bucket < $3 AND observed_s > 0`,
		DefaultCluster, lo.Truncate(st.bucket).Unix(), hi.Unix()+1)
	if err != nil {
		return err
	}
	for _, c := range sortedIDs(others) {
		all := len(mine) > 0
		for n := range mine {
			all = all && others[c][n]
		}
		if all {
			return fmt.Errorf("%w: cluster %s is new, and every node of its input is counted already for these hours as cluster %s: "+
				"the same cluster under a new name? rename it (seedance ledger rename-cluster %s %s), or count it as --cluster %s",
				ErrLedger, st.cluster, c, c, st.cluster, c)
		}
	}
	return nil
}

// RenameCluster gives a cluster's rows and state another name, in one
// transaction under the write lock; the new name must be free.
func (l *Ledger) RenameCluster(ctx context.Context, from, to string) error {
	if err := CheckCluster(to); err != nil {
		return err
	}
	if l.readOnly {
		return fmt.Errorf("%w: opened for reading", ErrLedger)
	}
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrLedger, err)
	}
	defer func() { _ = tx.Rollback() }()
	if err := l.lock(ctx, tx); err != nil {
		return err
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM seedance_state WHERE cluster = $1`, to).Scan(&n); err != nil || n > 0 {
		return fmt.Errorf("%w: cannot rename cluster %s to %s: a cluster %s exists (%v)", ErrLedger, from, to, to, err)
	}
	res, err := tx.ExecContext(ctx, `UPDATE seedance_state SET cluster = $2 WHERE cluster = $1`, from, to)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrLedger, err)
	}
	if k, _ := res.RowsAffected(); k != 1 {
		return fmt.Errorf("%w: no cluster %q in it", ErrLedger, from)
	}
	for _, t := range tables4[1:] {
		if _, err := tx.ExecContext(ctx, `UPDATE `+t.name+` SET cluster = $2 WHERE cluster = $1`, from, to); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrLedger, t.name, err)
		}
	}
	for _, t := range []string{"seedance_note", "seedance_charge_day", "seedance_cluster_gpu", "seedance_cluster_origin", "seedance_work", "seedance_work_day", "seedance_queue", "seedance_queue_member"} {
		if _, err := tx.ExecContext(ctx, `UPDATE `+t+` SET cluster = $2 WHERE cluster = $1`, from, to); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrLedger, t, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%w: commit: %v", ErrLedger, err)
	}
	return nil
}
