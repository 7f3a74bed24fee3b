package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source/sim"
)

// BenchmarkUnitsPushdownRead (issue #57): the CPU time (user + sys) of
// `analyze --source prometheus --pushdown`, with the default report (no
// unit figures: no counters read) and with --report attribution (unit
// figures: the counters read), over an hour of 100 simulated
// nodes whose serving pods count requests and tokens (vLLM's series beside
// dcgm-exporter's in a real Prometheus), seedance's own and the engine's,
// against SEEDANCE_BENCH_BASELINE (a seedance that reads no counters),
// alternated over SEEDANCE_BENCH_ROUNDS rounds (default 3). Without a
// baseline it measures this binary alone.
func BenchmarkUnitsPushdownRead(b *testing.B) {
	start := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	p, err := sim.Record(sim.Options{Nodes: 100, Scenario: "mixed", Seed: 1, Start: start}, 15*time.Second, time.Hour, profile.Generator{Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	srv := backfilled(b, p)
	bins := []struct{ name, path string }{{"now", binary}}
	if old := baselineBinary(b); old != "" {
		bins = append(bins, struct{ name, path string }{"baseline", old})
	}
	args := []string{"analyze", "--source", "prometheus", "--prometheus-url", srv.URL, "--pushdown", "--step", "15s",
		"--start", start.Format(time.RFC3339), "--end", start.Add(time.Hour).Format(time.RFC3339), "-f", "json", "-o", filepath.Join(b.TempDir(), "r.json")}
	rounds := benchRounds()
	b.ResetTimer()
	for range b.N {
		for round := range rounds {
			for _, report := range []string{"cost-savings", "attribution"} {
				for i := range bins {
					bin := bins[(i+round)%len(bins)]
					engine := srv.CPU()
					_, cpu, rss := timeRun(b, bin.path, append(args, "--report", report)...)
					b.Logf("round %d, %s, %s: %.2f s CPU, engine %.2f s, %.0f MiB", round+1, report, bin.name, cpu.Seconds(), (srv.CPU() - engine).Seconds(), rss)
				}
			}
		}
	}
}

// benchRounds is SEEDANCE_BENCH_ROUNDS, default 3.
func benchRounds() int {
	n := 3
	if _, err := fmt.Sscan(os.Getenv("SEEDANCE_BENCH_ROUNDS"), &n); err != nil {
		n = 3
	}
	return max(1, n)
}
