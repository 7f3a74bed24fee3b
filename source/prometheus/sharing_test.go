package prometheus

import (
	"bytes"
	"context"
	"math"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/testkit/dcgmtest"
	"github.com/seedance/seedance/internal/testkit/promtest"
	"github.com/seedance/seedance/profile"
)

// TestSharedGPUsFromPrometheus: a real Prometheus holding one GPU of each
// sharing mode as a kube-prometheus cluster exports it
// (dcgmtest.SharedCluster): the profile says each pod's mode and request
// and HAMi's measured use, and the analysis splits every GPU as worked by
// hand in docs/sharing.md, adding up to the GPU-hours.
func TestSharedGPUsFromPrometheus(t *testing.T) {
	start := time.Now().Add(-3 * time.Hour).Truncate(time.Minute)
	var om bytes.Buffer
	if err := dcgmtest.SharedCluster(&om, start); err != nil {
		t.Fatal(err)
	}
	srv := promtest.Start(t, om.Bytes())
	p, err := Read(context.Background(), Options{URL: srv.URL, Start: start, End: start.Add(600 * time.Second), Step: time.Minute,
		Chunk: 5 * time.Minute, Concurrency: 2, Timeout: 30 * time.Second, Retries: 1, Backoff: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := profile.Validate(p); err != nil {
		t.Fatal(err)
	}
	pods := map[string]profile.Workload{}
	var a1 *profile.GPU
	for ni, n := range p.Nodes {
		for _, w := range n.Workloads {
			pods[w.ID] = w
		}
		for gi, g := range n.GPUs {
			if g.UUID == "GPU-a1" {
				a1 = &p.Nodes[ni].GPUs[gi]
			}
		}
	}
	want := map[string]profile.Sharing{
		"ml/ts-a":   {Mode: profile.ShareTimeSlicing},
		"ml/ts-b":   {Mode: profile.ShareTimeSlicing},
		"ml/hami-c": {Mode: profile.ShareFractional, CoresPct: 60, MemoryBytes: 40 << 30},
		"ml/hami-d": {Mode: profile.ShareFractional, CoresPct: 20, MemoryBytes: 20 << 30},
		"ml/mig-e":  {Mode: profile.ShareMIG},
	}
	for id, s := range want {
		if w, ok := pods[id]; !ok || w.Sharing == nil || *w.Sharing != s {
			t.Errorf("%s: sharing %+v, want %+v", id, pods[id].Sharing, s)
		}
	}
	if a1 == nil || len(a1.Usage) != 2 || a1.Usage[0].Workload != "ml/hami-c" || a1.Usage[0].UtilPct[0] != 30 || a1.Usage[1].UtilPct[4] != 10 || a1.Usage[1].UtilPct[5] != 0 {
		t.Fatalf("GPU-a1 usage %+v", a1)
	}

	got, err := dcgmtest.ByWorkload(p)
	if err != nil {
		t.Fatal(err)
	}
	const h = 1.0 / 3600
	for id, w := range map[string]struct {
		held  float64
		basis string
	}{
		"ml/ts-a": {300, "even"}, "ml/ts-b": {300, "even"},
		// measured 30:10 for 300 s, then cores asked 60:20 (a fifth nobody's).
		"ml/hami-c": {225 + 180, "mixed"}, "ml/hami-d": {75 + 60, "mixed"},
		"ml/mig-e": {600 * 3.0 / 7, "whole"},
	} {
		g := got[id]
		if math.Abs(g.HeldGPUHours-w.held*h) > 1e-6 || g.Basis != w.basis {
			t.Errorf("%s: held %v GPU-h (%s), want %v (%s)", id, g.HeldGPUHours, g.Basis, w.held*h, w.basis)
		}
	}
	sum := 0.0
	for _, g := range got {
		sum += g.HeldGPUHours
	}
	if math.Abs(sum-3*600*h) > 1e-6 { // three physical GPUs, 600 s each
		t.Errorf("held in all %v GPU-h, want %v", sum, 3*600*h)
	}
}
