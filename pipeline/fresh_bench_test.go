package pipeline

import (
	"context"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source/sim"
)

// BenchmarkFreshness (#56): the same two hours of 100 simulated nodes (a
// sample every 30 s) counted into a SQLite ledger by 24 five-minute
// updates and by one update, each `ledger update -i FILE` as the command
// runs it (the file read, the ledger opened, the rows written); CPU time
// of the 24 against the one, the two alternated round by round, and the
// floor: an update of a piece counted already, which counts nothing:
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
	var fresh, daily, floor time.Duration
	b.ResetTimer()
	for i := range b.N {
		for _, run := range []struct {
			inputs [][]string
			cpu    *time.Duration
		}{{chunks(pieces), &fresh}, {[][]string{{whole}}, &daily}} {
			cfg := configWith(b, "ledger.dsn", filepath.Join(dir, fmt.Sprintf("l%d-%d.db", i, len(run.inputs))))
			cpu0 := cpuTime()
			for _, in := range run.inputs {
				if _, err := LedgerUpdate(context.Background(), LedgerUpdateSpec{Config: cfg, Inputs: in}); err != nil {
					b.Fatal(err)
				}
			}
			*run.cpu += cpuTime() - cpu0
		}
		// The floor: the last piece again, which counts nothing (the file
		// read, the ledger opened and its state loaded).
		cfg := configWith(b, "ledger.dsn", filepath.Join(dir, fmt.Sprintf("l%d-%d.db", i, len(pieces))))
		cpu0 := cpuTime()
		if up, err := LedgerUpdate(context.Background(), LedgerUpdateSpec{Config: cfg, Inputs: []string{pieces[len(pieces)-1]}}); err != nil || !up.Nothing {
			b.Fatalf("the last piece again: %+v %v", up, err)
		}
		floor += cpuTime() - cpu0
	}
	b.ReportMetric(fresh.Seconds()/float64(b.N)/float64(len(pieces)), "cpu-s/update")
	b.ReportMetric(daily.Seconds()/float64(b.N), "cpu-s/whole")
	b.ReportMetric(float64(fresh)/float64(daily), "ratio")
	b.ReportMetric(floor.Seconds()/float64(b.N), "cpu-s/nothing")
}

// chunks is each name as an update's inputs.
func chunks(names []string) [][]string {
	out := make([][]string, len(names))
	for i, n := range names {
		out[i] = []string{n}
	}
	return out
}

// cpuTime is the process' user and system time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
