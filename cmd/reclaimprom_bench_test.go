package cmd

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/testkit/synth"
)

// BenchmarkReclaimPrometheus (#55, docs/performance.md, Reclaim): 1,000
// nodes × 8 GPUs scraped every 15 s for SEEDANCE_BENCH_HOURS (default 1),
// ending a few minutes ago (so that the data is fresh and reclaim assesses
// every workload), backfilled into a real Prometheus: the CPU time,
// seedance's and the engine's, of a dry-run reclaim pass over the range
// against analyze over the same range with the same source flags, in
// alternated rounds (min / median / max of three):
// go test ./cmd -run XXX -bench ReclaimPrometheus -benchtime 1x -timeout 60m
func BenchmarkReclaimPrometheus(b *testing.B) {
	hours := benchHours(1)
	saved := synth.Start
	synth.Start = time.Now().UTC().Add(-time.Duration(hours)*time.Hour - 5*time.Minute).Truncate(time.Minute)
	defer func() { synth.Start = saved }()
	start, end := synth.Start, synth.Start.Add(time.Duration(hours)*time.Hour)
	srv := fleetPrometheus(b, b.TempDir(), hours)
	waitIdle(b, srv)
	dir := b.TempDir()
	cfg := filepath.Join(dir, "seedance.yaml")
	if err := os.WriteFile(cfg, []byte("reclaim: {idle_for: 10m, max_staleness: 6h}\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	src := []string{"--source", "prometheus", "--prometheus-url", srv.URL, "--step", "15s",
		"--start", start.Format(time.RFC3339), "--end", end.Format(time.RFC3339)}
	cases := map[string][]string{
		"analyze":           append([]string{"analyze", "-f", "json", "-o", filepath.Join(dir, "r.json")}, src...),
		"reclaim (dry run)": append([]string{"--config", cfg, "reclaim"}, src...),
	}
	names := []string{"analyze", "reclaim (dry run)"}
	b.ResetTimer()
	cpu := map[string][]float64{}
	for r := range 3 {
		for k := range names {
			name := names[(k+r)%len(names)]
			c, engine, _ := cpuRun(b, srv, cases[name]...)
			cpu[name] = append(cpu[name], (c + engine).Seconds())
			b.Logf("round %d %-18s seedance %.2f s + engine %.2f s", r+1, name, c.Seconds(), engine.Seconds())
		}
	}
	a, rc := slices.Sorted(slices.Values(cpu["analyze"])), slices.Sorted(slices.Values(cpu["reclaim (dry run)"]))
	b.Logf("reclaim ÷ analyze (medians, seedance + engine): %.2f×", rc[1]/a[1])
	b.ReportMetric(rc[1]/a[1], "ratio-median")
}
