package recommend

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seedance/seedance/internal/testkit/schematest"
)

func str(s string) *string { return &s }

var hostile = []string{
	"a;touch PWNED", "$(touch PWNED)", "`touch PWNED`", "x' ; touch PWNED; '", "n\ntouch PWNED", "nœud-ü", `"; touch PWNED; "`, "-rf",
}

func hostilePlan() *Plan {
	p := &Plan{SchemaVersion: planSchema, SavingsUSDPerHour: 40, SavingsUSDPerMonth: 29200, NodePriceUSDPerHour: map[string]float64{"node-a": 40}}
	for _, h := range hostile {
		p.Moves = append(p.Moves, Move{Workload: h, From: str(h), To: h, GPUs: []int{0}, Reason: h, Name: h, Namespace: h})
		p.ReleasedNodes = append(p.ReleasedNodes, h)
	}
	p.Moves = append(p.Moves, Move{Workload: "ml/ok", From: str("node-a"), To: "node-b", GPUs: []int{1}, Reason: "frees node-a", Name: "ok-5f6d", Namespace: "ml"})
	p.ReleasedNodes = append(p.ReleasedNodes, "node-a")
	return p
}

// runScript runs a generated script in a directory with a fake kubectl and
// scontrol that log their arguments, and returns the log.
func runScript(t *testing.T, script string, args ...string) string {
	t.Helper()
	out, err := runScriptEnv(t, nil, script, args...)
	if err != nil {
		t.Fatalf("script failed: %v\n%s", err, out)
	}
	return out
}

// runScriptEnv runs a plan against fake kubectl and scontrol that log their
// arguments; scontrol show job answers Requeue=$REQUEUE (1 unless env sets
// it).
func runScriptEnv(t *testing.T, env []string, script string, args ...string) (string, error) {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	fake := "#!/bin/sh\nfor a in \"$@\"; do printf '[%s]' \"$a\" >> \"$LOG\"; done; echo >> \"$LOG\"\n" +
		"case \"$*\" in *spec.nodeName=node-a*) echo 'ml ok-5f6d ReplicaSet ok-5f6d Running - -';;\n" +
		"  *spec.nodeName=gpu-y*) echo 'ml ok-2 ReplicaSet ok-2 Running - -';; \"get pod -n \"*) exit 1;; \"get replicaset \"*) echo '1 1';;\n" +
		"  *'range .items[*]'*) echo 'ok-5f6d-x1 node-b';; \"show job \"*) echo \"JobId=$3 Requeue=${REQUEUE:-1} ReqNodeList=${REQNODES:-(null)}\";; esac\n"
	for _, name := range []string{"kubectl", "scontrol"} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(fake), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "plan.sh")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("bash", "-n", path).CombinedOutput(); err != nil {
		t.Fatalf("bash -n: %v\n%s", err, out)
	}
	cmd := exec.Command("bash", append([]string{path}, args...)...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + bin + ":/usr/bin:/bin", "LOG=" + filepath.Join(dir, "log")}, env...)
	out, err := cmd.CombinedOutput()
	if _, serr := os.Stat(filepath.Join(dir, "PWNED")); serr == nil {
		t.Fatal("a name ran a command")
	}
	log, _ := os.ReadFile(filepath.Join(dir, "log"))
	return string(out) + "\nLOG:\n" + string(log), err
}

func TestKubectlScriptIsSafe(t *testing.T) {
	var b bytes.Buffer
	if err := kubectlScript(&b, hostilePlan()); err != nil {
		t.Fatal(err)
	}
	script := b.String()
	if !strings.Contains(script, "set -uo pipefail") || strings.Count(script, "#    skipped") != len(hostile) || strings.Count(script, "# not released") != len(hostile) {
		t.Fatalf("script:\n%s", script)
	}
	if !strings.Contains(script, "1 move(s), releases 1 node(s), saves $40.00/h ($29200.00/month)") {
		t.Errorf("header counts what the plan does, not what the script skips:\n%s", script[:300])
	}
	if strings.Contains(script, "kubectl patch") || strings.Contains(script, "--delete-emptydir-data") || strings.Contains(script, "--force") {
		t.Errorf("the script patches an owner or drains what it must not:\n%s", script)
	}
	dry := runScript(t, script)
	if strings.Contains(dry, "LOG:\n[") {
		t.Fatalf("the dry run called kubectl:\n%s", dry)
	}
	if !strings.Contains(dry, "+ kubectl cordon node-a") || !strings.Contains(dry, "+ kubectl drain node-a --ignore-daemonsets --timeout=300s") {
		t.Fatalf("dry run output:\n%s", dry)
	}
	// Live, against a kubectl that logs: checked, cordoned, evicted
	// through the Eviction API, replaced, then drained, in that order.
	live := runScript(t, script, "--execute")
	at := 0
	for _, want := range []string{"[spec.nodeName=node-a]", "[cordon][node-a]", "[create][--raw][/api/v1/namespaces/ml/pods/ok-5f6d/eviction][-f][-]",
		"[get][replicaset][-n][ml][ok-5f6d]", "[drain][node-a][--ignore-daemonsets][--timeout=300s]"} {
		i := strings.Index(live[at:], want)
		if i < 0 {
			t.Fatalf("kubectl was not called with %s after the calls before it:\n%s", want, live)
		}
		at += i
	}
	if !strings.Contains(live, "ml/ok-5f6d replaced; its ReplicaSet runs on node-b×1 (as planned: node-b)") {
		t.Errorf("where the replacement runs:\n%s", live)
	}
}

func TestSlurmScriptIsSafe(t *testing.T) {
	p := hostilePlan()
	p.Moves[len(p.Moves)-1].Name = "4243" // the move off node-a, as a Slurm job
	p.Moves = append(p.Moves, Move{Workload: "4242", From: str("gpu07"), To: "gpu12", GPUs: []int{0}, Name: "4242"})
	var b bytes.Buffer
	if err := slurmScript(&b, p); err != nil {
		t.Fatal(err)
	}
	script := b.String()
	if !strings.Contains(script, "# release node-a: DRAIN stops new jobs from starting on it; jobs running there finish first") {
		t.Errorf("DRAIN is not described as it is:\n%s", script)
	}
	// A dry run by default, as the kubectl plan.
	dry := runScript(t, script)
	if strings.Contains(dry, "LOG:\n[") || !strings.Contains(dry, "+ scontrol update NodeName=node-a State=DRAIN") {
		t.Fatalf("the dry run called scontrol, or printed nothing:\n%s", dry)
	}
	out := runScript(t, script, "--execute")
	// A running job: checked, requeued held, bound to its target, released;
	// then, after every move, the drains.
	order := []string{"[show][job][4242]", "[requeuehold][4242]", "[update][JobId=4242][ReqNodeList=gpu12]", "[release][4242]",
		"[update][NodeName=node-a][State=DRAIN][Reason=seedance: release (migration plan)]"}
	at := 0
	for _, want := range order {
		i := strings.Index(out[at:], want)
		if i < 0 {
			t.Fatalf("scontrol was not called with %s after the calls before it:\n%s", want, out)
		}
		at += i
	}
	// Slurm would not requeue it: the script stops before the job is
	// touched, and drains nothing.
	// A job whose user asked for its nodes (-w) is not moved either (#26).
	out, err := runScriptEnv(t, []string{"REQNODES=gpu07"}, script, "--execute")
	if err == nil || !strings.Contains(out, "asked for its nodes (-w)") || strings.Contains(out, "[requeuehold]") || strings.Contains(out, "State=DRAIN]") {
		t.Fatalf("a job its user placed with -w was moved, or a node drained (err %v):\n%s", err, out)
	}
	out, err = runScriptEnv(t, []string{"REQUEUE=0"}, script, "--execute")
	if err == nil || !strings.Contains(out, "cannot be requeued (Requeue=0)") || strings.Contains(out, "[requeuehold]") || strings.Contains(out, "State=DRAIN]") {
		t.Fatalf("a job Slurm would not requeue was moved, or a node drained (err %v):\n%s", err, out)
	}
}

// TestSkippedMoveKeepsItsNode: a node is released only when every move off
// it is in the script; its other moves are held back too.
func TestSkippedMoveKeepsItsNode(t *testing.T) {
	p := &Plan{SchemaVersion: planSchema, SavingsUSDPerHour: 70, ReleasedNodes: []string{"gpu-x", "gpu-y"},
		NodePriceUSDPerHour: map[string]float64{"gpu-x": 40, "gpu-y": 30},
		Moves: []Move{
			{Workload: "ml/ok-1", From: str("gpu-x"), To: "gpu-z", Name: "ok-1", Namespace: "ml"},
			{Workload: "ml/Bad_Name", From: str("gpu-x"), To: "gpu-z", Name: "Bad_Name", Namespace: "ml"},
			{Workload: "ml/ok-2", From: str("gpu-y"), To: "gpu-z", Name: "ok-2", Namespace: "ml"},
		}}
	var b bytes.Buffer
	if err := kubectlScript(&b, p); err != nil {
		t.Fatal(err)
	}
	live := runScript(t, b.String(), "--execute")
	for _, banned := range []string{"[cordon][gpu-x]", "[drain][gpu-x]", "ok-1"} {
		if strings.Contains(live, banned) {
			t.Errorf("kubectl got %s although a move off gpu-x was skipped:\n%s", banned, live)
		}
	}
	for _, want := range []string{"[cordon][gpu-y]", "[drain][gpu-y]", "pods/ok-2/eviction"} { // gpu-y's pod, as listed live
		if !strings.Contains(live, want) {
			t.Errorf("kubectl did not get %s:\n%s", want, live)
		}
	}
	if !strings.Contains(b.String(), "1 move(s), releases 1 node(s), saves $30.00/h") {
		t.Errorf("header:\n%s", b.String()[:300])
	}
	// Slurm: the same rule, with job ids.
	p.Moves = []Move{
		{Workload: "101", From: str("gpu-x"), To: "gpu-z", Name: "101"},
		{Workload: "x;y", From: str("gpu-x"), To: "gpu-z", Name: "x;y"},
		{Workload: "102", From: str("gpu-y"), To: "gpu-z", Name: "102"},
	}
	b.Reset()
	if err := slurmScript(&b, p); err != nil {
		t.Fatal(err)
	}
	live = runScript(t, b.String(), "--execute")
	if strings.Contains(live, "NodeName=gpu-x") || strings.Contains(live, "JobId=101") || !strings.Contains(live, "[update][NodeName=gpu-y][State=DRAIN]") {
		t.Errorf("slurm:\n%s", live)
	}
}

func TestPlanJSONSchema(t *testing.T) {
	c := build([]*Node{dgx("a", "H100", 40), dgx("b", "H100", 40)}, pod("p1", "a", 0), pod("big", "b", 0, 1, 2))
	plan, err := makePlan(context.Background(), c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := planJSON(&b, plan); err != nil {
		t.Fatal(err)
	}
	schematest.Validate(t, "plan-v1.schema.json", b.Bytes())
	var back map[string]any
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back["moves"].([]any)[0].(map[string]any)["from"] != "a" {
		t.Fatalf("plan %s", b.String())
	}
}

func TestJSONPlanWithHostileNames(t *testing.T) {
	var b bytes.Buffer
	if err := planJSON(&b, hostilePlan()); err != nil {
		t.Fatal(err)
	}
	var back Plan
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	for i, h := range hostile {
		if back.Moves[i].Workload != h || back.ReleasedNodes[i] != h {
			t.Fatalf("name %q came back as %q", h, back.Moves[i].Workload)
		}
	}
}

// TestEmptyPlanIsNothingToDo (#26): a plan that releases no node is a
// script that says so and runs nothing, in both dialects.
func TestEmptyPlanIsNothingToDo(t *testing.T) {
	p := &Plan{SchemaVersion: planSchema, Moves: []Move{}, ReleasedNodes: []string{}}
	for name, write := range map[string]func(io.Writer, *Plan) error{"kubectl": kubectlScript, "slurm": slurmScript} {
		var b bytes.Buffer
		if err := write(&b, p); err != nil {
			t.Fatal(err)
		}
		out := runScript(t, b.String(), "--execute")
		if !strings.Contains(out, "seedance plan: nothing to do: no node is released") || strings.Contains(out, "LOG:\n[") {
			t.Errorf("%s:\n%s", name, out)
		}
	}
}
