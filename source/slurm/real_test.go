package slurm

import (
	"context"
	"github.com/seedance/seedance/internal/extcmd"
	"os/user"
	"strings"
	"testing"

	"github.com/seedance/seedance/internal/testkit/slurmtest"
	"github.com/seedance/seedance/profile"
)

// TestAddOwnersOnRealController: a running job on a real slurmctld gets the
// user who submitted it and the account it was charged to from squeue; a
// job the controller never had is said in a note, with what sacct answered
// (this cluster keeps no accounting).
func TestAddOwnersOnRealController(t *testing.T) {
	c := slurmtest.Start(t, "node-gpu-01")
	job := c.Submit(t, "--gres=gpu:1", "-w", "node-gpu-01", "-A", "research")
	c.WaitFor(t, func() bool { return c.Job(t, job, "JobState") == "RUNNING" }, "job "+job+" running")
	c.UseConf(t)
	p := &profile.Profile{Nodes: []profile.Node{{Name: "node-gpu-01", Workloads: []profile.Workload{
		{ID: job, Name: job, Kind: profile.KindJob, State: profile.StateRunning, GPUs: []int{0}},
		{ID: "999999", Name: "999999", Kind: profile.KindJob, State: profile.StateRunning, GPUs: []int{1}},
	}}}}
	squeue, sacct := Commands(extcmd.DefaultLimits)
	notes, err := AddOwners(context.Background(), p, squeue, sacct)
	if err != nil {
		t.Fatal(err)
	}
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	if l := p.Nodes[0].Workloads[0].Labels; l["user"] != me.Username || l["account"] != "research" {
		t.Fatalf("job %s: labels %v, want user %s and account research", job, l, me.Username)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "1 Slurm job(s) are unknown") || !strings.HasSuffix(notes[0], ": 999999") || strings.Contains(notes[0], "\n") {
		t.Fatalf("notes %q", notes)
	}
	t.Logf("note: %s", notes[0])
}
