package pgtest

import (
	"database/sql"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the pgx driver, as the ledger's
)

// ServerCPU returns a reader of the CPU time PostgreSQL's server spent
// on its finished connections (the postmaster's children's user + sys
// time, from /proc): each report's connection ends with it. Zero for
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
	return func() time.Duration {
		f := stat(parent)
		if len(f) < 15 {
			return 0
		}
		cu, _ := strconv.ParseInt(f[13], 10, 64) // cutime and cstime, in clock ticks (100 a second)
		cs, _ := strconv.ParseInt(f[14], 10, 64)
		return time.Duration(cu+cs) * 10 * time.Millisecond
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
