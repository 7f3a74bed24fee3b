package pipeline

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/reclaim"
	"github.com/seedance/seedance/reclaim/act"
)

// recorder is a notice channel and an actor that keep what they were
// asked: the caps are the pipeline's, tested here without a cluster (the
// real actors are tested against real controllers in cmd).
type recorder struct{ notices, acts []string }

func (r *recorder) Name() string { return "recorder" }
func (r *recorder) Notify(_ context.Context, n act.Notice, _ time.Time) error {
	r.notices = append(r.notices, n.Target)
	return nil
}
func (r *recorder) Answered(context.Context, act.Notice, time.Time) (string, error) { return "", nil }
func (r *recorder) Check(context.Context, reclaim.Target, time.Time) (string, error) {
	return "", nil
}
func (r *recorder) Act(_ context.Context, t reclaim.Target, _ time.Time) (string, string, error) {
	r.acts = append(r.acts, t.String())
	return "scaled to 0 from 1", "1", nil
}
func (r *recorder) Restore(context.Context, reclaim.Target) (string, error) { return "", nil }

// idleOwners writes four hours of idle minute samples of one GPU per
// Deployment, ending at end: ml/a, ml/b, ml/c and ops/d.
func idleOwners(t *testing.T, path string, end time.Time) {
	n := profile.Node{Name: "n1"}
	for g, id := range []string{"ml/a", "ml/b", "ml/c", "ops/d"} {
		ns, name, _ := strings.Cut(id, "/")
		gpu := profile.GPU{Index: g, UUID: "GPU-" + name, Model: "NVIDIA H100 80GB HBM3"}
		for i := 0; i < 240; i++ {
			gpu.Series.T = append(gpu.Series.T, float64(i*60))
			gpu.Series.GPUUtilPct = append(gpu.Series.GPUUtilPct, 0)
		}
		n.GPUs = append(n.GPUs, gpu)
		n.Workloads = append(n.Workloads, profile.Workload{ID: ns + "/" + name + "-0", Kind: profile.KindPod, State: profile.StateRunning, GPUs: []int{g},
			Labels: map[string]string{"namespace": ns, profile.ControllerLabel: "Deployment/" + name}})
	}
	p := &profile.Profile{SchemaVersion: profile.SchemaVersion, Generator: profile.Generator{Name: "test"}, StartedAt: end.Add(-4 * time.Hour),
		EndedAt: end, IntervalS: 60, Complete: true, Nodes: []profile.Node{n}}
	if err := profile.WriteFile(path, p); err != nil {
		t.Fatal(err)
	}
}

// TestReclaimCaps: a pass takes at most max_actions_per_run actions, at
// most max_namespace_share of a namespace's targets (at least one), and
// no more than max_actions_per_hour in any hour, counted in the ledger.
func TestReclaimCaps(t *testing.T) {
	dir := t.TempDir()
	end := time.Date(2026, 12, 1, 13, 0, 0, 0, time.UTC)
	first, second := filepath.Join(dir, "p1.json"), filepath.Join(dir, "p2.json")
	idleOwners(t, first, end)
	idleOwners(t, second, end.Add(time.Hour+2*time.Minute))
	cfg := configWith(t, "ledger.dsn", filepath.Join(dir, "ledger.db"), "reclaim.max_actions_per_run", 3,
		"reclaim.max_actions_per_hour", 3, "reclaim.max_namespace_share", 0.5)
	rec := &recorder{}
	var lines []string
	pass := func(in string, now time.Time) *ReclaimPass {
		p, err := Reclaim(context.Background(), ReclaimSpec{Config: cfg, Inputs: []string{in}, Execute: true, Now: func() time.Time { return now },
			Notifiers: []act.Notifier{rec}, Actors: act.Actors{Kube: rec}, Line: func(s string) { lines = append(lines, s) }})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	if p := pass(first, end.Add(time.Minute)); p.Notices != 4 || len(rec.acts) != 0 {
		t.Fatalf("first pass: %+v, acts %v", p, rec.acts)
	}
	// ml has 3 targets: half of them is 1; ops has 1: at least 1.
	pass(second, end.Add(time.Hour+2*time.Minute+30*time.Second))
	if strings.Join(rec.acts, " ") != "ml/Deployment/a ops/Deployment/d" {
		t.Fatalf("acted on %v\n%s", rec.acts, strings.Join(lines, "\n"))
	}
	if !strings.Contains(strings.Join(lines, "\n"), "ml/Deployment/b: capped (reclaim.max_namespace_share of namespace ml reached)") {
		t.Errorf("no capped line:\n%s", strings.Join(lines, "\n"))
	}
	// The next pass may act once more in this hour (3 an hour), and on
	// one of ml's remaining two.
	pass(second, end.Add(time.Hour+3*time.Minute))
	pass(second, end.Add(time.Hour+4*time.Minute))
	if strings.Join(rec.acts, " ") != "ml/Deployment/a ops/Deployment/d ml/Deployment/b" {
		t.Fatalf("acted on %v\n%s", rec.acts, strings.Join(lines, "\n"))
	}
	if !strings.Contains(strings.Join(lines, "\n"), "ml/Deployment/c: capped (reclaim.max_actions_per_hour reached)") {
		t.Errorf("no hourly cap:\n%s", strings.Join(lines, "\n"))
	}
}
