package recommend

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/seedance/seedance/analyze"
)

// quotaChanges are a patchable change, a quota spread over flavors, a
// Slurm account, and hostile names in every field.
func quotaChanges() []analyze.QuotaChange {
	ref := "/spec/resourceGroups/0/flavors/1/resources/2/nominalQuota"
	return []analyze.QuotaChange{
		{Queue: "research", Kind: "kueue", NominalGPUs: 25, ProposedGPUs: 16, Why: "p95", QuotaRef: ref},
		{Queue: "wide", Kind: "kueue", NominalGPUs: 8, ProposedGPUs: 4, Why: "p95"},
		{Queue: "acct", Kind: "slurm-account", NominalGPUs: 8, ProposedGPUs: 4, Why: "p95"},
		{Queue: "gpu-team", Kind: "slurm-qos", NominalGPUs: 4, ProposedGPUs: 2, Why: "p95"},
		{Queue: "q;x", Kind: "slurm-qos", NominalGPUs: 4, ProposedGPUs: 2, Why: "p95"},
		{Queue: "x'; rm -rf / #", Kind: "kueue", NominalGPUs: 8, ProposedGPUs: 4, Why: "\nrm -rf /", QuotaRef: ref},
		{Queue: "ok", Kind: "kueue", NominalGPUs: 8, ProposedGPUs: 4, Why: "p95", QuotaRef: ref + "\"; rm -rf /"},
	}
}

// TestQuotaScript: only a Kueue queue with a valid name and its quota in
// one place gets a change line, its JSON pointer read as the jsonpath of
// the same field; every other says why not in a comment; no hostile text
// leaves a comment; shellcheck passes it (without shellcheck it skips,
// under CI it fails).
func TestQuotaScript(t *testing.T) {
	var b bytes.Buffer
	if err := QuotaScript(&b, quotaChanges()); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	want := "change clusterqueue research '.spec.resourceGroups[0].flavors[1].resources[2].nominalQuota' /spec/resourceGroups/0/flavors/1/resources/2/nominalQuota 25 16 '\"16\"'\n"
	if strings.Count(s, "\nchange ") != 1 || !strings.Contains(s, want) {
		t.Errorf("change lines:\n%s", s)
	}
	if !strings.Contains(s, "\nslurm_limit account acct 8 4\n") || !strings.Contains(s, "\nslurm_limit qos gpu-team 4 2\n") {
		t.Errorf("no account or QOS line:\n%s", s)
	}
	for _, w := range []string{"#   not patched: not a valid Slurm qos name", "#   not patched: its GPU quota is spread over several flavors", "#   not patched: not a valid queue name"} {
		if !strings.Contains(s, w) {
			t.Errorf("no %q", w)
		}
	}
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, "rm -rf") && !strings.HasPrefix(line, "#") {
			t.Errorf("hostile text outside a comment: %q", line)
		}
	}
	sc, err := exec.LookPath("shellcheck")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("shellcheck is not installed (.ci/run installs it)")
		}
		t.Skip("shellcheck is not installed: apt-get install shellcheck")
	}
	cmd := exec.Command(sc, "--shell=bash", "--severity=info", "--format=gcc", "-")
	cmd.Stdin = &b
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("shellcheck: %v\n%s", err, out)
	}
}
