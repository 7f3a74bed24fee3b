package recommend

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestScriptsPassShellcheck runs shellcheck (every severity, unquoted
// expansions included; SC2317, a function this plan does not call, aside) over
// every kind of script the dialects write: an ordinary plan with a
// running and a pending move, one of hostile names (moves skipped), one
// with a max age, one refused, one moving blockers, and an empty one.
// Without shellcheck it skips, saying how to get it; under CI it fails.
func TestScriptsPassShellcheck(t *testing.T) {
	sc, err := exec.LookPath("shellcheck")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("shellcheck is not installed (.ci/run installs it)")
		}
		t.Skip("shellcheck is not installed: apt-get install shellcheck")
	}
	until := time.Date(2026, 12, 5, 8, 0, 0, 0, time.UTC)
	ordinary := func() *Plan {
		return &Plan{SchemaVersion: planSchema, SavingsUSDPerHour: 40, NodePriceUSDPerHour: map[string]float64{"node-a": 40},
			Moves: []Move{{Workload: "4242", From: str("node-a"), To: "node-b", GPUs: []int{1}, Reason: "frees node-a", Name: "4242", Namespace: "ml"},
				{Workload: "4243", To: "node-b", GPUs: []int{0}, Reason: "pending", Name: "4243", Namespace: "ml"}},
			ReleasedNodes: []string{"node-a"}}
	}
	aged, refused, blockers := ordinary(), ordinary(), ordinary()
	aged.DataUntil, aged.MaxAgeS = &until, 3600
	refused.Refused = "refused: a disruption budget\nrm -rf /"
	blockers.MoveBlockers = true
	plans := map[string]*Plan{"ordinary": ordinary(), "hostile": hostilePlan(), "aged": aged, "refused": refused,
		"move-blockers": blockers, "empty": {SchemaVersion: planSchema}}
	for name, p := range plans {
		for dialect, write := range map[string]func(io.Writer, *Plan) error{"kubectl": kubectlScript, "slurm": slurmScript} {
			var script bytes.Buffer
			if err := write(&script, p); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(sc, "--shell=bash", "--severity=info", "--exclude=SC2317", "--format=gcc", "-")
			cmd.Stdin = &script
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("%s plan, %s: shellcheck: %v\n%s", name, dialect, err, strings.TrimSpace(string(out)))
			}
		}
	}
}
