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
	b := NewBuilder()
	id := Identity{Key: GPUKey{Node: "n", UUID: "GPU-1"}}
	b.Add(id, "DCGM_FI_DEV_GPU_UTIL", []Pair{{3000, 3}, {1000, 1}, {2000, 2}, {2000, 22}})
	b.Add(id, "DCGM_FI_DEV_POWER_USAGE", []Pair{{2000, 200}, {500, 50}})
	b.Add(id, "DCGM_FI_DEV_GPU_UTIL", []Pair{{4000, 4}, {3500, 35}})
	g := b.Build(0)[0].GPUs[0]
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
	b := NewBuilder()
	for _, g := range [][2]string{{"0", "4242"}, {"1", "4242"}, {"2", "77"}, {"3", ""}} {
		id, ok := ParseLabels(labels(g[0], g[1]))
		if !ok || id.HPCJob != g[1] {
			t.Fatalf("labels %v: %+v", g, id)
		}
		b.Add(id, "DCGM_FI_DEV_GPU_UTIL", []Pair{{1000, 50}})
	}
	ws := b.Build(0)[0].Workloads
	if len(ws) != 2 || ws[0].ID != "4242" || fmt.Sprint(ws[0].GPUs) != "[0 1]" || ws[0].Kind != profile.KindJob || ws[1].ID != "77" || fmt.Sprint(ws[1].GPUs) != "[2]" {
		t.Fatalf("workloads %+v", ws)
	}
}
