package slurm

import (
	"context"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/extcmd"
	"github.com/seedance/seedance/internal/testkit/slurmtest"
	"github.com/seedance/seedance/profile"
)

// TestBudgetUseOnRealSlurm (#58): a real slurmctld with accounting and the
// priority/multifactor plugin, folding usage every minute. Account
// research has a budget of 48,000 GPU-minutes (GrpTRESMins); its 2-GPU job
// with a 10-minute limit runs. Slurm counts the job's GPU-seconds into the
// account's usage at each fold and takes them off what the job still holds
// to its limit, so that AddBudgetUse, once the first fold counted a
// minute, reads at least 1 GPU-minute used, at most the GPU-minutes since
// the submission, and used + running = 2 GPUs × 10 minutes, less at most
// the two readings' rounding down to whole minutes and the decay of a
// minute at a 7-day half-life (≥ 18). The figures then say 48,000 minus
// both, as a percentage and as what is left.
func TestBudgetUseOnRealSlurm(t *testing.T) {
	c := slurmtest.StartWithUsage(t, "node-gpu-01")
	c.Sacctmgr(t, [][]string{{"-i", "add", "account", "research", "parent=root"},
		{"-i", "modify", "account", "where", "name=research", "set", "GrpTRESMins=gres/gpu=48000"}, {"-i", "add", "user", "root", "account=research"}})
	submitted := time.Now()
	run := c.Submit(t, "--gres=gpu:2", "-w", "node-gpu-01", "-A", "research", "--time=10")
	c.WaitFor(t, func() bool { return c.Job(t, run, "JobState") == "RUNNING" }, "job "+run+" running")
	c.UseConf(t)
	_, sacct := Commands(extcmd.DefaultLimits)
	scontrol, sshare := ClientCommand("scontrol", extcmd.DefaultLimits), ClientCommand("sshare", extcmd.DefaultLimits)
	p := &profile.Profile{StartedAt: submitted.Add(-time.Minute).Truncate(time.Second), EndedAt: time.Now().Add(time.Minute).Truncate(time.Second)}
	if notes, err := AddQueues(context.Background(), p, ByAccount, SacctmgrCommand(extcmd.DefaultLimits), sacct); err != nil || len(notes) > 0 {
		t.Fatalf("AddQueues: %v %q", err, notes)
	}
	var r *profile.Queue
	for qi := range p.Queues {
		if p.Queues[qi].Name == "research" {
			r = &p.Queues[qi]
		}
	}
	if r == nil || r.BudgetGPUMinutes == nil || *r.BudgetGPUMinutes != 48000 {
		t.Fatalf("research: %+v", p.Queues)
	}
	c.WaitWithin(t, 150*time.Second, func() bool {
		r.BudgetUse = nil
		if notes := AddBudgetUse(context.Background(), p, scontrol, sshare); len(notes) > 0 {
			t.Fatalf("AddBudgetUse: %q", notes)
		}
		return r.BudgetUse != nil && r.BudgetUse.UsedGPUMinutes >= 1
	}, "Slurm to count a GPU-minute of research's job")
	u, since := *r.BudgetUse, time.Since(submitted).Minutes()
	if u.UsedGPUMinutes > 2*since+1 || u.UsedGPUMinutes+u.RunningGPUMinutes < 18 || u.UsedGPUMinutes+u.RunningGPUMinutes > 20 {
		t.Errorf("research's use %+v, %.1f minutes after its job's submission", u, since)
	}
	t.Logf("research's use %+v, %.1f minutes after its job's submission", u, since)
}
