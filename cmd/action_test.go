package cmd

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seedance/seedance/internal/testkit/engine"
)

// TestGitHubAction runs the action's step script (deploy/github-action/
// gate.sh) as the runner would, with the simulated cluster as the source:
// gates with spaces, quotes and shell syntax arrive whole; a failing gate
// exits 3; a failing command's status wins; the Markdown lands in the job
// summary and the report where the output says (#15, item 3).
func TestGitHubAction(t *testing.T) {
	t.Parallel() // its settings are its own (testFactory)
	engine.SkipShort(t, "runs the action's script and the binary many times")
	script, err := filepath.Abs("../deploy/github-action/gate.sh")
	if err != nil {
		t.Fatal(err)
	}
	outDir := "out dir"
	step := func(t *testing.T, command, gates, baseline string) (int, string, string) {
		t.Helper()
		dir := t.TempDir()
		summary, output := filepath.Join(dir, "summary.md"), filepath.Join(dir, "output")
		c := exec.Command("bash", script)
		c.Dir = dir
		c.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "SEEDANCE=" + binary,
			"INPUT_COMMAND=" + command, "INPUT_GATES=" + gates, "INPUT_BASELINE=" + baseline,
			"INPUT_PROFILE_ARGS=--source\nsim\n--sim-nodes\n2\n--interval\n1s", "INPUT_OUTPUT_DIR=" + outDir,
			"GITHUB_STEP_SUMMARY=" + summary, "GITHUB_OUTPUT=" + output}
		msg, err := c.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		s, _ := os.ReadFile(summary)
		o, _ := os.ReadFile(output)
		if code != 0 && code != 3 && code != 7 {
			t.Logf("%s", msg)
		}
		if _, err := os.Stat(filepath.Join(dir, "PWNED")); err == nil {
			t.Fatal("a gate's text ran as a command")
		}
		return code, string(s), string(o)
	}
	// A gate with quotes, $(…) and ; is one expression for seedance, never shell.
	hostile := `nodes[0].name != "$(touch PWNED); touch PWNED 'x'"`
	code, summary, output := step(t, "sleep 2", "summary.gpus == 16\n\n"+hostile+"\n", "")
	if code != 0 || !strings.Contains(summary, "**Gates**") || !strings.Contains(summary, "touch PWNED") || !strings.Contains(output, "report=out dir/report.json") {
		t.Fatalf("exit %d\nsummary:\n%s\noutput: %s", code, summary, output)
	}
	if code, summary, _ := step(t, "sleep 2", "summary.gpus == 99", ""); code != 3 || !strings.Contains(summary, "❌ `summary.gpus == 99`") {
		t.Fatalf("a failed gate: exit %d\n%s", code, summary)
	}
	if code, _, _ := step(t, "sleep 1; exit 7", "summary.gpus == 16", ""); code != 7 {
		t.Fatalf("a failed command: exit %d, want its 7", code)
	}
	// A baseline: delta.* works.
	base := filepath.Join(t.TempDir(), "base.json")
	p := simProfile(t, "--duration", "3", "--sim-nodes", "2")
	if r := run(t, nil, "analyze", p, "-f", "json", "-o", base); r.code != 0 {
		t.Fatal(r.errOut)
	}
	if code, summary, _ := step(t, "sleep 2", "delta.gpus == 0", base); code != 0 || !strings.Contains(summary, "delta") && !strings.Contains(summary, "Δ") && !strings.Contains(summary, "baseline") {
		t.Fatalf("with a baseline: exit %d\n%s", code, summary)
	}
	// #27, case 10: an output-dir with a newline adds no key to
	// $GITHUB_OUTPUT (the step refuses it); one that looks like an option
	// is a directory, not an option.
	outDir = "x\ninjected=1"
	if code, _, output := step(t, "true", "", ""); code != 2 || strings.Contains(output, "injected") {
		t.Errorf("a newline in output-dir: exit %d, output %q", code, output)
	}
	outDir = "--version"
	if code, _, output := step(t, "sleep 1", "summary.gpus == 16", ""); code != 0 || !strings.Contains(output, "report=./--version/report.json") {
		t.Errorf("output-dir --version: exit %d, output %q", code, output)
	}
}
