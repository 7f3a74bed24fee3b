package recommend

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/internal/testkit/slurmtest"
)

// TestQuotaScriptOnRealSlurm (#58): the quota what-if of a Slurm account,
// then of a QOS, run against a real slurmdbd: the dry run changes
// nothing, --execute sets GrpTRES gres/gpu 8 → 4 (the QOS's 2 → 1), and a
// second run finds it changed since the analysis, leaves it alone and
// ends non-zero.
func TestQuotaScriptOnRealSlurm(t *testing.T) {
	c := slurmtest.StartWithAccounting(t, "node-gpu-01")
	for _, args := range [][]string{{"-i", "add", "account", "research", "parent=root"}, {"-i", "modify", "account", "where", "name=research", "set", "GrpTRES=gres/gpu=8"},
		{"-i", "add", "qos", "gpu-team"}, {"-i", "modify", "qos", "where", "name=gpu-team", "set", "GrpTRES=cpu=8,gres/gpu=2"}} {
		if out, err := c.Run("sacctmgr", args...); err != nil {
			t.Fatalf("sacctmgr %v: %v: %s", args, err, out)
		}
	}
	var b bytes.Buffer
	if err := QuotaScript(&b, []analyze.QuotaChange{{Queue: "research", Kind: "slurm-account", NominalGPUs: 8, ProposedGPUs: 4, Why: "p95"}}); err != nil {
		t.Fatal(err)
	}
	run := scriptRun(t, b.Bytes(), c.Env)
	limit := func() string {
		out, err := c.Run("sacctmgr", "--noheader", "--parsable2", "show", "associations", "where", "account=research", "format=User,GrpTRES")
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(out)
	}
	if out, err := run(); err != nil || !strings.Contains(out, "dry run: account research: GrpTRES gres/gpu 8 -> 4") || limit() != "|gres/gpu=8" {
		t.Fatalf("dry run: %v\n%s\nlimit %q", err, out, limit())
	}
	if out, err := run("--execute"); err != nil || limit() != "|gres/gpu=4" {
		t.Fatalf("--execute: %v\n%s\nlimit %q", err, out, limit())
	}
	if out, err := run("--execute"); err == nil || !strings.Contains(out, "account research: its GrpTRES gres/gpu is now 4, not 8 as analyzed: left alone") || limit() != "|gres/gpu=4" {
		t.Errorf("a second run: %v\n%s", err, out)
	}
	testQOSScript(t, c)
}

// testQOSScript runs the what-if of QOS gpu-team (GrpTRES cpu=8,gres/gpu=2)
// as TestQuotaScriptOnRealSlurm runs the account's.
func testQOSScript(t *testing.T, c *slurmtest.Cluster) {
	var b bytes.Buffer
	if err := QuotaScript(&b, []analyze.QuotaChange{{Queue: "gpu-team", Kind: "slurm-qos", NominalGPUs: 2, ProposedGPUs: 1, Why: "p95"}}); err != nil {
		t.Fatal(err)
	}
	run := scriptRun(t, b.Bytes(), c.Env)
	limit := func() string {
		out, err := c.Run("sacctmgr", "--noheader", "--parsable2", "show", "qos", "where", "name=gpu-team", "format=GrpTRES")
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(out)
	}
	if out, err := run(); err != nil || !strings.Contains(out, "dry run: qos gpu-team: GrpTRES gres/gpu 2 -> 1") || !strings.Contains(limit(), "gres/gpu=2") {
		t.Fatalf("dry run: %v\n%s\nlimit %q", err, out, limit())
	}
	if out, err := run("--execute"); err != nil || !strings.Contains(limit(), "gres/gpu=1") || !strings.Contains(limit(), "cpu=8") {
		t.Fatalf("--execute: %v\n%s\nlimit %q", err, out, limit())
	}
	if out, err := run("--execute"); err == nil || !strings.Contains(out, "qos gpu-team: its GrpTRES gres/gpu is now 1, not 2 as analyzed: left alone") {
		t.Errorf("a second run: %v\n%s", err, out)
	}
}

// scriptRun writes a quota script and gives a function that runs it with
// the arguments in env, returning its output.
func scriptRun(t *testing.T, script []byte, env []string) func(args ...string) (string, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "q.sh")
	if err := os.WriteFile(path, script, 0o755); err != nil {
		t.Fatal(err)
	}
	return func(args ...string) (string, error) {
		cmd := exec.Command("bash", append([]string{path}, args...)...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
}
