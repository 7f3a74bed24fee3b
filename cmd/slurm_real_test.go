package cmd

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/testkit/slurmtest"
	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/recommend"
)

// TestSlurmPlanOnRealController: real jobs on a real slurmctld, a profile
// whose workloads are those jobs, seedance recommend --dialect slurm
// --move-jobs, and the script run with --execute: the running job is
// requeued held, bound to its target and released; the freed node is
// drained after the move; the pending job keeps the node its user asked
// for with -w, and that node is not drained (issues #18, #26).
func TestSlurmPlanOnRealController(t *testing.T) {
	t.Parallel() // its settings are its own (testFactory)
	c := slurmtest.Start(t, "node-gpu-01", "node-gpu-02", "node-gpu-03")
	running := c.Submit(t, "--requeue", "--gres=gpu:2")         // only node-gpu-01 has a slurmd: it runs there
	pending := c.Submit(t, "--gres=gpu:1", "-w", "node-gpu-03") // no slurmd there: it waits
	c.WaitFor(t, func() bool { return c.Job(t, running, "JobState") == "RUNNING" }, "job "+running+" running")

	// node-gpu-01 holds the running job on 2 GPUs; node-gpu-02 is fuller
	// (5 GPUs of a pinned job); the pending 1-GPU job waits on node-gpu-03,
	// which its user asked for. The plan: the running job to node-gpu-02
	// (the fullest that takes it), node-gpu-01 released; node-gpu-03 stays.
	gpus := func(busy float64) []profile.GPU {
		var out []profile.GPU
		for i := 0; i < 8; i++ {
			out = append(out, profile.GPU{Index: i, UUID: "GPU-" + string(rune('a'+i)), Model: "NVIDIA H100 80GB HBM3", MemoryTotalBytes: 80 << 30,
				Series: profile.Series{T: profile.Values{0}, GPUUtilPct: profile.Values{busy}}})
		}
		return out
	}
	p := &profile.Profile{Nodes: []profile.Node{
		{Name: "node-gpu-01", GPUs: gpus(0), Workloads: []profile.Workload{
			{ID: running, Name: running, Kind: profile.KindJob, State: profile.StateRunning, GPUs: []int{0, 1}}}},
		{Name: "node-gpu-02", GPUs: gpus(0), Workloads: []profile.Workload{
			{ID: "other", Name: "other", Kind: profile.KindJob, State: profile.StateRunning, GPUs: []int{0, 1, 2, 3, 4}, Labels: map[string]string{recommend.PinnedLabel: "true"}}}},
		{Name: "node-gpu-03", GPUs: gpus(0), Workloads: []profile.Workload{
			{ID: pending, Name: pending, Kind: profile.KindJob, State: profile.StatePending, GPUCount: 1}}},
	}}
	p.SchemaVersion, p.IntervalS, p.Complete = profile.SchemaVersion, 60, true
	p.StartedAt = time.Now().UTC().Add(-time.Minute).Truncate(time.Second) // within migration.max_plan_age
	p.EndedAt = p.StartedAt.Add(time.Minute)
	dir := t.TempDir()
	in, path := filepath.Join(dir, "p.json"), filepath.Join(dir, "plan.sh")
	if err := profile.WriteFile(in, p); err != nil {
		t.Fatal(err)
	}
	if r := run(t, nil, "recommend", "--input", in, "--dialect", "slurm", "--move-jobs", "--output", path); r.code != 0 || !strings.Contains(r.errOut, "plan: 1 move(s), 1 node(s) released") {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	script, _ := os.ReadFile(path)
	cmd := exec.Command("bash", path, "--execute")
	cmd.Env = c.Env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the plan failed on the controller: %v\n%s\n%s", err, out, script)
	}
	if got := c.Job(t, running, "ReqNodeList"); got != "node-gpu-02" {
		t.Errorf("job %s: ReqNodeList=%s, want node-gpu-02", running, got)
	}
	if got := c.Job(t, pending, "ReqNodeList"); got != "node-gpu-03" {
		t.Errorf("the pending job's -w was overridden: ReqNodeList=%s, want node-gpu-03", got)
	}
	if st := c.Node(t, "node-gpu-03", "State"); strings.Contains(st, "DRAIN") {
		t.Errorf("node-gpu-03, which pending work waits for, was drained: %s", st)
	}
	// A requeued job passes through COMPLETING (slurmctld waits for the
	// epilog) before it is PENDING again: wait for the state, bounded.
	c.WaitFor(t, func() bool { return c.Job(t, running, "JobState") == "PENDING" },
		"the moved job to be PENDING (requeued and released, bound to a node with no slurmd)")
	if reason := c.Job(t, running, "Reason"); strings.Contains(reason, "Held") {
		t.Errorf("the moved job is still held: %s", reason)
	}
	if st := c.Node(t, "node-gpu-01", "State"); !strings.Contains(st, "DRAIN") {
		t.Errorf("node-gpu-01 is %s, want drained", st)
	}
}
