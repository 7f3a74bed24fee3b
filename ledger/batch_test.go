package ledger

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// TestBatchedUpsertsAsOneAtATime: rows gathered by add and sent many to a
// statement leave a table as the same upserts one at a time do: a key
// that comes again is summed, a query in between sees every row before
// it, and a second upsert of the table runs after the first's rows; on
// PostgreSQL, which refuses a statement that touches a row twice, and on
// SQLite.
func TestBatchedUpsertsAsOneAtATime(t *testing.T) {
	const up = `INSERT INTO t_sum AS o (cluster, k, v) VALUES ($1, $2, $3) ON CONFLICT (cluster, k) DO UPDATE SET v = o.v + excluded.v`
	const set = `INSERT INTO t_sum AS o (cluster, k, v) VALUES ($1, $2, $3) ON CONFLICT (cluster, k) DO UPDATE SET v = excluded.v`
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			l := ledgers(t, backend)()
			run := func(batched bool) ([]string, []int) {
				ctx := context.Background()
				tx, err := l.db.BeginTx(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer func() { _ = tx.Rollback() }()
				if _, err := tx.Exec(`CREATE TABLE t_sum (cluster TEXT NOT NULL, k BIGINT NOT NULL, v BIGINT NOT NULL, PRIMARY KEY (cluster, k))`); err != nil {
					t.Fatal(err)
				}
				ex := newExecer(ctx, tx, "c", batched)
				defer ex.close()
				var seen []int
				for i := range 1300 { // more than a statement's rows
					q := up
					if i%401 == 0 {
						q = set
					}
					if err := ex.add(q, i%300, i); err != nil {
						t.Fatal(err)
					}
					if i%450 == 449 {
						var n int
						if err := ex.queryRowGlobal(`SELECT COUNT(*) FROM t_sum`).Scan(&n); err != nil {
							t.Fatal(err)
						}
						seen = append(seen, n)
					}
				}
				if err := ex.flush(); err != nil {
					t.Fatal(err)
				}
				rows, err := tx.Query(`SELECT k, v FROM t_sum ORDER BY k`)
				if err != nil {
					t.Fatal(err)
				}
				defer rows.Close()
				var out []string
				for rows.Next() {
					var k, v int
					if err := rows.Scan(&k, &v); err != nil {
						t.Fatal(err)
					}
					out = append(out, fmt.Sprint(k, v))
				}
				return out, seen
			}
			want, wantSeen := run(false)
			got, gotSeen := run(true)
			if len(want) != 300 || !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotSeen, wantSeen) {
				t.Errorf("batched: %d rows, %v seen; one at a time: %d rows, %v seen; first differences %v",
					len(got), gotSeen, len(want), wantSeen, firstDiff(got, want))
			}
		})
	}
}

func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return a[i] + " / " + b[i]
		}
	}
	return ""
}

// TestUpsertFormRefused: add refuses, with a line naming it, a statement
// it cannot gather.
func TestUpsertFormRefused(t *testing.T) {
	for _, q := range []string{
		`UPDATE t SET v = 1 WHERE cluster = $1`,
		`INSERT INTO t AS o (cluster, k, v) VALUES ($1, $3, $2) ON CONFLICT (cluster, k) DO NOTHING`,
		`INSERT INTO t AS o (cluster, k, v) VALUES ($1, $2, $3) ON CONFLICT (cluster, x) DO NOTHING`,
	} {
		if _, err := parseUpsert(q); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v", q, err)
		}
	}
	u, err := parseUpsert(`INSERT INTO t AS o (cluster, k, v) VALUES ($1, $2, $3) ON CONFLICT (cluster, k) DO UPDATE SET v = o.v + excluded.v`)
	if err != nil || u.statement(2) != `INSERT INTO t AS o (cluster, k, v) VALUES ($1, $2, $3), ($4, $5, $6) ON CONFLICT (cluster, k) DO UPDATE SET v = o.v + excluded.v` ||
		!reflect.DeepEqual(u.key, []int{0, 1}) {
		t.Errorf("%+v %q %v", u, u.statement(2), err)
	}
}
