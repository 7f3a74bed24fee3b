package ledger

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/testkit/cputime"

	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source/sim"
)

// BenchmarkUpdateOfAnOldLedger (#56): an hour of 100 simulated nodes
// counted in 5-minute updates into a ledger that holds a month of 1,000
// nodes before it (monthLedger, one cluster in SQLite), against the same
// updates into a ledger that holds only this hour: the CPU time of an
// update (the first of each left out) and the ratio of the two. An
// update's cost must not grow with the ledger's age:
// go test ./ledger -run XXX -bench UpdateOfAnOldLedger -benchtime 1x
func BenchmarkUpdateOfAnOldLedger(b *testing.B) {
	old := filepath.Join(b.TempDir(), "month.db")
	monthLedger(b, old, 1)
	p, err := sim.Record(sim.Options{Nodes: 100, Scenario: sim.ScenarioMixed, Seed: 1, Start: benchMonth.AddDate(0, 0, benchDays)}, 30*time.Second, time.Hour,
		profile.Generator{Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	young := filepath.Join(b.TempDir(), "hour.db")
	fiveMinutes(b, young, p) // the young ledger's first update sets the idle rules the old one is given
	var params string
	if err := openBench(b, young).db.QueryRow(`SELECT params FROM seedance_state`).Scan(&params); err != nil {
		b.Fatal(err)
	}
	ol := openBench(b, old)
	if _, err := ol.db.Exec(`UPDATE seedance_state SET params = $1`, params); err != nil {
		b.Fatal(err)
	}
	ol.Close()
	b.ResetTimer()
	oldCPU, youngCPU := fiveMinutes(b, old, p), fiveMinutes(b, filepath.Join(b.TempDir(), "hour2.db"), p)
	b.ReportMetric(oldCPU.Seconds(), "old-cpu-s/update")
	b.ReportMetric(youngCPU.Seconds(), "young-cpu-s/update")
	b.ReportMetric(oldCPU.Seconds()/youngCPU.Seconds(), "ratio")
}

// openBench opens the ledger at dsn as cluster c00, closed with b.
func openBench(b *testing.B, dsn string) *Ledger {
	l, err := Open(context.Background(), dsn, Options{Cluster: "c00"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	return l
}

// fiveMinutes counts p into the ledger at dsn in 5-minute updates and
// returns the mean CPU time of those after the first.
func fiveMinutes(b *testing.B, dsn string, p *profile.Profile) time.Duration {
	l, err := Open(context.Background(), dsn, Options{Cluster: "c00"})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	var total time.Duration
	n := 0
	from := p.StartedAt.Add(-time.Millisecond)
	for to := p.StartedAt.Add(5 * time.Minute); !to.After(p.EndedAt); to = to.Add(5 * time.Minute) {
		in := profile.Join([]*profile.Profile{p}, from, to, false)
		c0 := cputime.Process()
		if _, err := l.Update(context.Background(), UpdateSpec{Inputs: []*profile.Profile{in}, Params: params()}); err != nil {
			b.Fatal(err)
		}
		if from.After(p.StartedAt) {
			total += cputime.Process() - c0
			n++
		}
		from = to
	}
	return total / time.Duration(max(n, 1))
}
