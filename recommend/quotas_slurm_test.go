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
	for _, k := range []struct {
		change        analyze.QuotaChange
		show          []string // sacctmgr show … of the limit
		before, after string   // the limit shown
		dry, left     string   // what the dry run and a stale run say
	}{
		{analyze.QuotaChange{Queue: "research", Kind: "slurm-account", NominalGPUs: 8, ProposedGPUs: 4, Why: "p95"},
			[]string{"associations", "where", "account=research", "format=User,GrpTRES"}, "|gres/gpu=8", "|gres/gpu=4",
			"dry run: account research: GrpTRES gres/gpu 8 -> 4", "account research: its GrpTRES gres/gpu is now 4, not 8 as analyzed: left alone"},
		{analyze.QuotaChange{Queue: "gpu-team", Kind: "slurm-qos", NominalGPUs: 2, ProposedGPUs: 1, Why: "p95"},
			[]string{"qos", "where", "name=gpu-team", "format=GrpTRES"}, "cpu=8,gres/gpu=2", "cpu=8,gres/gpu=1",
			"dry run: qos gpu-team: GrpTRES gres/gpu 2 -> 1", "qos gpu-team: its GrpTRES gres/gpu is now 1, not 2 as analyzed: left alone"},
	} {
		var b bytes.Buffer
		if err := QuotaScript(&b, []analyze.QuotaChange{k.change}); err != nil {
			t.Fatal(err)
		}
		run := scriptRun(t, b.Bytes(), c.Env)
		limit := func() string {
			out, err := c.Run("sacctmgr", append([]string{"--noheader", "--parsable2", "show"}, k.show...)...)
			if err != nil {
				t.Fatal(err)
			}
			return strings.TrimSpace(out)
		}
		if out, err := run(); err != nil || !strings.Contains(out, k.dry) || limit() != k.before {
			t.Fatalf("dry run: %v\n%s\nlimit %q", err, out, limit())
		}
		if out, err := run("--execute"); err != nil || limit() != k.after {
			t.Fatalf("--execute: %v\n%s\nlimit %q", err, out, limit())
		}
		if out, err := run("--execute"); err == nil || !strings.Contains(out, k.left) || limit() != k.after {
			t.Errorf("a second run: %v\n%s", err, out)
		}
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
