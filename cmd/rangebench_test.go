package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/testkit/synth"
)

// BenchmarkPrometheusRangeRSS is issue #30's pushdown target: the peak RSS
// of analyze --source prometheus, raw, with --pushdown, with --pushdown in
// 1-hour chunks, and with --pushdown and a batch budget
// (prometheus.batch_samples) that one hour of the cluster fills, over 1 h,
// 2 h (one default chunk), 6 h and 24 h of one 100-node × 8-GPU cluster at
// 60 s in a real Prometheus, beside SEEDANCE_BENCH_BASELINE (an older
// seedance binary) when set. Rounds (SEEDANCE_BENCH_ROUNDS, default 3) run
// every case, the binaries alternated in an order rotated each round; each
// figure is min / median / max over the rounds, in MiB.
func BenchmarkPrometheusRangeRSS(b *testing.B) {
	rounds := 3
	if n, err := strconv.Atoi(os.Getenv("SEEDANCE_BENCH_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	srv := backfilled(b, synth.Profile(100, 8, 1440, 60))
	bins := map[string]string{"now": binary}
	if old := baselineBinary(b); old != "" {
		bins["baseline"] = old
	}
	names := []string{"now", "baseline"}[:len(bins)]
	dir := b.TempDir()
	modeArgs := rangeModeArgs(b, dir)
	rss := map[string][]float64{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for r := 0; r < rounds; r++ {
			for _, mode := range rangeModes {
				for _, h := range []int{1, 2, 6, 24} {
					for k := range names {
						name := names[(k+r)%len(names)]
						args := []string{"analyze", "--format", "json", "--output", filepath.Join(dir, "r.json"), "--source", "prometheus",
							"--prometheus-url", srv.URL, "--start", synth.Start.Format(time.RFC3339),
							"--end", synth.Start.Add(time.Duration(h) * time.Hour).Format(time.RFC3339), "--step", "60s"}
						args = append(args, modeArgs[mode]...)
						key := fmt.Sprintf("%s %s %dh", name, mode, h)
						_, _, peak := timeRun(b, bins[name], args...)
						rss[key] = append(rss[key], peak)
					}
				}
			}
		}
	}
	for _, name := range names {
		for _, mode := range rangeModes {
			var line []string
			for _, h := range []int{1, 2, 6, 24} {
				v := rss[fmt.Sprintf("%s %s %dh", name, mode, h)]
				line = append(line, fmt.Sprintf("%dh %s", h, spread(v, "%.0f")))
				b.ReportMetric(median(v), fmt.Sprintf("%s-%s-%dh-rss-MiB", name, mode, h))
			}
			b.Logf("%s %s peak RSS MiB (min / median / max): %s", name, mode, strings.Join(line, "; "))
		}
	}
}

// rangeModes are BenchmarkPrometheusRangeRSS's reads.
var rangeModes = []string{"raw", "pushdown", "pushdown-chunk-1h", "pushdown-batch-50k"}

// rangeModeArgs are each read's flags. pushdown-batch-50k's budget, 50,000
// values, is below the 144,000 that one hour of the cluster's pushdown read
// holds (800 GPUs × 60 steps × 3), so that every range reads full batches:
// what the default budget (2,500,000) does at any range on a fleet whose
// hour holds more (more than about 1,740 such nodes at 60 s, 440 at 15 s).
func rangeModeArgs(b *testing.B, dir string) map[string][]string {
	conf := filepath.Join(dir, "batch.yaml")
	if err := os.WriteFile(conf, []byte("prometheus:\n  batch_samples: 50000\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	return map[string][]string{
		"pushdown":           {"--pushdown"},
		"pushdown-chunk-1h":  {"--pushdown", "--prometheus-chunk", "1h"},
		"pushdown-batch-50k": {"--pushdown", "--config", conf},
	}
}
