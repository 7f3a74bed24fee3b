package cmd

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/testkit/synth"
)

// BenchmarkPrometheusRangeRSS is issue #30's pushdown target: the peak RSS
// of analyze --source prometheus, raw, with --pushdown, and with
// --pushdown in 1-hour chunks, over 1 h, 2 h (one default chunk), 6 h and
// 24 h of one 100-node × 8-GPU cluster at 60 s in a real Prometheus, beside SEEDANCE_BENCH_BASELINE (an older
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
						args = append(args, rangeModeArgs[mode]...)
						key := fmt.Sprintf("%s %s %dh", name, mode, h)
						rss[key] = append(rss[key], peakRSS(b, dir, bins[name], args...))
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

// rangeModes are BenchmarkPrometheusRangeRSS's reads, with their flags.
var (
	rangeModes    = []string{"raw", "pushdown", "pushdown-chunk-1h"}
	rangeModeArgs = map[string][]string{"pushdown": {"--pushdown"}, "pushdown-chunk-1h": {"--pushdown", "--prometheus-chunk", "1h"}}
)

// peakRSS runs the binary through GNU time (the child's own ru_maxrss would
// count this process's pages up to exec) and returns its peak RSS in MiB.
func peakRSS(b *testing.B, dir, bin string, args ...string) float64 {
	out := filepath.Join(dir, "rss")
	c := exec.Command("/usr/bin/time", append([]string{"-f", "%M", "-o", out, bin}, args...)...)
	c.Env = []string{"HOME=" + dir, "TMPDIR=" + dir}
	if o, err := c.CombinedOutput(); err != nil {
		b.Fatalf("%s: %v: %s", bin, err, o)
	}
	kb, err := os.ReadFile(out)
	if err != nil {
		b.Fatal(err)
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(kb)))
	if err != nil {
		b.Fatalf("GNU time wrote %q", kb)
	}
	return float64(v) / 1024
}
