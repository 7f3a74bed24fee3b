package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/testkit/slurmtest"
	"github.com/seedance/seedance/profile"
)

// reclaimSlurmProfile writes four hours of idle minute samples of
// node-gpu-01, whose GPUs the jobs hold one each, ending at end.
func reclaimSlurmProfile(t *testing.T, path string, end time.Time, jobs ...string) {
	t.Helper()
	var ws []profile.Workload
	for g, id := range jobs {
		ws = append(ws, profile.Workload{ID: id, Name: id, Kind: profile.KindJob, State: profile.StateRunning,
			GPUs: []int{g}, Labels: map[string]string{"user": "root", "account": "physics", "partition": "gpu"}})
	}
	minuteProfile(t, path, "node-gpu-01", end, len(jobs), func(int, int) float64 { return 0 }, ws...)
}

// TestReclaimSlurm runs reclaim against a real slurmctld (two CPUs: two
// jobs at once): at the grace's end an idle job that is not requeueable
// is cancelled, naming its owner, while a requeueable one that its owner
// kept for 35 minutes is left running; when the keep ends it is requeued
// held, and restore releases it. The notices go through the command
// channel (a program with the notice's JSON on stdin).
func TestReclaimSlurm(t *testing.T) {
	c := slurmtest.Start(t, "node-gpu-01")
	c.UseConf(t)
	requeue := c.Submit(t, "--requeue", "--gres=gpu:1")
	cancel := c.Submit(t, "--no-requeue", "--gres=gpu:1")
	for _, id := range []string{requeue, cancel} {
		c.WaitFor(t, func() bool { return c.Job(t, id, "JobState") == "RUNNING" }, "job "+id+" running")
	}
	dir := t.TempDir()
	db, cfgFile, notices := filepath.Join(dir, "ledger.db"), filepath.Join(dir, "seedance.yaml"), filepath.Join(dir, "notices.jsonl")
	if err := os.WriteFile(cfgFile, []byte(fmt.Sprintf("reclaim:\n  grace: 30m\n  max_namespace_share: 1\n  command: [tee, -a, %q]\n", notices)), 0o600); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().UTC().Truncate(time.Second)
	first, second, third := filepath.Join(dir, "p1.json"), filepath.Join(dir, "p2.json"), filepath.Join(dir, "p3.json")
	reclaimSlurmProfile(t, first, t0, requeue, cancel)
	reclaimSlurmProfile(t, second, t0.Add(31*time.Minute), requeue, cancel)
	reclaimSlurmProfile(t, third, t0.Add(37*time.Minute), requeue)
	args := func(input string) []string {
		return []string{"reclaim", "--config", cfgFile, "-i", input, "--ledger", db, "--gpu-price", "H100=2.49", "--execute"}
	}
	if r := runAt(t, t0.Add(30*time.Second), args(first)...); r.code != 0 || !strings.Contains(r.errOut, "2 candidates, 2 notices") {
		t.Fatalf("first pass: exit %d\n%s\n%s", r.code, r.out, r.errOut)
	}
	b, _ := os.ReadFile(notices)
	if n := strings.Count(string(b), `"text":`); n != 2 || !strings.Contains(string(b), `"text":"`+requeue+` has held 1 × NVIDIA H100 80GB HBM3 idle for at least 4h: $9.96 so far, $2.49 an hour; it will be requeued and held`) {
		t.Fatalf("%d notices through the command:\n%s", n, b)
	}
	if r := runAt(t, t0.Add(time.Minute), "reclaim", "keep", requeue, "--for", "35m", "--ledger", db); r.code != 0 {
		t.Fatalf("keep: exit %d\n%s", r.code, r.errOut)
	}
	r := runAt(t, t0.Add(31*time.Minute+30*time.Second), args(second)...)
	if r.code != 0 || !strings.Contains(r.out, cancel+": acted (cancelled (owner root") || !strings.Contains(r.out, requeue+": kept (kept until") {
		t.Fatalf("the pass at the deadline: exit %d\n%s\n%s", r.code, r.out, r.errOut)
	}
	c.WaitFor(t, func() bool { return c.Job(t, cancel, "JobState") == "CANCELLED" }, "job "+cancel+" cancelled")
	if s := c.Job(t, requeue, "JobState"); s != "RUNNING" {
		t.Errorf("the kept job is %s", s)
	}
	r = runAt(t, t0.Add(37*time.Minute+30*time.Second), args(third)...)
	if r.code != 0 || !strings.Contains(r.out, requeue+": acted (requeued held (owner root") {
		t.Fatalf("the pass after the keep: exit %d\n%s\n%s", r.code, r.out, r.errOut)
	}
	c.WaitFor(t, func() bool {
		return c.Job(t, requeue, "JobState") == "PENDING" && strings.Contains(c.Job(t, requeue, "Reason"), "held")
	}, "job "+requeue+" requeued held")
	if r := runAt(t, t0.Add(45*time.Minute), "reclaim", "restore", requeue, "--execute", "--ledger", db); r.code != 0 || !strings.Contains(r.out, requeue+": released") {
		t.Fatalf("restore: exit %d\n%s\n%s", r.code, r.out, r.errOut)
	}
	c.WaitFor(t, func() bool { return !strings.Contains(c.Job(t, requeue, "Reason"), "held") }, "job "+requeue+" released")
}
