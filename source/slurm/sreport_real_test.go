package slurm

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/extcmd"
	"github.com/seedance/seedance/internal/testkit/slurmtest"
	"github.com/seedance/seedance/profile"
)

// TestAccountsEqualSreport (#58): an account's reserved GPU-seconds, as
// AddQueues books them from a real slurmdbd's jobs, equal sreport's
// allocated gres/gpu seconds for the account over the same whole hours.
// Two jobs of account research run (2 and 3 GPUs) and are cancelled; a
// third (1 GPU) of account other runs and is cancelled too. sreport reads
// slurmdbd's hourly rollups, made only of hours that have ended, so
// slurmdbd is restarted on a clock past the jobs' last hour (libfaketime)
// and sreport runs on the same clock.
func TestAccountsEqualSreport(t *testing.T) {
	c := slurmtest.StartWithAccounting(t, "node-gpu-01")
	c.Sacctmgr(t, [][]string{{"-i", "add", "account", "research", "parent=root"}, {"-i", "add", "account", "other", "parent=root"},
		{"-i", "add", "user", "root", "account=research"}, {"-i", "add", "user", "root", "account=other"}})
	jobs := []string{c.Submit(t, "--gres=gpu:2", "-A", "research"), c.Submit(t, "--gres=gpu:3", "-A", "research"), c.Submit(t, "--gres=gpu:1", "-A", "other")}
	for i, id := range jobs {
		c.WaitFor(t, func() bool { return c.Job(t, id, "JobState") == "RUNNING" }, "job "+id+" running")
		// each runs a few seconds more than the one before
		c.WaitFor(t, func() bool { return c.Job(t, id, "RunTime") >= "00:00:0"+strconv.Itoa(2+i) }, "job "+id+" running for a while")
		if out, err := c.Run("scancel", id); err != nil {
			t.Fatalf("scancel %s: %v: %s", id, err, out)
		}
	}
	c.UseConf(t)
	_, sacct := Commands(extcmd.DefaultLimits)
	sacctmgr := SacctmgrCommand(extcmd.DefaultLimits)
	from := time.Now().Add(-time.Hour).Truncate(time.Hour)
	to := time.Now().Add(time.Hour).Truncate(time.Hour)
	var reserved map[string]float64 // GPU-seconds by account
	c.WaitFor(t, func() bool {
		p := &profile.Profile{StartedAt: from, EndedAt: to}
		if _, err := AddQueues(context.Background(), p, ByAccount, sacctmgr, sacct, nil); err != nil {
			t.Fatalf("AddQueues: %v", err)
		}
		reserved = map[string]float64{}
		ended := 0
		for _, q := range p.Queues {
			for _, s := range q.Admitted {
				reserved[q.Name] += s.GPUs * (s.EndS - s.StartS)
				if s.EndS < to.Sub(from).Seconds() {
					ended++
				}
			}
		}
		return ended == 3
	}, "sacct to know the three jobs' ends")
	ahead := time.Until(to) + 2*time.Minute // past the jobs' last hour
	c.RestartAccountingAhead(t, ahead)
	sreport := func(account string) (float64, bool) {
		cmd := exec.Command("sreport", "-n", "-P", "-T", "gres/gpu", "-t", "Seconds", "cluster", "AccountUtilizationByUser", "Accounts="+account,
			"Start="+from.Format("2006-01-02T15:04:05"), "End="+to.Format("2006-01-02T15:04:05"))
		cmd.Env = c.AheadEnv(ahead)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("sreport: %v: %s", err, out)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			f := strings.Split(line, "|") // Cluster|Account|Login|Proper Name|TRES Name|Used
			if len(f) == 6 && f[1] == account && f[2] == "" && f[4] == "gres/gpu" {
				used, err := strconv.ParseFloat(f[5], 64)
				return used, err == nil && used > 0
			}
		}
		return 0, false
	}
	for _, account := range []string{"research", "other"} {
		var used float64
		c.WaitFor(t, func() (ok bool) { used, ok = sreport(account); return ok }, "sreport to report account "+account)
		t.Logf("account %s: sreport %v, seedance %v", account, used, reserved[account])
		if used != reserved[account] || reserved[account] == 0 {
			t.Errorf("account %s: sreport %v GPU-seconds, seedance %v", account, used, reserved[account])
		}
	}
}
