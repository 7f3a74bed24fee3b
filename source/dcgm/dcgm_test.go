package dcgm

import (
	"fmt"
	"testing"
	"time"

	"github.com/seedance/seedance/profile"
)

// TestPairsOutOfOrder: samples that run backwards or repeat a timestamp
// (a misbehaving Prometheus) give an ascending time axis, no panic.
func TestPairsOutOfOrder(t *testing.T) {
	b := NewBuilder(0)
	id := Identity{Key: GPUKey{Node: "n", UUID: "GPU-1"}}
	b.Add(id, "DCGM_FI_DEV_GPU_UTIL", []Pair{{3000, 3}, {1000, 1}, {2000, 2}, {2000, 22}})
	b.Add(id, "DCGM_FI_DEV_POWER_USAGE", []Pair{{2000, 200}, {500, 50}})
	b.Add(id, "DCGM_FI_DEV_GPU_UTIL", []Pair{{4000, 4}, {3500, 35}})
	g := build(t, b, 0, 5000)[0].GPUs[0]
	if got := fmt.Sprint(g.Series.T); got != "[0.5 1 2 3 3.5 4]" {
		t.Fatalf("t = %s", got)
	}
	if got := fmt.Sprint(g.Series.GPUUtilPct); got != "[NaN 1 22 3 35 4]" {
		t.Fatalf("util = %s", got)
	}
	p := &profile.Profile{SchemaVersion: profile.SchemaVersion, StartedAt: time.UnixMilli(0), EndedAt: time.UnixMilli(5000), IntervalS: 1,
		Nodes: []profile.Node{{Name: "n", GPUs: []profile.GPU{g}}}}
	if err := profile.Validate(p); err != nil {
		t.Fatal(err)
	}
}

// TestHPCJob: dcgm-exporter's hpc_job label (its HPC job mapping) makes the
// GPUs' Slurm job a running workload of kind job, one per job.
func TestHPCJob(t *testing.T) {
	labels := func(gpu, job string) func(string) string {
		m := map[string]string{"Hostname": "n", "gpu": gpu, "UUID": "GPU-" + gpu, "hpc_job": job}
		return func(k string) string { return m[k] }
	}
	b := NewBuilder(0)
	for _, g := range [][2]string{{"0", "4242"}, {"1", "4242"}, {"2", "77"}, {"3", ""}} {
		id, ok := ParseLabels(labels(g[0], g[1]))
		if !ok || id.HPCJob != g[1] {
			t.Fatalf("labels %v: %+v", g, id)
		}
		b.Add(id, "DCGM_FI_DEV_GPU_UTIL", []Pair{{1000, 50}})
	}
	ws := build(t, b, 0, 5000)[0].Workloads
	if len(ws) != 2 || ws[0].ID != "4242" || fmt.Sprint(ws[0].GPUs) != "[0 1]" || ws[0].Kind != profile.KindJob || ws[1].ID != "77" || fmt.Sprint(ws[1].GPUs) != "[2]" {
		t.Fatalf("workloads %+v", ws)
	}
}

// TestTenure: the samples whose labels name a workload give it its
// intervals (ms here, seconds in the profile): a pod that starts mid-range,
// one that leaves and comes back after a gap, a job seen on two GPUs, and
// one seen at every sample, which has none (the whole range).
func TestTenure(t *testing.T) {
	b := NewBuilder(10_000)
	pod := func(gpu, pod, job string) Identity {
		m := map[string]string{"Hostname": "n", "gpu": gpu, "UUID": "GPU-" + gpu, "namespace": "ml", "pod": pod, "container": "main", "hpc_job": job}
		id, ok := ParseLabels(func(k string) string { return m[k] })
		if !ok {
			t.Fatal(m)
		}
		return id
	}
	at := func(ts ...int64) []Pair {
		var out []Pair
		for _, t := range ts {
			out = append(out, Pair{t, 50})
		}
		return out
	}
	// GPU 0: nothing until 30 s, then late-0 from 30 s to the end (60 s).
	b.Add(pod("0", "", ""), "DCGM_FI_DEV_GPU_UTIL", at(0, 10_000, 20_000))
	b.Add(pod("0", "late-0", ""), "DCGM_FI_DEV_GPU_UTIL", at(30_000, 40_000, 50_000))
	b.Add(pod("0", "late-0", ""), "DCGM_FI_DEV_POWER_USAGE", at(30_000, 40_000, 50_000)) // the same samples again
	// GPU 1: back-0 at 0–10 s, away 20 s and 30 s (a 30 s gap, more than
	// 2 × 10 s), back at 40 s; the samples come out of order.
	b.Add(pod("1", "back-0", ""), "DCGM_FI_DEV_GPU_UTIL", at(40_000, 0, 10_000, 50_000))
	// GPUs 2 and 3: job 7 on GPU 2 for 0–20 s, on GPU 3 for 20–40 s.
	b.Add(pod("2", "", "7"), "DCGM_FI_DEV_GPU_UTIL", at(0, 10_000))
	b.Add(pod("3", "", "7"), "DCGM_FI_DEV_GPU_UTIL", at(20_000, 30_000))
	// GPU 4: always-0 at every sample.
	b.Add(pod("4", "always-0", ""), "DCGM_FI_DEV_GPU_UTIL", at(0, 10_000, 20_000, 30_000, 40_000, 50_000))
	got := map[string]string{}
	for _, w := range build(t, b, 0, 60_000)[0].Workloads {
		got[w.ID] = fmt.Sprint(w.Intervals)
	}
	want := map[string]string{"ml/late-0": "[{30 60}]", "ml/back-0": "[{0 20} {40 60}]", "7": "[{0 40}]", "ml/always-0": "[]"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("tenure %v, want %v", got, want)
	}
}

// TestMergeInTheMiddle: times that fall between existing ones (a metric read
// at a scrape utilization missed) are put in place, every column re-spaced
// from there on and the earlier part left as it was.
func TestMergeInTheMiddle(t *testing.T) {
	b := NewBuilder(0)
	id := Identity{Key: GPUKey{Node: "n", UUID: "GPU-1"}}
	b.Add(id, "DCGM_FI_DEV_GPU_UTIL", []Pair{{1000, 1}, {2000, 2}, {3000, 3}, {4000, 4}})
	b.Add(id, "DCGM_FI_DEV_POWER_USAGE", []Pair{{1000, 100}, {2000, 200}, {3000, 300}, {4000, 400}})
	b.AddTimes(id.Key, []int64{2500, 3000, 4500})
	b.Add(id, "DCGM_FI_DEV_SM_CLOCK", []Pair{{1500, 15}, {3000, 30}})
	g := build(t, b, 0, 5000)[0].GPUs[0]
	for what, got := range map[string]string{
		"t":     fmt.Sprint(g.Series.T),
		"util":  fmt.Sprint(g.Series.GPUUtilPct),
		"power": fmt.Sprint(g.Series.PowerW),
		"clock": fmt.Sprint(g.Series.SMClockMHz),
	} {
		want := map[string]string{
			"t":     "[1 1.5 2 2.5 3 4 4.5]",
			"util":  "[1 NaN 2 NaN 3 4 NaN]",
			"power": "[100 NaN 200 NaN 300 400 NaN]",
			"clock": "[NaN 15 NaN NaN 30 NaN NaN]",
		}[what]
		if got != want {
			t.Errorf("%s = %s, want %s", what, got, want)
		}
	}
}

// BenchmarkMergeChunks adds a day of one GPU chunk by chunk, with one
// scrape per chunk that only another metric saw (pushdown's case): the cost
// per sample must not grow with the number of chunks before it. Compare
// -bench 'MergeChunks/chunks=(3|12)$'.
func BenchmarkMergeChunks(b *testing.B) {
	for _, chunks := range []int{3, 12, 48} {
		b.Run(fmt.Sprintf("chunks=%d", chunks), func(b *testing.B) {
			const perChunk = 480 // 2 h at 15 s
			for i := 0; i < b.N; i++ {
				bd := NewBuilder(15000)
				id := Identity{Key: GPUKey{Node: "n", UUID: "GPU-1"}}
				for c := 0; c < chunks; c++ {
					pairs := make([]Pair, 0, perChunk)
					for k := 0; k < perChunk; k++ {
						if k != 7 {
							pairs = append(pairs, Pair{int64(c*perChunk+k) * 15000, 50})
						}
					}
					bd.Add(id, "DCGM_FI_DEV_GPU_UTIL", pairs)
					bd.Add(id, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", []Pair{pairs[0], pairs[len(pairs)-1]})
					bd.AddTimes(id.Key, []int64{int64(c*perChunk+7) * 15000})
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*chunks*480), "ns/sample")
		})
	}
}

// build is b.Build for a test whose GPUs have one index each.
func build(t *testing.T, b *Builder, lo, hi int64) []profile.Node {
	t.Helper()
	nodes, err := b.Build(lo, hi)
	if err != nil {
		t.Fatal(err)
	}
	return nodes
}
