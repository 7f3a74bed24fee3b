package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// BenchmarkLedgerUpdateFile (#56): a day of SEEDANCE_BENCH_NODES (default
// 100) simulated nodes × 8 GPUs, a sample every 30 s, counted from a file
// into a ledger that holds the hour before it: `ledger update -i` in steps
// of an hour (the default ledger.step) and in one (--ledger-step 24h),
// against `analyze -i` of the same file, alternated over 3 rounds; CPU
// time and peak RSS of each, and the two ledgers' reports compared:
// go test ./cmd -run XXX -bench LedgerUpdateFile -benchtime 1x
func BenchmarkLedgerUpdateFile(b *testing.B) {
	nodes := 100
	if n, err := strconv.Atoi(os.Getenv("SEEDANCE_BENCH_NODES")); err == nil && n > 0 {
		nodes = n
	}
	dir := b.TempDir()
	first, day := filepath.Join(dir, "first.json"), filepath.Join(dir, "day.json")
	sim := []string{"profile", "--source", "sim", "--sim-nodes", fmt.Sprint(nodes), "--interval", "30s"}
	timeRun(b, binary, append(sim, "--duration", "3600", "-o", first)...)
	timeRun(b, binary, append(sim, "--duration", "86400", "--sim-start", "2026-01-05T10:00:00Z", "-o", day)...)
	prepared := filepath.Join(dir, "prepared.db")
	timeRun(b, binary, "ledger", "update", "--ledger", prepared, "-i", first)
	b.ResetTimer()
	for round := range 3 {
		_, aCPU, aRSS := timeRun(b, binary, "analyze", "-i", day, "-f", "json", "-o", filepath.Join(dir, "r.json"))
		var reports []string
		for _, step := range []string{"1h", "24h"} {
			led := filepath.Join(dir, fmt.Sprintf("l%d-%s.db", round, step))
			copyFile(b, prepared, led)
			_, cpu, rss := timeRun(b, binary, "ledger", "update", "--ledger", led, "--ledger-step", step, "-i", day)
			b.Logf("round %d: update in steps of %s: %.2f s CPU, %.0f MiB; analyze: %.2f s, %.0f MiB", round+1, step, cpu.Seconds(), rss, aCPU.Seconds(), aRSS)
			out := filepath.Join(dir, "rep-"+step+".json")
			timeRun(b, binary, "ledger", "report", "--ledger", led, "--by", "namespace", "-f", "json", "-o", out)
			rep, err := os.ReadFile(out)
			if err != nil {
				b.Fatal(err)
			}
			reports = append(reports, string(rep))
		}
		if reports[0] != reports[1] {
			b.Fatal("the ledger counted in steps differs from the one counted at once")
		}
	}
}
