package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seedance/seedance/internal/exit"

	"github.com/seedance/seedance/internal/testkit/schematest"
	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/recommend"
)

func TestRecommendOnSimulatedCluster(t *testing.T) {
	p := simProfile(t, "--sim-nodes", "16")
	r := run(t, nil, "recommend", "--input", p, "--dialect", "json")
	if r.code != 0 {
		t.Fatal(r.errOut)
	}
	schematest.Validate(t, "plan-v1.schema.json", []byte(r.out))
	var plan recommend.Plan
	if err := json.Unmarshal([]byte(r.out), &plan); err != nil {
		t.Fatal(err)
	}
	released := strings.Join(plan.ReleasedNodes, ",")
	// The idle A100 nodes, and node-gpu-07 once its inference pods (a
	// Deployment's) move. The PCIe H200 nodes keep the pending pods that
	// wait for them (#26: a placement the owner asked for stays), and the
	// notebooks (StatefulSets) and Jobs are blockers, listed.
	if released != "node-gpu-07,node-gpu-08,node-gpu-16" {
		t.Fatalf("released %s", released)
	}
	for _, m := range plan.Moves {
		if m.From == nil || *m.From != "node-gpu-07" || !strings.HasPrefix(m.Workload, "inference/") {
			t.Fatalf("a move that frees no released node, or of pending work: %+v", m)
		}
	}
	blocked := map[string]bool{}
	for _, b := range plan.Blockers {
		blocked[b.Workload] = strings.Contains(b.Reason, "StatefulSet") || strings.Contains(b.Reason, "Job")
	}
	if len(plan.Blockers) == 0 || !blocked["notebooks/jupyter-alice-4dd08e-mtjb7"] {
		t.Fatalf("blockers %+v", plan.Blockers)
	}
	if !strings.Contains(r.errOut, "plan: 7 move(s), 3 node(s) released") {
		t.Fatalf("stderr %q", r.errOut)
	}
	// The script, written atomically and executable.
	out := filepath.Join(t.TempDir(), "plan.sh")
	if r := run(t, nil, "recommend", "--input", p, "--output", out); r.code != 0 {
		t.Fatal(r.errOut)
	}
	fi, _ := os.Stat(out)
	b, _ := os.ReadFile(out)
	if fi.Mode().Perm()&0o100 == 0 || !strings.HasPrefix(string(b), "#!/usr/bin/env bash") || !strings.Contains(string(b), "PREDICTED=( [inference/") {
		t.Fatalf("mode %v script %.300s", fi.Mode(), b)
	}
	for _, args := range [][]string{{"recommend"}, {"recommend", "--input", p, "--dialect", "ansible"}, {"recommend", "--input", "/nope.json"}} {
		if r := run(t, nil, args...); r.code != exit.Usage {
			t.Errorf("%v: exit %d", args, r.code)
		}
	}
}

func TestAnalyzeReportAll(t *testing.T) {
	p := simProfile(t, "--sim-nodes", "16", "--duration", "1800")
	r := run(t, nil, "analyze", p, "--report", "all", "--format", "json")
	if r.code != 0 {
		t.Fatal(r.errOut)
	}
	schematest.Validate(t, "report-v1.schema.json", []byte(r.out))
	var rep struct {
		Scaling struct {
			Pools []struct {
				Pool string `json:"pool"`
				WMA  struct {
					Capacity []int `json:"capacity_gpus"`
				} `json:"wma"`
			} `json:"pools"`
		} `json:"scaling"`
		Migration   recommend.Plan `json:"migration"`
		Suggestions []struct {
			Kind, Text string
		} `json:"suggestions"`
	}
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Scaling.Pools) != 3 || len(rep.Scaling.Pools[0].WMA.Capacity) != 30 {
		t.Fatalf("scaling %+v", rep.Scaling)
	}
	if len(rep.Migration.ReleasedNodes) != 3 {
		t.Fatalf("migration %+v", rep.Migration)
	}
	found := false
	for _, s := range rep.Suggestions {
		// The pending pods keep the node they wait for (#26): that node is
		// stalled, and the advice is to look at why they wait.
		if s.Kind == "rebind-pending" && strings.HasPrefix(s.Text, "node-gpu-04: 2 pending workload(s)") {
			found = true
		}
		if s.Kind == "migrate" && strings.Contains(s.Text, "pending") {
			t.Errorf("pending work moved by default: %s", s.Text)
		}
	}
	if !found {
		t.Fatalf("suggestions %+v", rep.Suggestions)
	}
	// The same with --pool-by: one pool per instance type label.
	r = run(t, nil, "analyze", p, "--report", "scaling", "--pool-by", "node.kubernetes.io/instance-type")
	if r.code != 0 || !strings.Contains(r.out, "p4de.24xlarge") || !strings.Contains(r.out, "p5e.48xlarge") {
		t.Fatalf("exit %d:\n%s", r.code, r.out)
	}
}

// TestTopologyChangesTargets: on the simulated cluster, with
// --move-pending, the pending 2-GPU pods of the PCIe node node-gpu-04 go to
// node-gpu-06's NVLink GPUs; when
// node-gpu-06's topology says PCIe only, they go to node-gpu-14 instead.
func TestTopologyChangesTargets(t *testing.T) {
	path := simProfile(t, "--sim-nodes", "16")
	targets := func(path string) map[string]string {
		r := run(t, nil, "recommend", "--input", path, "--dialect", "json", "--move-pending")
		if r.code != 0 {
			t.Fatal(r.errOut)
		}
		var plan recommend.Plan
		if err := json.Unmarshal([]byte(r.out), &plan); err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, m := range plan.Moves {
			if m.From == nil && strings.Contains(m.Reason, "pending on node-gpu-04") {
				out[m.Workload] = m.To + " " + m.Reason
			}
		}
		return out
	}
	before := targets(path)
	if len(before) != 2 {
		t.Fatalf("moves %v", before)
	}
	for _, v := range before {
		if !strings.HasPrefix(v, "node-gpu-06 ") || !strings.Contains(v, "a higher NVLink bandwidth than on node-gpu-04") {
			t.Fatalf("before: %v", before)
		}
	}
	p, err := profile.ReadFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range p.Nodes {
		if p.Nodes[i].Name == "node-gpu-06" {
			tp := p.Nodes[i].Topology
			for a := range tp.Matrix {
				for b := range tp.Matrix[a] {
					if a != b {
						tp.Matrix[a][b], tp.NVLinkGBps[a][b] = "SYS", 0
					}
				}
			}
		}
	}
	degraded := filepath.Join(t.TempDir(), "degraded.json")
	if err := profile.WriteFile(degraded, p); err != nil {
		t.Fatal(err)
	}
	for _, v := range targets(degraded) {
		if !strings.HasPrefix(v, "node-gpu-14 ") {
			t.Fatalf("after node-gpu-06 lost NVLink, a pod still went to %s", v)
		}
	}
}

// TestRecommendOptionsFromFlags: flags, the environment and the config file
// reach recommend's options through its runF hook, without running it.
func TestRecommendOptionsFromFlags(t *testing.T) {
	f, _ := testFactory(t, map[string]string{"SEEDANCE_MIGRATION_MAX_MOVES_PER_NODE": "2"})
	root := NewRootCmd(f)
	for _, c := range root.Commands() {
		if c.Name() == "recommend" {
			root.RemoveCommand(c)
		}
	}
	var got *RecommendOptions
	root.AddCommand(newRecommendCmd(f, func(o *RecommendOptions) error { got = o; return nil }))
	root.SetArgs([]string{"recommend", "-i", "p.json", "--dialect", "slurm", "--allow-sharing", "--gpu-price", "H100=2.5"})
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got == nil || got.Spec.Input != "p.json" || got.Dialect != "slurm" {
		t.Fatalf("options %+v", got)
	}
	if m, p := got.Spec.Config.Migration, got.Spec.Config.Pricing; !m.AllowSharing || m.AllowModelChange || m.MaxMovesPerNode != 2 || p.GPUHourUSD["H100"] != 2.5 {
		t.Fatalf("options %+v", got)
	}
}

// TestOnePlan (#26): analyze's migration section and recommend's plan are
// the same plan, byte for byte, on the same data and settings, whatever
// the dialect: several simulated clusters, and a Slurm one.
func TestOnePlan(t *testing.T) {
	for _, args := range [][]string{
		{"--sim-nodes", "16"},
		{"--sim-scenario", "fragmented"},
		{"--sim-scenario", "idle", "--sim-nodes", "4"},
		{"--sim-nodes", "8", "--sim-seed", "7"},
	} {
		p := simProfile(t, args...)
		for _, settings := range [][]string{nil, {"--move-jobs"}, {"--move-pending", "--move-blockers"}} {
			a := run(t, nil, append([]string{"analyze", p, "--report", "migration", "-f", "json"}, settings...)...)
			var rep struct {
				Migration json.RawMessage `json:"migration"`
			}
			if a.code != 0 || json.Unmarshal([]byte(a.out), &rep) != nil {
				t.Fatalf("%v %v: analyze exit %d %s", args, settings, a.code, a.errOut)
			}
			for _, dialect := range []string{"json", "kubectl", "slurm"} {
				out := filepath.Join(t.TempDir(), "plan")
				r := run(t, nil, append([]string{"recommend", "-i", p, "--dialect", dialect, "-o", out}, settings...)...)
				if r.code != 0 {
					t.Fatalf("%v %v %s: recommend exit %d %s", args, settings, dialect, r.code, r.errOut)
				}
				b, _ := os.ReadFile(out)
				if dialect == "kubectl" {
					sameNodesAndMoves(t, fmt.Sprint(args, settings), rep.Migration, string(b))
				}
				if dialect != "json" {
					continue
				}
				var x, y any
				_ = json.Unmarshal(rep.Migration, &x)
				_ = json.Unmarshal(b, &y)
				xb, _ := json.Marshal(x)
				yb, _ := json.Marshal(y)
				if !bytes.Equal(xb, yb) {
					t.Errorf("%v %v: analyze's plan and recommend's differ:\nanalyze:   %s\nrecommend: %s", args, settings, xb, yb)
				}
			}
		}
	}
}

// sameNodesAndMoves checks that a kubectl script drains the nodes analyze's
// plan releases, every one, and predicts its running pods' moves as the
// plan makes them: the script's NODES and PREDICTED arrays against the
// plan's released_nodes and moves.
func sameNodesAndMoves(t *testing.T, what string, planJSON []byte, script string) {
	t.Helper()
	var plan struct {
		Moves []struct {
			Workload, To string
		}
		Released []string `json:"released_nodes"`
	}
	if err := json.Unmarshal(planJSON, &plan); err != nil {
		t.Fatal(err)
	}
	var nodes []string
	predicted := map[string]string{}
	for _, l := range strings.Split(script, "\n") {
		switch {
		case strings.HasPrefix(l, "NODES=( "):
			nodes = strings.Fields(strings.TrimSuffix(strings.TrimPrefix(l, "NODES=( "), ")"))
		case strings.HasPrefix(l, "declare -A PREDICTED=( "):
			for _, kv := range strings.Fields(strings.TrimSuffix(strings.TrimPrefix(l, "declare -A PREDICTED=( "), ")")) {
				k, v, _ := strings.Cut(strings.TrimPrefix(kv, "["), "]=")
				predicted[k] = v
			}
		}
	}
	want := map[string]string{}
	for _, m := range plan.Moves {
		want[m.Workload] = m.To
	}
	if fmt.Sprint(nodes) != fmt.Sprint(plan.Released) {
		t.Errorf("%s: the kubectl script drains %v; the plan releases %v", what, nodes, plan.Released)
	}
	for w, to := range predicted { // the running pods' moves (a pending one is not evicted)
		if want[w] != to {
			t.Errorf("%s: the kubectl script predicts %s on %s; the plan moves it to %q", what, w, to, want[w])
		}
	}
	if len(predicted) == 0 && len(plan.Moves) > 0 && !strings.Contains(what, "move-pending") {
		t.Errorf("%s: the kubectl script predicts no move; the plan has %d", what, len(plan.Moves))
	}
}

// TestKubectlDryRunSaysWhatItWouldDo: the kubectl script run without
// --execute prints the evictions it would make and ends "would release",
// never "done: released".
func TestKubectlDryRunSaysWhatItWouldDo(t *testing.T) {
	p := simProfile(t, "--sim-nodes", "16")
	script := filepath.Join(t.TempDir(), "plan.sh")
	if r := run(t, nil, "recommend", "-i", p, "--dialect", "kubectl", "-o", script); r.code != 0 {
		t.Fatalf("recommend: %s", r.errOut)
	}
	out, err := exec.Command("bash", script).CombinedOutput()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	last := lines[len(lines)-1]
	if err != nil || !strings.HasPrefix(last, "seedance plan: dry run: would release node-") || strings.Contains(string(out), "done: released") ||
		!strings.Contains(string(out), "+ (evict inference/") || !strings.Contains(string(out), "as kubectl drain would)") {
		t.Errorf("dry run: %v\n%s", err, out)
	}
}
