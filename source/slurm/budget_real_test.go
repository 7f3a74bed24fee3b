package slurm

import (
	"context"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/extcmd"
	"github.com/seedance/seedance/internal/testkit/slurmtest"
	"github.com/seedance/seedance/profile"
)

// TestBudgetUseOnRealSlurm (#58): a real slurmctld with accounting, limits
// enforced and the priority/multifactor plugin, folding usage every
// minute. Account research has a budget of 48,000 GPU-minutes and QOS
// gpu-team one of 600 (GrpTRESMins); a 2-GPU job of both, with a
// 10-minute limit, runs. Slurm counts the job's GPU-seconds into the
// account's and the QOS's usage at each fold and takes them off what the
// job still holds to its limit, so that AddBudgetUse, once the first fold
// counted a minute, reads for each (sshare for the account, scontrol show
// assoc_mgr for the QOS) at least 1 GPU-minute used, at most the
// GPU-minutes since the submission, and used + running = 2 GPUs × 10
// minutes, less at most the two readings' rounding down to whole minutes
// and the decay of a minute at a 7-day half-life (18–20).
func TestBudgetUseOnRealSlurm(t *testing.T) {
	c := slurmtest.StartWithUsage(t, "node-gpu-01")
	c.Sacctmgr(t, [][]string{{"-i", "add", "account", "research", "parent=root"}, {"-i", "add", "qos", "gpu-team"},
		{"-i", "modify", "account", "where", "name=research", "set", "GrpTRESMins=gres/gpu=48000"},
		{"-i", "modify", "qos", "where", "name=gpu-team", "set", "GrpTRESMins=gres/gpu=600"},
		{"-i", "add", "user", "root", "account=research"}, {"-i", "modify", "user", "root", "set", "qos+=gpu-team"}})
	submitted := time.Now()
	run := c.Submit(t, "--gres=gpu:2", "-w", "node-gpu-01", "-A", "research", "--qos=gpu-team", "--time=10")
	c.WaitFor(t, func() bool { return c.Job(t, run, "JobState") == "RUNNING" }, "job "+run+" running")
	c.UseConf(t)
	budgets := map[string]*profile.Queue{}
	var ps []*profile.Profile
	for _, b := range [][2]string{{ByAccount, "research"}, {ByQOS, "gpu-team"}} {
		ps = append(ps, budgetedProfile(t, b[0], b[1], submitted, budgets))
	}
	scontrol, sshare := ClientCommand("scontrol", extcmd.DefaultLimits), ClientCommand("sshare", extcmd.DefaultLimits)
	c.WaitWithin(t, 150*time.Second, func() bool {
		counted := true
		for _, q := range budgets {
			q.BudgetUse = nil
		}
		for _, p := range ps {
			if notes := AddBudgetUse(context.Background(), p, scontrol, sshare); len(notes) > 0 {
				t.Fatalf("AddBudgetUse: %q", notes)
			}
		}
		for _, q := range budgets {
			counted = counted && q.BudgetUse != nil && q.BudgetUse.UsedGPUMinutes >= 1
		}
		return counted
	}, "Slurm to count a GPU-minute of the job in research and gpu-team")
	since := time.Since(submitted).Minutes()
	for name, q := range budgets {
		u := *q.BudgetUse
		if u.UsedGPUMinutes > 2*since+1 || u.UsedGPUMinutes+u.RunningGPUMinutes < 18 || u.UsedGPUMinutes+u.RunningGPUMinutes > 20 {
			t.Errorf("%s's use %+v, %.1f minutes after its job's submission", name, u, since)
		}
		t.Logf("%s's use %+v, %.1f minutes after its job's submission", name, u, since)
	}
}

// budgetedProfile is a profile of the window from a minute before
// submitted with Slurm's accounts or QOS (by) as its queues, the one named
// name, with its budget, put in budgets.
func budgetedProfile(t *testing.T, by, name string, submitted time.Time, budgets map[string]*profile.Queue) *profile.Profile {
	t.Helper()
	_, sacct := Commands(extcmd.DefaultLimits)
	p := &profile.Profile{StartedAt: submitted.Add(-time.Minute).Truncate(time.Second), EndedAt: time.Now().Add(time.Minute).Truncate(time.Second)}
	if notes, err := AddQueues(context.Background(), p, by, SacctmgrCommand(extcmd.DefaultLimits), sacct, nil); err != nil || len(notes) > 0 {
		t.Fatalf("AddQueues by %s: %v %q", by, err, notes)
	}
	for qi := range p.Queues {
		if q := &p.Queues[qi]; q.Name == name && q.BudgetGPUMinutes != nil {
			budgets[name] = q
			return p
		}
	}
	t.Fatalf("by %s: no %s with a budget: %+v", by, name, p.Queues)
	return nil
}
