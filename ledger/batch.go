package ledger

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// An update writes thousands of rows, one upsert each; on PostgreSQL each
// statement is a round trip (a five-minute update of 100 nodes cost 0.25 s
// of seedance's CPU, SQLite's 0.06 s). The execer therefore gathers the
// rows of an upsert (add) and sends them as one statement of many rows
// (VALUES (…), (…)), per table in the order they came: before any other
// statement, every gathered row is sent, so that what runs is what one
// row at a time would have run. A row whose key the gathered rows hold
// already is sent after them (PostgreSQL refuses an upsert that touches a
// row twice; the rows of one key are summed as one at a time would).

// upsertForm is the shape add gathers: INSERT INTO t … (cols) VALUES ($1,
// …, $n) ON CONFLICT (key) ….
var upsertForm = regexp.MustCompile(`(?s)^INSERT INTO (\w+)(?: AS o)? \(([^)]*)\)\s*VALUES \(([^)]*)\)(\s*ON CONFLICT \(([^)]*)\).*)$`)

// upsert is a parsed upsert: its table, the statement before and after its
// VALUES tuple, its columns' count and the positions of its key's.
type upsert struct {
	table, head, tail string
	cols              int
	key               []int
}

// maxBatchParams bounds a statement's parameters (SQLite allows 32,766,
// PostgreSQL 65,535), and maxBatchRows its rows.
const (
	maxBatchParams = 30000
	maxBatchRows   = 500
)

// parseUpsert reads q's shape; an error names a statement add cannot
// gather (a mistake in seedance, found by any test that writes).
func parseUpsert(q string) (*upsert, error) {
	m := upsertForm.FindStringSubmatch(q)
	if m == nil {
		return nil, fmt.Errorf("not an upsert of one row of values: %.60s", q)
	}
	cols := splitList(m[2])
	for i, v := range splitList(m[3]) {
		if v != "$"+strconv.Itoa(i+1) {
			return nil, fmt.Errorf("values not $1…$n in order: %.60s", q)
		}
	}
	if len(splitList(m[3])) != len(cols) {
		return nil, fmt.Errorf("%d values for %d columns: %.60s", len(splitList(m[3])), len(cols), q)
	}
	u := &upsert{table: m[1], head: q[:strings.Index(q, "VALUES")] + "VALUES ", tail: m[4], cols: len(cols)}
	for _, k := range splitList(m[5]) {
		i := slices.Index(cols, k)
		if i < 0 {
			return nil, fmt.Errorf("key column %s not among the columns: %.60s", k, q)
		}
		u.key = append(u.key, i)
	}
	return u, nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		out = append(out, strings.TrimSpace(f))
	}
	return out
}

// statement is u's statement of n rows.
func (u *upsert) statement(n int) string {
	var b strings.Builder
	b.WriteString(u.head)
	for r := range n {
		if r > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for c := range u.cols {
			if c > 0 {
				b.WriteString(", ")
			}
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(r*u.cols + c + 1))
		}
		b.WriteByte(')')
	}
	b.WriteString(u.tail)
	return b.String()
}

// upsertBatch is one upsert's gathered rows.
type upsertBatch struct {
	u    *upsert
	q    string
	args []any
	keys map[string]bool
}

// rowKey is a row's key, as text.
func (u *upsert) rowKey(args []any) string {
	var b strings.Builder
	for _, i := range u.key {
		fmt.Fprintf(&b, "%v\x00", args[i])
	}
	return b.String()
}

// add gathers one row of the upsert q ($1 the cluster, args the rest).
func (e *execer) add(q string, args ...any) error {
	if e.err != nil {
		return e.err
	}
	if !e.batched {
		return e.exec(q, args...)
	}
	args = append([]any{e.cluster}, args...)
	u := e.parsed[q]
	if u == nil {
		var err error
		if u, err = parseUpsert(q); err != nil {
			return err
		}
		e.parsed[q] = u
	}
	if len(args) != u.cols {
		return fmt.Errorf("%d values for the %d columns of %s", len(args), u.cols, u.table)
	}
	b := e.byTable[u.table]
	if b != nil && b.q != q { // another statement's rows of the table go first
		if err := e.send(b); err != nil {
			return err
		}
		b = nil
	}
	if b == nil {
		b = &upsertBatch{u: u, q: q, keys: map[string]bool{}}
		e.byTable[u.table] = b
		e.order = append(e.order, b)
	}
	k := u.rowKey(args)
	if b.keys[k] || len(b.keys) >= min(maxBatchRows, maxBatchParams/u.cols) {
		if err := e.send(b); err != nil {
			return err
		}
		return e.add(q, args[1:]...)
	}
	b.keys[k] = true
	b.args = append(b.args, args...)
	return nil
}

// send sends b's rows and forgets b.
func (e *execer) send(b *upsertBatch) error {
	delete(e.byTable, b.u.table)
	if i := slices.Index(e.order, b); i >= 0 {
		e.order = slices.Delete(e.order, i, i+1)
	}
	if len(b.args) == 0 {
		return nil
	}
	st, err := e.prepared(b.u.statement(len(b.args) / b.u.cols))
	if err != nil {
		return err
	}
	_, err = st.ExecContext(e.ctx, b.args...)
	return err
}

// flush sends every gathered row, in the order the upserts came; an
// error is kept, and returned by every later flush.
func (e *execer) flush() error {
	for e.err == nil && len(e.order) > 0 {
		e.err = e.send(e.order[0])
	}
	return e.err
}
