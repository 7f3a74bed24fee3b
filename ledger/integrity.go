package ledger

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ErrCorrupt marks a ledger whose pages fail the database's own integrity
// check: it is refused rather than read, since a page that lost rows can
// make a report miss a group and still exit 0.
var ErrCorrupt = errors.New("its pages fail the database's integrity check")

// hourlyTables are the tables a reader's quick check leaves out: they
// hold most of a ledger's pages (87 % of a 1,000-node month) and a report
// reads their rollups; ledger check --integrity checks them.
var hourlyTables = map[string]bool{"seedance_gpu": true, "seedance_hold": true}

// quickCheck runs SQLite's PRAGMA quick_check over every table of the
// ledger but the hourly ones, and their indexes: a reader's open. It
// checks each page's structure (cells, order, free lists), which a
// garbled page fails; it reads a month's rollups of 1,000 nodes in about
// 0.1 s (docs/performance.md). PostgreSQL verifies its pages as it reads
// them when the cluster has data checksums.
func (l *Ledger) quickCheck(ctx context.Context) error {
	if l.postgres {
		return nil
	}
	tables, err := l.tables(ctx)
	if err != nil {
		return err
	}
	for _, t := range tables {
		if hourlyTables[t] {
			continue
		}
		var res string
		if err := l.db.QueryRowContext(ctx, `PRAGMA quick_check(`+t+`)`).Scan(&res); err != nil {
			return fmt.Errorf("%w (%s: %v): restore it from a backup; seedance ledger check --integrity lists every problem", ErrCorrupt, t, err)
		}
		if res != "ok" {
			return fmt.Errorf("%w (%s: %s): restore it from a backup; seedance ledger check --integrity lists every problem", ErrCorrupt, t, oneLine(res))
		}
	}
	return nil
}

// tables are the ledger's own tables, by name.
func (l *Ledger) tables(ctx context.Context) ([]string, error) {
	q := `SELECT name FROM sqlite_schema WHERE type = 'table' AND name LIKE 'seedance\_%' ESCAPE '\' ORDER BY name`
	if l.postgres {
		q = `SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename LIKE 'seedance\_%' ORDER BY tablename`
	}
	rows, err := l.db.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("%w (%v)", ErrCorrupt, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// Integrity is the database's own full check of the whole ledger: what it
// found (nil when nothing), and how it checked. SQLite: PRAGMA
// integrity_check, every page and every index against its table (a
// 1,000-node month in about 3 s). PostgreSQL: every table read in full, so
// that the server verifies each page's checksum (when the cluster has data
// checksums, which is said), and amcheck's bt_index_check on every index
// when the extension is installed.
func (l *Ledger) Integrity(ctx context.Context) (problems []string, how string, err error) {
	if !l.postgres {
		rows, err := l.db.QueryContext(ctx, `PRAGMA integrity_check(100)`)
		if err != nil {
			return []string{oneLine(err.Error())}, "SQLite's integrity_check", nil
		}
		defer rows.Close()
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				return nil, "", err
			}
			if s != "ok" {
				problems = append(problems, oneLine(s))
			}
		}
		if err := rows.Err(); err != nil {
			problems = append(problems, oneLine(err.Error()))
		}
		return problems, "SQLite's integrity_check over every page and index", nil
	}
	return l.pgIntegrity(ctx)
}

func (l *Ledger) pgIntegrity(ctx context.Context) ([]string, string, error) {
	tables, err := l.tables(ctx)
	if err != nil {
		return nil, "", err
	}
	var problems []string
	for _, t := range tables {
		var n int64
		if err := l.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT * FROM `+t+`) AS every_row`).Scan(&n); err != nil {
			problems = append(problems, t+": "+oneLine(err.Error()))
		}
	}
	var checksums string
	if err := l.db.QueryRowContext(ctx, `SHOW data_checksums`).Scan(&checksums); err != nil {
		return nil, "", err
	}
	how := "every table read in full; the server's data checksums are " + checksums
	if checksums != "on" {
		how += " (a damaged page is then found only when it breaks a row)"
	}
	var amcheck bool
	if err := l.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'amcheck')`).Scan(&amcheck); err != nil {
		return nil, "", err
	}
	if !amcheck {
		return problems, how + "; indexes not checked (CREATE EXTENSION amcheck to check them)", nil
	}
	rows, err := l.db.QueryContext(ctx, `SELECT c.relname, bt_index_check(c.oid) IS NULL FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
		JOIN pg_class t ON t.oid = i.indrelid JOIN pg_am a ON a.oid = c.relam
		WHERE a.amname = 'btree' AND t.relname LIKE 'seedance\_%' AND t.relnamespace = current_schema()::regnamespace`)
	if err != nil {
		return append(problems, "amcheck: "+oneLine(err.Error())), how, nil
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var ok bool
		if err := rows.Scan(&name, &ok); err != nil {
			return nil, "", err
		}
	}
	if err := rows.Err(); err != nil {
		problems = append(problems, "amcheck: "+oneLine(err.Error()))
	}
	return problems, how + "; every B-tree index checked by amcheck", nil
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(strings.ReplaceAll(s, "*** in database main ***", "")), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
