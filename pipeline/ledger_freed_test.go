package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/reclaim"
)

// freedNode is a node of H100s, a sample a minute from t0 for the minutes
// given, its GPUs idle, the workloads holding them.
func freedNode(name string, gpus, minutes int, ws ...profile.Workload) profile.Node {
	n := profile.Node{Name: name, Workloads: ws}
	for g := range gpus {
		gpu := profile.GPU{Index: g, UUID: fmt.Sprintf("GPU-%s-%d", name, g), Model: "NVIDIA H100 80GB HBM3"}
		for i := range minutes {
			gpu.Series.T = append(gpu.Series.T, float64(i*60))
			gpu.Series.GPUUtilPct = append(gpu.Series.GPUUtilPct, 0)
		}
		n.GPUs = append(n.GPUs, gpu)
	}
	return n
}

// TestFreedCapacity (#55): what became of the GPUs reclaim freed, worked by
// hand over the whole hours after each action at 10:00 to the window's end
// at 13:00. On n1 the Deployment serve held 4 GPUs to 10:00; the Job train
// takes 2 of them from 11:00: of 12 GPU-hours freed, 4 are reused and 8
// stay idle. On n2 the Deployment c held 2 GPUs to 10:00 and the node is
// gone from 11:00: of 6 GPU-hours freed, 4 are released and 2 idle.
func TestFreedCapacity(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	pod := func(id, controller string, gpus []int, from, to float64) profile.Workload {
		return profile.Workload{ID: id, Kind: profile.KindPod, State: profile.StateRunning, GPUs: gpus,
			Labels: map[string]string{"namespace": "ml", profile.ControllerLabel: controller}, Intervals: []profile.Tenure{{StartS: from, EndS: to}}}
	}
	p := &profile.Profile{SchemaVersion: profile.SchemaVersion, Generator: profile.Generator{Name: "test"}, StartedAt: t0, EndedAt: t0.Add(4 * time.Hour),
		IntervalS: 60, Complete: true, Nodes: []profile.Node{
			freedNode("n1", 4, 240, pod("ml/serve-a", "Deployment/serve", []int{0, 1, 2, 3}, 0, 3600), pod("ml/train-b", "Job/train", []int{0, 1}, 7200, 14400)),
			freedNode("n2", 2, 120, pod("ml/c-1", "Deployment/c", []int{0, 1}, 0, 3600)),
		}}
	acted := t0.Add(time.Hour)
	eps := []reclaim.Episode{
		{Target: reclaim.Target{Kind: reclaim.KindDeployment, Namespace: "ml", Name: "serve"}, IdleSince: t0, GPUs: 4, USDPerHour: 9.96, ActedAt: acted, State: reclaim.Acted, Labels: map[string]string{"team": "a"}},
		{Target: reclaim.Target{Kind: reclaim.KindDeployment, Namespace: "ml", Name: "c"}, IdleSince: t0, GPUs: 2, USDPerHour: 4.98, ActedAt: acted, State: reclaim.Acted, Labels: map[string]string{"team": "c"}},
		{Target: reclaim.Target{Kind: reclaim.KindDeployment, Namespace: "ml", Name: "unseen"}, IdleSince: t0, GPUs: 1, USDPerHour: 2.49, ActedAt: acted, State: reclaim.Acted},
	}
	for i := range eps {
		eps[i].Updated = acted
	}
	cfg := ledgerWithEpisodes(t, p, eps)
	c := reportJSON(t, cfg, time.Time{}).Reclaimed.Capacity
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-6 }
	if c == nil || !near(c.GPUHours, 18) || !near(c.ReusedGPUHours, 4) || !near(c.ReleasedGPUHours, 4) || !near(c.IdleGPUHours, 10) || c.Unknown != 1 {
		t.Fatalf("freed capacity %+v, want 18 GPU-h: 4 reused, 4 released, 10 idle; 1 episode unknown", c)
	}
	var b bytes.Buffer
	if err := LedgerReport(ctx, LedgerReportSpec{Config: cfg, Format: "table", Output: "-"}, &b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "Freed capacity over the whole buckets after each action: 18.0 GPU-hours; reused by other work 4.0, released 4.0, idle 10.0") {
		t.Errorf("the table:\n%s", b.String())
	}
}
