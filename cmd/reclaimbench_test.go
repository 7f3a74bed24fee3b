package cmd

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"
)

// BenchmarkReclaimCPU (docs/performance.md, Reclaim): the CPU time (user +
// sys) of a dry-run reclaim pass over 1,000 simulated nodes × 8 GPUs,
// against the analyze pass over the same profile, in alternated rounds
// (SEEDANCE_BENCH_ROUNDS, default 3; min / median / max). The profile
// ends now, so that reclaim assesses every workload (stale data would
// make it stop early and look cheaper than it is).
func BenchmarkReclaimCPU(b *testing.B) {
	rounds := 3
	if n, err := strconv.Atoi(os.Getenv("SEEDANCE_BENCH_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	dir := b.TempDir()
	path, cfg := filepath.Join(dir, "fleet.json"), filepath.Join(dir, "seedance.yaml")
	start := time.Now().UTC().Add(-30 * time.Minute).Format(time.RFC3339)
	if out, err := exec.Command(binary, "profile", "--source", "sim", "--sim-nodes", "1000", "--sim-start", start, "--duration", "30m",
		"--interval", "10s", "-o", path, "--quiet").CombinedOutput(); err != nil {
		b.Fatalf("%v: %s", err, out)
	}
	if err := os.WriteFile(cfg, []byte("reclaim: {idle_for: 10m, max_staleness: 6h}\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	cases := []readCase{
		{"analyze", child(binary, "analyze", path, "-f", "json", "-o", filepath.Join(dir, "report.json"))},
		{"reclaim (dry run)", child(binary, "--config", cfg, "reclaim", "-i", path)},
	}
	for i := 0; i < b.N; i++ {
		cpu := map[string][]float64{}
		for r := 0; r < rounds; r++ {
			for k := range cases {
				c := cases[(k+r)%len(cases)]
				s, _, err := c.run()
				if err != nil {
					b.Fatalf("%s: %v", c.name, err)
				}
				cpu[c.name] = append(cpu[c.name], s)
			}
		}
		for _, c := range cases {
			v := slices.Sorted(slices.Values(cpu[c.name]))
			b.Logf("%-18s CPU s %.2f / %.2f / %.2f", c.name, v[0], v[len(v)/2], v[len(v)-1])
		}
		a, rc := slices.Sorted(slices.Values(cpu["analyze"])), slices.Sorted(slices.Values(cpu["reclaim (dry run)"]))
		b.Logf("reclaim ÷ analyze (medians): %.2f×", rc[len(rc)/2]/a[len(a)/2])
	}
}
