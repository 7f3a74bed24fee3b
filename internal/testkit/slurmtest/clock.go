package slurmtest

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// fakeTime is Debian's libfaketime (package faketime), its build for
// programs with threads (slurmdbd's).
const fakeTime = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1"

// AheadEnv is the environment that runs a program on a clock ahead of the
// real one by d (libfaketime); the monotonic clock, which times waits, is
// left real.
func (c *Cluster) AheadEnv(d time.Duration) []string {
	return append(append([]string{}, c.Env...), "LD_PRELOAD="+fakeTime, fmt.Sprintf("FAKETIME=+%d", int64(d.Seconds())), "FAKETIME_DONT_FAKE_MONOTONIC=1")
}

// RestartAccountingAhead restarts slurmdbd on a clock ahead of the real
// one by d. slurmdbd rolls its usage up by the hour, for hours that have
// ended, when it starts and each hour after: so that sreport, which reads
// those rollups, reports on the hour a test's jobs ran in, its clock must
// be past that hour's end. Slurm's accounting stays as it was (the jobs'
// times are slurmctld's, on the real clock); slurmdbd answers again before
// this returns.
func (c *Cluster) RestartAccountingAhead(t testing.TB, d time.Duration) {
	t.Helper()
	if c.dbd == 0 {
		t.Fatal("RestartAccountingAhead: the cluster has no accounting")
	}
	if _, err := os.Stat(fakeTime); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("libfaketime is not installed (.ci/run installs it): %v", err)
		}
		t.Skipf("needs libfaketime (Debian: apt-get install faketime; or run bash .ci/run): %v", err)
	}
	old := c.procs[c.dbd]
	_ = old.Process.Kill()
	_ = old.Wait() // killed: its status says nothing
	cmd := exec.Command(old.Path, old.Args[1:]...)
	cmd.Env, cmd.Stdout, cmd.Stderr = c.AheadEnv(d), old.Stdout, old.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("slurmdbd: %v", err)
	}
	c.procs[c.dbd] = cmd
	c.waitFor(t, func() bool {
		out, err := c.Run("sacctmgr", "--noheader", "show", "cluster")
		return err == nil && strings.Contains(out, "seedance")
	}, "slurmdbd, restarted ahead")
}
