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
