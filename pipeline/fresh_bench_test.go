package pipeline

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/testkit/cputime"

	"github.com/seedance/seedance/internal/testkit/pgtest"
	"github.com/seedance/seedance/ledger"
	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source/sim"
)

// BenchmarkFreshness (#56): the same two hours of 100 simulated nodes (a
// sample every 30 s) counted into a ledger by 24 five-minute updates and
// by one update, each `ledger update -i FILE` as the command runs it (the
// file read, the ledger opened, the rows written); CPU time of the 24
// against the one, the two alternated round by round, and two floors: an
// update of a piece counted already, which counts nothing, and the
// ledger's opening alone (its schema checked, its state's head read). In SQLite, and
// in a real PostgreSQL with the server's CPU (its finished connections':
// each update opens its own) added:
// go test ./pipeline -run XXX -bench Freshness -benchtime 3x
func BenchmarkFreshness(b *testing.B) {
	p, err := sim.Record(sim.Options{Nodes: 100, Scenario: sim.ScenarioMixed, Seed: 1}, 30*time.Second, 2*time.Hour, profile.Generator{Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	whole := filepath.Join(dir, "whole.json")
	if err := profile.WriteFile(whole, p); err != nil {
		b.Fatal(err)
	}
	var pieces []string
	from := p.StartedAt.Add(-time.Millisecond)
	for to := p.StartedAt.Add(5 * time.Minute); from.Before(p.EndedAt); to = to.Add(5 * time.Minute) {
		name := filepath.Join(dir, fmt.Sprintf("piece%02d.json", len(pieces)))
		if to.After(p.EndedAt) {
			to = p.EndedAt
		}
		if err := profile.WriteFile(name, profile.Join([]*profile.Profile{p}, from, to, false)); err != nil {
			b.Fatal(err)
		}
		pieces, from = append(pieces, name), to
	}
	b.Run("sqlite", func(b *testing.B) {
		freshness(b, pieces, whole, func(name string) string { return filepath.Join(dir, name+".db") }, func() time.Duration { return 0 })
	})
	b.Run("postgres", func(b *testing.B) {
		dsn := pgtest.Start(b)
		db, err := sql.Open("pgx", dsn)
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		if err := db.Ping(); err != nil { // before ServerCPU: this connection stays
			b.Fatal(err)
		}
		freshness(b, pieces, whole, func(name string) string {
			if _, err := db.Exec("CREATE DATABASE " + name); err != nil {
				b.Fatal(err)
			}
			return strings.Replace(dsn, "/seedance?", "/"+name+"?", 1)
		}, pgtest.ServerCPU(b, dsn))
	})
}

// freshness runs the rounds into ledgers that ledger makes by name, with
// server the database server's CPU so far.
func freshness(b *testing.B, pieces []string, whole string, ledger func(name string) string, server func() time.Duration) {
	var fresh, daily, floor, open time.Duration
	cpu := func() time.Duration { return cputime.Process() + server() }
	for i := range b.N {
		for _, run := range []struct {
			inputs [][]string
			cpu    *time.Duration
		}{{chunks(pieces), &fresh}, {[][]string{{whole}}, &daily}} {
			dsn := ledger(fmt.Sprintf("l%d_%d", i, len(run.inputs)))
			cfg := configWith(b, "ledger.dsn", dsn)
			cpu0 := cpu()
			for _, in := range run.inputs {
				if _, err := LedgerUpdate(context.Background(), LedgerUpdateSpec{Config: cfg, Inputs: in}); err != nil {
					b.Fatal(err)
				}
			}
			*run.cpu += cpu() - cpu0
			if len(run.inputs) > 1 {
				// The floor: the last piece again, which counts nothing
				// (the file read, the ledger opened and its state loaded).
				cpu0 := cpu()
				if up, err := LedgerUpdate(context.Background(), LedgerUpdateSpec{Config: cfg, Inputs: []string{pieces[len(pieces)-1]}}); err != nil || !up.Nothing {
					b.Fatalf("the last piece again: %+v %v", up, err)
				}
				floor += cpu() - cpu0
				open += openFloor(b, dsn, cpu)
			}
		}
	}
	b.ReportMetric(fresh.Seconds()/float64(b.N)/float64(len(pieces)), "cpu-s/update")
	b.ReportMetric(daily.Seconds()/float64(b.N), "cpu-s/whole")
	b.ReportMetric(float64(fresh)/float64(daily), "ratio")
	b.ReportMetric(floor.Seconds()/float64(b.N), "cpu-s/nothing")
	b.ReportMetric(open.Seconds()/float64(b.N), "cpu-s/open")
}

// openFloor is the CPU of what every update pays before it reads
// anything: the ledger opened (its schema checked), where its data ends
// read from the state, the ledger closed.
func openFloor(b *testing.B, dsn string, cpu func() time.Duration) time.Duration {
	cpu0 := cpu()
	l, err := ledger.Open(context.Background(), dsn, ledger.Options{})
	if err == nil {
		_, _, _, err = l.DataEndOf(context.Background())
		if cerr := l.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		b.Fatal(err)
	}
	return cpu() - cpu0
}

// chunks is each name as an update's inputs.
func chunks(names []string) [][]string {
	out := make([][]string, len(names))
	for i, n := range names {
		out[i] = []string{n}
	}
	return out
}
