package pgtest

import (
	"database/sql"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the pgx driver, as the ledger's
)

// ServerCPU returns a reader of the CPU time PostgreSQL's server spent
// on its finished connections (the postmaster's children's user + sys
// time, from /proc): each report's connection ends with it. A connection's
// time counts once the postmaster has reaped its process, a moment after
// the client closed it, so the reader first waits (up to 5 s) until the
// postmaster has no process but those it had when ServerCPU was called
// (its own, and the caller's connections: open them first); without the
// wait, a command's server time counted in the next one's. Zero for
// SQLite, or where /proc is not there.
func ServerCPU(b testing.TB, dsn string) func() time.Duration {
	none := func() time.Duration { return 0 }
	if !strings.HasPrefix(dsn, "postgres") {
		return none
	}
	var pid int
	if err := psql(dsn, `SELECT pg_backend_pid()`, &pid); err != nil {
		b.Fatal(err)
	}
	stat := func(pid int) []string {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return nil
		}
		return strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+2:]))
	}
	f := stat(pid)
	if len(f) < 2 {
		return none
	}
	parent, _ := strconv.Atoi(f[1]) // the field after the state: ppid, the postmaster
	keep := map[int]bool{}
	for _, c := range children(parent) {
		keep[c.pid] = !c.zombie // one that ended is waited for: its time counts once reaped
	}
	return func() time.Duration {
		settled(parent, keep)
		f := stat(parent)
		if len(f) < 15 {
			return 0
		}
		cu, _ := strconv.ParseInt(f[13], 10, 64) // cutime and cstime, in clock ticks (100 a second)
		cs, _ := strconv.ParseInt(f[14], 10, 64)
		return time.Duration(cu+cs) * 10 * time.Millisecond
	}
}

// child is one of the postmaster's processes: its own, a connection, or
// one that ended and is not reaped yet (a zombie).
type child struct {
	pid    int
	zombie bool
}

// children lists parent's children from /proc.
func children(parent int) []child {
	entries, _ := os.ReadDir("/proc")
	var out []child
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		if f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+2:])); len(f) >= 2 && f[1] == strconv.Itoa(parent) {
			out = append(out, child{pid, f[0] == "Z"})
		}
	}
	return out
}

// settled waits, up to 5 s, until parent has no child but those in keep,
// none of them ended.
func settled(parent int, keep map[int]bool) {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if !slices.ContainsFunc(children(parent), func(c child) bool { return c.zombie || !keep[c.pid] }) {
			return
		}
	}
}

// psql scans the one value a query on dsn answers.
func psql(dsn, q string, v any) error {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	return db.QueryRow(q).Scan(v)
}
