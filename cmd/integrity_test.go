package cmd

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

// TestLedgerCheckIntegrity (#56): `ledger check --integrity` says ok on a
// healthy ledger; after one of its pages is garbled, a report is refused
// with one line and exit 1, and the check lists what is broken, exit 1.
func TestLedgerCheckIntegrity(t *testing.T) {
	dir := t.TempDir()
	p := simProfile(t, "--interval", "60s", "--duration", "2h", "--sim-nodes", "3")
	led := filepath.Join(dir, "ledger.db")
	if r := run(t, nil, "ledger", "update", "--ledger", led, "-i", p); r.code != 0 {
		t.Fatalf("update: %s", r.errOut)
	}
	if r := run(t, nil, "ledger", "check", "--ledger", led, "--integrity"); r.code != 0 || !strings.HasPrefix(r.out, "ok     integrity: SQLite's integrity_check") {
		t.Fatalf("a healthy ledger: %d %q %s", r.code, r.out, r.errOut)
	}
	db, err := sql.Open("sqlite", "file:"+led+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	var root int64
	err = db.QueryRow(`SELECT rootpage FROM sqlite_schema WHERE name = 'seedance_hold_day'`).Scan(&root)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(led, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteAt([]byte{0xff, 0xff, 0xff, 0xff}, (root-1)*4096+3)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	r := run(t, nil, "ledger", "report", "--ledger", led)
	if r.code != 1 || strings.Count(r.errOut, "\n") != 1 || !strings.Contains(r.errOut, "integrity check (seedance_hold_day") || r.out != "" {
		t.Fatalf("a report of a corrupt ledger: %d %q %q", r.code, r.out, r.errOut)
	}
	r = run(t, nil, "ledger", "check", "--ledger", led, "--integrity")
	if r.code != 1 || !strings.HasPrefix(r.out, "CORRUPT ") || !strings.Contains(r.errOut, "problem(s) found by SQLite's integrity_check") {
		t.Fatalf("the check of a corrupt ledger: %d %q %q", r.code, r.out, r.errOut)
	}
}
