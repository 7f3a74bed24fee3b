package cmd

import (
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/testkit/dcgmtest"
	"github.com/seedance/seedance/internal/testkit/promtest"
	"github.com/seedance/seedance/internal/testkit/synth"
)

// BenchmarkLedgerUpdate1000Nodes: on 1,000 nodes × 8 GPUs scraped every
// 15 s (SEEDANCE_BENCH_HOURS, default 2, backfilled into a real
// Prometheus; SEEDANCE_BENCH_TSDB keeps it), the CPU time (seedance's and
// the engine's) of a 5-minute ledger update with --pushdown, against a
// one-shot --pushdown analyze of the whole range, in the same run,
// alternated over 3 rounds: the ratio's min/median/max, and the update's
// peak RSS.
func BenchmarkLedgerUpdate1000Nodes(b *testing.B) {
	hours := benchHours(2)
	dir := os.Getenv("SEEDANCE_BENCH_TSDB")
	if dir == "" {
		dir = b.TempDir()
	}
	srv := fleetPrometheus(b, dir, hours)
	end := synth.Start.Add(time.Duration(hours) * time.Hour)
	src := []string{"--source", "prometheus", "--prometheus-url", srv.URL, "--step", "15s", "--pushdown"}
	// The ledger of the 4 hours before the last 5 minutes (at most the
	// range), written once by hourly updates; each round updates a copy of
	// it. What a 5-minute update reads and writes does not depend on how
	// much history the ledger holds before its carried tail.
	prepared := filepath.Join(b.TempDir(), "prepared.db")
	first := end.Add(-4*time.Hour - 5*time.Minute)
	if first.Before(synth.Start) {
		first = synth.Start
	}
	for from := first; from.Before(end.Add(-5 * time.Minute)); from = from.Add(time.Hour) {
		to := from.Add(time.Hour)
		if last := end.Add(-5 * time.Minute); to.After(last) {
			to = last
		}
		args := []string{"ledger", "update", "--ledger", prepared, "--end", to.Format(time.RFC3339)}
		if from.Equal(first) {
			args = append(args, "--start", from.Format(time.RFC3339))
		}
		cpuRun(b, srv, append(args, src...)...)
	}
	waitIdle(b, srv)
	b.ResetTimer()
	var ratios []float64
	var rss float64
	for round := range 3 {
		tmp := b.TempDir()
		oneCPU, oneEngine, _ := cpuRun(b, srv, append([]string{"analyze", "-f", "json", "-o", filepath.Join(tmp, "r.json"),
			"--start", synth.Start.Format(time.RFC3339), "--end", end.Format(time.RFC3339)}, src...)...)
		led := filepath.Join(tmp, "ledger.db")
		copyFile(b, prepared, led)
		if _, err := os.Stat(prepared + "-wal"); err == nil {
			copyFile(b, prepared+"-wal", led+"-wal")
		}
		upCPU, upEngine, upRSS := cpuRun(b, srv, append([]string{"ledger", "update", "--ledger", led, "--end", end.Format(time.RFC3339)}, src...)...)
		ratio := (upCPU + upEngine).Seconds() / (oneCPU + oneEngine).Seconds()
		b.Logf("round %d: one-shot %dh: seedance %.2fs + engine %.2fs; 5-minute update: seedance %.3fs + engine %.3fs, %.1f MiB; ratio %.4f (1/%.0f)",
			round+1, hours, oneCPU.Seconds(), oneEngine.Seconds(), upCPU.Seconds(), upEngine.Seconds(), upRSS, ratio, 1/ratio)
		ratios = append(ratios, ratio)
		rss = max(rss, upRSS)
	}
	sort.Float64s(ratios)
	b.ReportMetric(ratios[0], "ratio-min")
	b.ReportMetric(ratios[1], "ratio-median")
	b.ReportMetric(ratios[2], "ratio-max")
	b.ReportMetric(rss, "update-maxrss-MiB")
}

// cpuRun runs the binary and returns its CPU time (user + sys), the
// engine's CPU time meanwhile, and its peak RSS in MiB (timeRun).
func cpuRun(b *testing.B, srv *promtest.Server, args ...string) (cpu, engineCPU time.Duration, rssMiB float64) {
	engine := srv.CPU()
	_, cpu, rssMiB = timeRun(b, binary, args...)
	return cpu, srv.CPU() - engine, rssMiB
}

func copyFile(b *testing.B, from, to string) {
	data, err := os.ReadFile(from)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		b.Fatal(err)
	}
}

// waitIdle waits, up to 40 minutes, until the engine spends under 2 % of
// a core over 20 s: a TSDB backfilled in slices is compacted in the
// background once the server starts, and that work would otherwise be
// counted in the first rounds' engine CPU.
func waitIdle(b *testing.B, srv *promtest.Server) {
	deadline := time.Now().Add(40 * time.Minute)
	for time.Now().Before(deadline) {
		before := srv.CPU()
		time.Sleep(20 * time.Second)
		if used := srv.CPU() - before; used < 400*time.Millisecond {
			return
		}
	}
	b.Fatal("the engine is still busy after 40 minutes")
}

// benchHours is SEEDANCE_BENCH_HOURS (1 to 24), else def.
func benchHours(def int) int {
	if h, err := strconv.Atoi(os.Getenv("SEEDANCE_BENCH_HOURS")); err == nil && h > 0 && h <= 24 {
		return h
	}
	return def
}

// fleetPrometheus is a real Prometheus holding hours of 1,000 synthetic
// nodes × 8 GPUs scraped every 15 s from synth.Start, its TSDB in dir.
func fleetPrometheus(b *testing.B, dir string, hours int) *promtest.Server {
	return promtest.StartSlicesIn(b, dir, hours, func(i int, w io.Writer) error {
		return dcgmtest.WriteOpenMetrics(w, synth.Slice(1000, 8, i*240, 240, 15))
	})
}
