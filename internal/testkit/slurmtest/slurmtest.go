// Package slurmtest runs a real Slurm cluster for tests (Debian's slurmctld,
// slurmd, slurm-client and munge): a munged, a slurmctld and one slurmd on
// 127.0.0.1, from a generated slurm.conf in a temporary directory, with fake
// GPU device files for gres. Nodes other than the first have no slurmd:
// jobs bound to them stay pending, which is what a plan's moves are checked
// against. Everything it starts is stopped when the test ends. Tests never
// install Slurm (.ci/run does): without it a test fails under CI and is
// skipped elsewhere, saying how to get it.
package slurmtest

import (
	"bytes"
	"fmt"
	"github.com/seedance/seedance/internal/testkit/engine"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/testkit/testnet"
)

// Cluster is a running Slurm cluster.
type Cluster struct {
	// Env is the environment for Slurm's client commands (SLURM_CONF).
	Env   []string
	dir   string
	procs []*exec.Cmd
	ctld  bool // slurmctld was started: stop cancels the jobs first
	dbd   int  // slurmdbd's index in procs, with accounting
}

// Start starts munged, slurmctld and a slurmd for the first of nodes; every
// node has 2 CPUs and 8 GPUs.
func Start(t testing.TB, nodes ...string) *Cluster {
	t.Helper()
	return start(t, "", nodes)
}

// StartWithAccounting is Start with Slurm's accounting: a MariaDB
// (Debian's mariadb-server, a database of its own in the test's
// directory) and a slurmdbd, the cluster added to it before slurmctld
// starts, GPUs tracked (AccountingStorageTRES=gres/gpu), so that sacct
// and sacctmgr answer.
func StartWithAccounting(t testing.TB, nodes ...string) *Cluster {
	t.Helper()
	return start(t, accountingConf, nodes)
}

// StartWithUsage is StartWithAccounting with limits enforced
// (AccountingStorageEnforce=associations,limits) and the
// priority/multifactor plugin, which then counts each association's usage
// (what sshare shows and GrpTRESMins limits), folded every minute
// (PriorityCalcPeriod=1) with Slurm's default half-life (7 days).
func StartWithUsage(t testing.TB, nodes ...string) *Cluster {
	t.Helper()
	return start(t, accountingConf+"AccountingStorageEnforce=associations,limits\nPriorityType=priority/multifactor\nPriorityCalcPeriod=1\n", nodes)
}

// accountingConf is the slurm.conf of accounting through the test's
// slurmdbd (its port and directory filled in by start).
const accountingConf = "AccountingStorageType=accounting_storage/slurmdbd\nAccountingStorageHost=127.0.0.1\nAccountingStoragePort=%d\nAccountingStoragePass=%s/munge.sock\nAccountingStorageTRES=gres/gpu\n"

// start starts the cluster; extra (accounting and what follows it), when
// given, replaces the configuration's accounting_storage/none.
func start(t testing.TB, extra string, nodes []string) *Cluster {
	t.Helper()
	accounting := extra != ""
	engine.SkipShort(t, "starts slurmctld, slurmd and munged")
	bins := map[string]string{}
	names := []string{"munged", "slurmctld", "slurmd", "scontrol", "sbatch"}
	if accounting {
		names = append(names, "slurmdbd", "sacctmgr", "mariadbd", "mariadb-install-db")
	}
	for _, name := range names {
		p, err := exec.LookPath(name)
		if err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not installed (.ci/run installs Slurm): %v", name, err)
			}
			t.Skipf("needs Slurm and munge (Debian: apt-get install slurmctld slurmd slurm-client munge slurmdbd mariadb-server; or run bash .ci/run): %v", err)
		}
		bins[name] = p
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root: slurmd runs jobs as their users")
	}
	// A short directory: munge's socket path must fit a Unix socket's 108 bytes.
	dir, err := os.MkdirTemp("", "slurm")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	c := &Cluster{dir: dir, Env: []string{"SLURM_CONF=" + filepath.Join(dir, "slurm.conf"), "PATH=" + os.Getenv("PATH")}}
	t.Cleanup(c.stop)
	for _, sub := range []string{"state", "spool", "dev", "log"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 8; i++ {
		if err := os.WriteFile(filepath.Join(dir, "dev", fmt.Sprintf("nvidia%d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	key := bytes.Repeat([]byte("seedance-test-munge-key!"), 43) // 1 KiB
	if err := os.WriteFile(filepath.Join(dir, "munge.key"), key, 0o400); err != nil {
		t.Fatal(err)
	}
	ctld, slurmd, unused := testnet.FreePort(t), testnet.FreePort(t), testnet.FreePort(t)
	text := conf(dir, ctld, slurmd, unused, nodes)
	dbd := 0
	if accounting {
		dbd = testnet.FreePort(t)
		text = strings.Replace(text, "AccountingStorageType=accounting_storage/none\n", fmt.Sprintf(extra, dbd, dir), 1)
	}
	if err := os.WriteFile(filepath.Join(dir, "slurm.conf"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var gres strings.Builder
	for _, n := range nodes {
		fmt.Fprintf(&gres, "NodeName=%s Name=gpu File=%s/dev/nvidia[0-7]\n", n, dir)
	}
	if err := os.WriteFile(filepath.Join(dir, "gres.conf"), []byte(gres.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	c.start(t, bins["munged"], "--foreground", "--force", "--socket="+filepath.Join(dir, "munge.sock"), "--key-file="+filepath.Join(dir, "munge.key"),
		"--pid-file="+filepath.Join(dir, "munged.pid"), "--log-file="+filepath.Join(dir, "log", "munged.log"), "--seed-file="+filepath.Join(dir, "munge.seed"))
	c.waitFor(t, func() bool { _, err := os.Stat(filepath.Join(dir, "munge.sock")); return err == nil }, "munged")
	if accounting {
		c.startAccounting(t, bins, dbd)
	}
	c.start(t, bins["slurmctld"], "-D", "-c", "-f", filepath.Join(dir, "slurm.conf"))
	c.ctld = true
	c.start(t, bins["slurmd"], "-D", "-f", filepath.Join(dir, "slurm.conf"), "-N", nodes[0])
	c.waitFor(t, func() bool {
		out, err := c.Run("scontrol", "show", "node", nodes[0])
		return err == nil && (strings.Contains(out, "State=IDLE") || strings.Contains(out, "State=MIXED"))
	}, "slurmd on "+nodes[0])
	return c
}

// conf is the slurm.conf of the test cluster: the settings that worked on
// Debian's Slurm 22.05 without cgroups or a real GPU.
func conf(dir string, ctld, slurmd, unused int, nodes []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `ClusterName=seedance
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=%d
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=%[2]s/munge.sock
StateSaveLocation=%[2]s/state
SlurmdSpoolDir=%[2]s/spool
SlurmctldPidFile=%[2]s/slurmctld.pid
SlurmdPidFile=%[2]s/slurmd.pid
SlurmctldLogFile=%[2]s/log/slurmctld.log
SlurmdLogFile=%[2]s/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
JobRequeue=1
SlurmdParameters=config_overrides
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
`, ctld, dir)
	for i, n := range nodes {
		port := unused // no slurmd answers there: the node stays down
		if i == 0 {
			port = slurmd
		}
		fmt.Fprintf(&b, "NodeName=%s NodeAddr=127.0.0.1 Port=%d CPUs=2 RealMemory=16000 Gres=gpu:8 State=UNKNOWN\n", n, port)
	}
	b.WriteString("PartitionName=gpu Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n")
	return b.String()
}

// Run runs a Slurm client command against the cluster.
func (c *Cluster) Run(name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = c.Env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Submit submits a batch job that sleeps, with sbatch's extra arguments,
// and returns its id.
func (c *Cluster) Submit(t testing.TB, args ...string) string {
	t.Helper()
	out, err := c.Run("sbatch", append([]string{"--parsable", "-o", "/dev/null", "--wrap", "sleep 600"}, args...)...)
	if err != nil {
		t.Fatalf("sbatch %v: %v: %s", args, err, out)
	}
	return strings.TrimSpace(out)
}

// Job returns a field of scontrol show job ("JobState", "ReqNodeList").
func (c *Cluster) Job(t testing.TB, id, field string) string {
	t.Helper()
	out, err := c.Run("scontrol", "show", "job", id)
	if err != nil {
		t.Fatalf("scontrol show job %s: %v: %s", id, err, out)
	}
	return fieldOf(out, field)
}

// Node returns a field of scontrol show node ("State").
func (c *Cluster) Node(t testing.TB, name, field string) string {
	t.Helper()
	out, err := c.Run("scontrol", "show", "node", name)
	if err != nil {
		t.Fatalf("scontrol show node %s: %v: %s", name, err, out)
	}
	return fieldOf(out, field)
}

func fieldOf(out, field string) string {
	for _, w := range strings.Fields(out) {
		if v, ok := strings.CutPrefix(w, field+"="); ok {
			return v
		}
	}
	return ""
}

// WaitFor polls ok for up to 30 s.
func (c *Cluster) WaitFor(t testing.TB, ok func() bool, what string) { c.waitFor(t, ok, what) }

// WaitWithin is WaitFor with a bound of its own: for what Slurm does on a
// period (the priority plugin's PriorityCalcPeriod).
func (c *Cluster) WaitWithin(t testing.TB, bound time.Duration, ok func() bool, what string) {
	t.Helper()
	c.waitWithin(t, bound, ok, what)
}

func (c *Cluster) waitFor(t testing.TB, ok func() bool, what string) {
	t.Helper()
	c.waitWithin(t, 30*time.Second, ok, what)
}

func (c *Cluster) waitWithin(t testing.TB, bound time.Duration, ok func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(bound); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if ok() {
			return
		}
	}
	logs, _ := filepath.Glob(filepath.Join(c.dir, "log", "*"))
	var tail strings.Builder
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		fmt.Fprintf(&tail, "--- %s\n%s\n", filepath.Base(l), b[max(0, len(b)-2000):])
	}
	t.Fatalf("%s: not ready after %s\n%s", what, bound, tail.String())
}

func (c *Cluster) start(t testing.TB, bin string, args ...string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = c.Env
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	c.procs = append(c.procs, cmd)
}

// stop ends the jobs, then the daemons, the last started first. A job's
// step (slurmstepd) outlives a killed slurmd, so the jobs are waited for,
// up to 15 s, until squeue lists none, completing ones included.
func (c *Cluster) stop() {
	if c.ctld {
		_, _ = c.Run("scancel", "--user", "root") // the daemons end next in any case
		for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if out, err := c.Run("squeue", "--noheader"); err != nil || strings.TrimSpace(out) == "" {
				break
			}
		}
	}
	for i := len(c.procs) - 1; i >= 0; i-- {
		p := c.procs[i]
		_ = p.Process.Kill() // it may have exited already
		_ = p.Wait()         // killed: its status says nothing
	}
}

// startAccounting starts a MariaDB of the test's own on a free port, a
// slurmdbd on port dbd (slurmdbd.conf beside slurm.conf, as slurmdbd
// looks for it), and adds the cluster to it.
func (c *Cluster) startAccounting(t testing.TB, bins map[string]string, dbd int) {
	t.Helper()
	db, sql := filepath.Join(c.dir, "db"), testnet.FreePort(t)
	if out, err := exec.Command(bins["mariadb-install-db"], "--datadir="+db, "--user=root", "--auth-root-authentication-method=normal", "--skip-test-db").CombinedOutput(); err != nil {
		t.Fatalf("mariadb-install-db: %v: %s", err, out)
	}
	c.start(t, bins["mariadbd"], "--datadir="+db, "--socket="+filepath.Join(c.dir, "my.sock"), fmt.Sprintf("--port=%d", sql), "--bind-address=127.0.0.1",
		"--user=root", "--skip-grant-tables", "--pid-file="+filepath.Join(c.dir, "my.pid"), "--log-error="+filepath.Join(c.dir, "log", "mariadb.log"))
	conf := fmt.Sprintf(`AuthType=auth/munge
AuthInfo=socket=%[1]s/munge.sock
DbdAddr=127.0.0.1
DbdHost=localhost
DbdPort=%[2]d
SlurmUser=root
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=%[3]d
StorageUser=root
StorageLoc=slurm_acct_db
PidFile=%[1]s/slurmdbd.pid
LogFile=%[1]s/log/slurmdbd.log
`, c.dir, dbd, sql)
	if err := os.WriteFile(filepath.Join(c.dir, "slurmdbd.conf"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	c.waitFor(t, func() bool { _, err := os.Stat(filepath.Join(c.dir, "my.sock")); return err == nil }, "mariadbd")
	c.dbd = len(c.procs)
	c.start(t, bins["slurmdbd"], "-D")
	c.waitFor(t, func() bool { _, err := c.Run("sacctmgr", "--noheader", "show", "cluster"); return err == nil }, "slurmdbd")
	if out, err := c.Run("sacctmgr", "-i", "add", "cluster", "seedance"); err != nil {
		t.Fatalf("sacctmgr add cluster: %v: %s", err, out)
	}
}

// Sacctmgr runs sacctmgr once for each of cmds (its arguments), failing
// the test on the first that fails.
func (c *Cluster) Sacctmgr(t testing.TB, cmds [][]string) {
	t.Helper()
	for _, args := range cmds {
		if out, err := c.Run("sacctmgr", args...); err != nil {
			t.Fatalf("sacctmgr %v: %v: %s", args, err, out)
		}
	}
}

// UseConf points the test's own Slurm commands (those seedance runs) at
// the cluster: SLURM_CONF, for the test's duration.
func (c *Cluster) UseConf(t testing.TB) {
	t.Helper()
	for _, e := range c.Env {
		if k, v, _ := strings.Cut(e, "="); k == "SLURM_CONF" {
			t.Setenv(k, v)
		}
	}
}
