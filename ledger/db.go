package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	_ "modernc.org/sqlite"             // database/sql driver "sqlite"

	"github.com/seedance/seedance/internal/fsutil"
)

// SchemaVersion is the version of the ledger's tables this build writes;
// Open migrates an older ledger to it, in one transaction.
const SchemaVersion = 15

// ErrLedger marks a ledger that cannot be used as asked: a newer schema,
// other analysis settings, a DSN that names no database.
var ErrLedger = errors.New("ledger")

// Ledger is an open ledger.
type Ledger struct {
	db       *sql.DB
	dsn      string
	postgres bool
	readOnly bool
	// cluster is the cluster a writer counts (Options.Cluster, else
	// DefaultCluster); named says it was given.
	cluster string
	named   bool
}

// Options say how a ledger is opened.
type Options struct {
	// Cluster names the cluster an update counts, and the cluster a
	// ledger of schema 3 or older migrates its rows to; "" is
	// DefaultCluster.
	Cluster string
	// ReadOnly opens the ledger for reports: nothing is written (no
	// lock, no migration, no file created); a path that does not exist is
	// an error naming it.
	ReadOnly bool
	// Wait bounds how long a writer waits for another's lock on SQLite
	// (0: DefaultWait).
	Wait time.Duration
	// Unchecked skips a reader's quick check of the ledger's pages
	// (quickCheck): for ledger check --integrity, which runs the full one.
	Unchecked bool
}

// DefaultCluster is the cluster of a ledger that was never told one.
const DefaultCluster = "default"

// DefaultWait is how long an update waits for another update's lock on
// SQLite before it fails, saying so.
const DefaultWait = 10 * time.Minute

// migrations[i] brings a ledger of schema i to schema i+1. Schema 2 adds
// each workload's energy and the daily rollups (seedance_gpu_day,
// seedance_hold_day), which a report reads for the whole days of its
// window, so that a month answers in a second. The types are
// those both databases read alike: BIGINT, DOUBLE PRECISION, TEXT, BYTEA.
var migrations = []string{`
CREATE TABLE seedance_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE seedance_state (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	first_ms BIGINT NOT NULL, watermark_ms BIGINT NOT NULL, data_end_ms BIGINT NOT NULL,
	bucket_s BIGINT NOT NULL, params TEXT NOT NULL, tail BYTEA NOT NULL, updates BIGINT NOT NULL);
CREATE TABLE seedance_gpu (
	bucket BIGINT NOT NULL, node TEXT NOT NULL, model TEXT NOT NULL, provisional INTEGER NOT NULL,
	observed_s DOUBLE PRECISION NOT NULL, idle_s DOUBLE PRECISION NOT NULL,
	util_s DOUBLE PRECISION NOT NULL, util_covered_s DOUBLE PRECISION NOT NULL,
	cost_usd DOUBLE PRECISION NOT NULL, energy_j DOUBLE PRECISION NOT NULL, energy_measured INTEGER NOT NULL,
	price_usd_per_hour DOUBLE PRECISION NOT NULL, price_source TEXT NOT NULL,
	PRIMARY KEY (bucket, node, model, provisional));
CREATE TABLE seedance_hold (
	bucket BIGINT NOT NULL, node TEXT NOT NULL, model TEXT NOT NULL, workload TEXT NOT NULL, provisional INTEGER NOT NULL,
	held_s DOUBLE PRECISION NOT NULL, used_s DOUBLE PRECISION NOT NULL, idle_s DOUBLE PRECISION NOT NULL,
	cost_usd DOUBLE PRECISION NOT NULL,
	PRIMARY KEY (bucket, node, model, workload, provisional));
CREATE TABLE seedance_workload (
	id TEXT PRIMARY KEY, name TEXT NOT NULL, kind TEXT NOT NULL, labels TEXT NOT NULL,
	first_bucket BIGINT NOT NULL, last_bucket BIGINT NOT NULL);
`, `
ALTER TABLE seedance_hold ADD COLUMN energy_j DOUBLE PRECISION;
CREATE TABLE seedance_gpu_day (
	day BIGINT NOT NULL, node TEXT NOT NULL, model TEXT NOT NULL, price_usd_per_hour DOUBLE PRECISION NOT NULL, price_source TEXT NOT NULL,
	provisional INTEGER NOT NULL,
	observed_s DOUBLE PRECISION NOT NULL, idle_s DOUBLE PRECISION NOT NULL,
	util_s DOUBLE PRECISION NOT NULL, util_covered_s DOUBLE PRECISION NOT NULL,
	cost_usd DOUBLE PRECISION NOT NULL, energy_j DOUBLE PRECISION NOT NULL, energy_measured INTEGER NOT NULL,
	PRIMARY KEY (day, node, model, price_usd_per_hour, price_source, provisional));
CREATE TABLE seedance_hold_day (
	day BIGINT NOT NULL, workload TEXT NOT NULL, provisional INTEGER NOT NULL,
	held_s DOUBLE PRECISION NOT NULL, used_s DOUBLE PRECISION NOT NULL, idle_s DOUBLE PRECISION NOT NULL,
	cost_usd DOUBLE PRECISION NOT NULL, energy_j DOUBLE PRECISION,
	PRIMARY KEY (day, workload, provisional));
CREATE INDEX seedance_hold_day_workload ON seedance_hold_day (workload);
CREATE INDEX seedance_workload_last ON seedance_workload (last_bucket);
` + rollups, schema3, "", migration5, migration6, migration7, migration8, migration9, migration10, migration11, migration12, migration13, migration14, migration15}

// postgresOnly[i], when set, runs after migrations[i] in PostgreSQL.
var postgresOnly = map[int]string{12: migration13Postgres}

// backfills[i], when set, runs after migrations[i], in its transaction;
// cluster is the name the ledger's rows take when a migration adds the
// cluster key (schema 4).
var backfills = map[int]func(ctx context.Context, tx *sql.Tx, cluster string) error{
	2: func(ctx context.Context, tx *sql.Tx, _ string) error { return backfill3(ctx, tx) },
	3: migrate4,
	5: fillIdentity,
}

// rollups fills the daily rollups from the hourly rows.
const rollups = `
INSERT INTO seedance_gpu_day SELECT bucket - bucket % 86400, node, model, price_usd_per_hour, price_source, provisional,
	SUM(observed_s), SUM(idle_s), SUM(util_s), SUM(util_covered_s), SUM(cost_usd), SUM(energy_j), MAX(energy_measured)
	FROM seedance_gpu GROUP BY bucket - bucket % 86400, node, model, price_usd_per_hour, price_source, provisional;
INSERT INTO seedance_hold_day SELECT bucket - bucket % 86400, workload, provisional,
	SUM(held_s), SUM(used_s), SUM(idle_s), SUM(cost_usd), SUM(energy_j)
	FROM seedance_hold GROUP BY bucket - bucket % 86400, workload, provisional;
`

// Open opens the ledger at dsn, a file path (SQLite, created when absent)
// or a postgres:// URL. A writer migrates it to SchemaVersion; a reader
// (o.ReadOnly) writes nothing and refuses a ledger of another schema.
func Open(ctx context.Context, dsn string, o Options) (*Ledger, error) {
	l := &Ledger{dsn: dsn, readOnly: o.ReadOnly, cluster: o.Cluster, named: o.Cluster != ""}
	if l.cluster == "" {
		l.cluster = DefaultCluster
	}
	if err := CheckCluster(l.cluster); err != nil {
		return nil, err
	}
	var err error
	switch {
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		l.postgres = true
		l.db, err = sql.Open("pgx", dsn)
	case dsn == "" || strings.Contains(dsn, "://"):
		return nil, fmt.Errorf("%w: %q is neither a file path nor a postgres:// URL", ErrLedger, redact(dsn))
	default:
		l.db, err = openSQLite(dsn, o)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: open %s: %v", ErrLedger, redact(dsn), err)
	}
	if o.ReadOnly {
		err = l.checkVersion(ctx)
		if err == nil && !o.Unchecked {
			err = l.quickCheck(ctx)
		}
	} else {
		err = l.migrate(ctx)
	}
	if err != nil {
		l.db.Close()
		if errors.Is(err, ErrCorrupt) {
			return nil, fmt.Errorf("%w: %s: %w", ErrLedger, redact(dsn), err)
		}
		return nil, fmt.Errorf("%w: %s: %v", ErrLedger, redact(dsn), err)
	}
	return l, nil
}

// openSQLite opens a SQLite ledger: a writer takes the write lock at the
// start of each transaction and waits for another's up to o.Wait; a
// reader opens the file read-only (WAL readers run beside a writer), and
// on a read-only directory as immutable, since nothing can write it.
func openSQLite(path string, o Options) (*sql.DB, error) {
	wait := o.Wait
	if wait <= 0 {
		wait = DefaultWait
	}
	q := fmt.Sprintf("?_pragma=busy_timeout(%d)", wait.Milliseconds())
	if o.ReadOnly {
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("no ledger there: %v", err)
		}
		q += "&mode=ro"
		if !fsutil.Writable(filepath.Dir(path)) {
			q += "&immutable=1"
		}
	} else {
		if err := checkLink(path); err != nil {
			return nil, err
		}
		q += "&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_txlock=immediate"
	}
	db, err := sql.Open("sqlite", "file:"+url.PathEscape(path)+q)
	if err == nil {
		db.SetMaxOpenConns(1)
	}
	return db, err
}

// checkVersion refuses, for a reader, a ledger this build cannot read
// without migrating it.
func (l *Ledger) checkVersion(ctx context.Context) error {
	version := 0
	err := l.db.QueryRowContext(ctx, `SELECT version FROM seedance_version`).Scan(&version)
	if err != nil {
		return fmt.Errorf("not a seedance ledger, or not readable: %v", err)
	}
	switch {
	case version > SchemaVersion:
		return fmt.Errorf("its schema is version %d, newer than this seedance's %d: upgrade seedance", version, SchemaVersion)
	case version < SchemaVersion:
		return fmt.Errorf("its schema is version %d: run seedance ledger update (with --cluster NAME for its rows) once to migrate it to %d", version, SchemaVersion)
	}
	return nil
}

// Close closes the ledger.
func (l *Ledger) Close() error { return l.db.Close() }

// Absent says whether dsn is an embedded ledger's path that does not
// exist yet (Open would create it).
func Absent(dsn string) bool {
	if strings.Contains(dsn, "://") {
		return false
	}
	_, err := os.Lstat(dsn)
	return errors.Is(err, os.ErrNotExist)
}

// DiscardIfEmpty closes the ledger and, when it is an embedded one that
// holds no cluster (the first update failed), removes its files: a
// failed first update leaves no empty ledger behind.
func (l *Ledger) DiscardIfEmpty(ctx context.Context) error {
	var n int
	err := l.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM seedance_state`).Scan(&n)
	if cerr := l.db.Close(); err == nil {
		err = cerr
	}
	if err != nil || n > 0 || l.postgres {
		return err
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(l.dsn + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%w: remove the empty %s: %v", ErrLedger, l.dsn+suffix, err)
		}
	}
	return nil
}

// migrate applies the migrations the ledger lacks, in one transaction.
func (l *Ledger) migrate(ctx context.Context) error {
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }() // after a commit, a no-op
	if l.postgres {
		// One migration at a time when several updates start together.
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(7157)`); err != nil {
			return err
		}
	}
	version := 0
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS seedance_version (version BIGINT NOT NULL)`); err != nil {
		return err
	}
	if err := tx.QueryRowContext(ctx, `SELECT version FROM seedance_version`).Scan(&version); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	} else if errors.Is(err, sql.ErrNoRows) {
		if _, err := tx.ExecContext(ctx, `INSERT INTO seedance_version (version) VALUES (0)`); err != nil {
			return err
		}
	}
	if version > SchemaVersion {
		return fmt.Errorf("its schema is version %d, newer than this seedance's %d: upgrade seedance", version, SchemaVersion)
	}
	for ; version < SchemaVersion; version++ {
		for _, stmt := range strings.Split(migrations[version], ";") {
			if strings.TrimSpace(stmt) == "" {
				continue
			}
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("migration %d: %v", version+1, err)
			}
		}
		if stmt := postgresOnly[version]; l.postgres && stmt != "" {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("migration %d: %v", version+1, err)
			}
		}
		if fill := backfills[version]; fill != nil {
			if err := fill(ctx, tx, l.cluster); err != nil {
				return fmt.Errorf("migration %d: %v", version+1, err)
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE seedance_version SET version = `+strconv.Itoa(version+1)); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// redact drops a URL's password, so that a DSN can be named in errors and
// logs.
func redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.User == nil {
		return dsn
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// checkLink refuses a ledger path that is a symbolic link to nothing (a
// writer would create its target: a link another user planted in a shared
// directory picks where seedance writes) or one owned by another user.
func checkLink(path string) error {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		return nil // absent (created here) or not a link
	}
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("%s is a symbolic link to nothing: seedance does not create a link's target (give the target's path)", path)
	}
	if owner, ok := fsutil.Owner(fi); ok && owner != os.Geteuid() {
		return fmt.Errorf("%s is a symbolic link of another user (uid %d): give the target's path", path, owner)
	}
	return nil
}
