package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seedance/seedance/internal/testkit/slurmtest"
	"github.com/seedance/seedance/profile"
)

// TestProfileSlurmQueuesQOS (#58): `profile --slurm --slurm-queues qos`
// against a real slurmdbd writes Slurm's QOS as the profile's queues
// (QOS gpu-team with GrpTRES=gres/gpu=2), and without the flag its
// accounts (research, with GrpTRES=gres/gpu=8 and a GPU-minute budget,
// whose use this cluster's priority/basic does not count: a note says so
// and the use is unknown).
func TestProfileSlurmQueuesQOS(t *testing.T) {
	c := slurmtest.StartWithAccounting(t, "node-gpu-01", "node-gpu-02", "node-gpu-03")
	c.Sacctmgr(t, [][]string{{"-i", "add", "account", "research", "parent=root"}, {"-i", "modify", "account", "where", "name=research", "set", "GrpTRES=gres/gpu=8", "GrpTRESMins=gres/gpu=600"},
		{"-i", "add", "qos", "gpu-team"}, {"-i", "modify", "qos", "where", "name=gpu-team", "set", "GrpTRES=gres/gpu=2"}})
	c.UseConf(t)
	for by, want := range map[string]profile.Queue{"qos": {Name: "gpu-team", Kind: profile.QueueSlurmQOS}, "account": {Name: "research", Kind: profile.QueueSlurmAccount, Cohort: "root"}} {
		path := filepath.Join(t.TempDir(), "p.json")
		if r := run(t, nil, "profile", "--source", "sim", "--sim-scenario", "idle", "--sim-nodes", "3", "--duration", "60", "--slurm", "--slurm-queues", by, "-o", path, "--quiet"); r.code != 0 {
			t.Fatalf("%s: exit %d: %s", by, r.code, r.errOut)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var p profile.Profile
		if err := json.Unmarshal(data, &p); err != nil {
			t.Fatal(err)
		}
		var got *profile.Queue
		for i := range p.Queues {
			if p.Queues[i].Name == want.Name {
				got = &p.Queues[i]
			}
		}
		gpus := map[string]float64{"qos": 2, "account": 8}[by]
		if got == nil || got.Kind != want.Kind || got.Cohort != want.Cohort || got.NominalGPUs == nil || *got.NominalGPUs != gpus {
			t.Errorf("--slurm-queues %s: queues %+v", by, p.Queues)
		}
		noted := slices.ContainsFunc(p.Notes, func(n string) bool {
			return strings.Contains(n, `GPU-minute budgets (GrpTRESMins) unknown: Slurm's PriorityType is "priority/basic"`)
		})
		if got != nil && (got.BudgetUse != nil || noted != (by == "account")) {
			t.Errorf("--slurm-queues %s: budget use %+v, notes %q", by, got.BudgetUse, p.Notes)
		}
	}
}
