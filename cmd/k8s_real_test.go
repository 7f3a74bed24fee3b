package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/testkit/k8stest"
	"github.com/seedance/seedance/profile"
)

// k8sScenario is the cluster the kubectl plans run against: six kwok nodes
// of 8 GPUs, a DaemonSet on every node, and workloads steered (softly) to
// their nodes. n1 runs a Deployment's one-GPU pod (movable), n2 a
// six-GPU Deployment whose PodDisruptionBudget is at its minimum, n3 a
// bare pod, n4 a StatefulSet's pod, n5 a Job (kwok completes it at once),
// n6 nothing; one pod asks for 16 GPUs and stays Pending. soloPDB is the
// minAvailable of the movable pod's budget.
func k8sScenario(t *testing.T, soloPDB int) *k8stest.Cluster {
	t.Helper()
	c := k8stest.Start(t)
	c.AddGPUNodes(8, "n1", "n2", "n3", "n4", "n5", "n6")
	prefer := func(node string) string {
		return fmt.Sprintf(`affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 100, preference: {matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [%s]}]}}]}}`, node)
	}
	container := func(gpus int) string {
		return fmt.Sprintf(`containers: [{name: c, image: fake, resources: {limits: {nvidia.com/gpu: "%d"}}}]`, gpus)
	}
	deploy := func(name, node string, gpus int) string {
		return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %s, namespace: ml}
spec:
  replicas: 1
  selector: {matchLabels: {app: %s}}
  template:
    metadata: {labels: {app: %s}}
    spec: {%s, %s}
---
`, name, name, name, prefer(node), container(gpus))
	}
	c.Apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: ml}\n")
	c.WaitFor("the ml ServiceAccount", 60*time.Second, func() bool { _, err := c.Kubectl("get", "serviceaccount", "default", "-n", "ml"); return err == nil })
	// The GPU workloads first, one after another, so that each lands where it prefers.
	c.Apply(deploy("solo", "n1", 1) + fmt.Sprintf(`apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: solo, namespace: ml}
spec: {minAvailable: %d, selector: {matchLabels: {app: solo}}}
`, soloPDB))
	c.Apply(deploy("wide", "n2", 6) + `apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: wide, namespace: ml}
spec: {minAvailable: 1, selector: {matchLabels: {app: wide}}}
`)
	c.Apply(fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: bare, namespace: ml}\nspec: {%s, %s}\n", prefer("n3"), container(1)))
	c.Apply(fmt.Sprintf(`apiVersion: apps/v1
kind: StatefulSet
metadata: {name: notebook, namespace: ml}
spec:
  serviceName: notebook
  replicas: 1
  selector: {matchLabels: {app: notebook}}
  template:
    metadata: {labels: {app: notebook}}
    spec: {%s, %s}
---
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: ml}
spec:
  template:
    spec: {restartPolicy: Never, %s, %s}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: exporter, namespace: ml}
spec:
  selector: {matchLabels: {app: exporter}}
  template:
    metadata: {labels: {app: exporter}}
    spec: {containers: [{name: c, image: fake}]}
---
apiVersion: v1
kind: Pod
metadata: {name: huge, namespace: ml}
spec: {%s}
`, prefer("n4"), container(1), prefer("n5"), container(1), container(16)))
	c.WaitFor("the workloads in place", 90*time.Second, func() bool {
		ps := livePods(t, c)
		want := map[string]string{"solo": "n1", "wide": "n2", "bare": "n3", "notebook-0": "n4"}
		for name, node := range want {
			ok := false
			for _, p := range ps {
				if strings.HasPrefix(p.name, name) && p.node == node && p.phase == "Running" {
					ok = true
				}
			}
			if !ok {
				return false
			}
		}
		return strings.Count(strings.Join(podNames(ps, "exporter-"), " "), "exporter-") == 6
	})
	return c
}

type livePod struct {
	ns, name, node, phase, kind, owner, uid string
	gpus                                    int
}

func livePods(t *testing.T, c *k8stest.Cluster) []livePod {
	t.Helper()
	out, err := c.Kubectl("get", "pods", "-A", "-o", `go-template={{range .items}}{{.metadata.namespace}} {{.metadata.name}} {{or .spec.nodeName "-"}} {{.status.phase}} {{$k := "-"}}{{$o := "-"}}{{range .metadata.ownerReferences}}{{$k = .kind}}{{$o = .name}}{{end}}{{$k}} {{$o}} {{.metadata.uid}} {{range .spec.containers}}{{with .resources.limits}}{{index . "nvidia.com/gpu"}}{{end}}{{end}}{{"\n"}}{{end}}`)
	if err != nil {
		t.Fatal(err)
	}
	var ps []livePod
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 7 {
			continue
		}
		p := livePod{ns: f[0], name: f[1], node: f[2], phase: f[3], kind: f[4], owner: f[5], uid: f[6]}
		if len(f) > 7 {
			p.gpus, _ = strconv.Atoi(strings.TrimPrefix(f[7], "<no value>"))
		}
		ps = append(ps, p)
	}
	return ps
}

func podNames(ps []livePod, prefix string) []string {
	var out []string
	for _, p := range ps {
		if strings.HasPrefix(p.name, prefix) {
			out = append(out, p.name)
		}
	}
	return out
}

// liveProfile is the profile of the cluster as it is: each node's 8 GPUs,
// the running GPU pods on them with their controllers (as kube_pod_owner
// names them), busy at 60 %, the other GPUs idle, for ten minutes.
func liveProfile(t *testing.T, c *k8stest.Cluster) string {
	t.Helper()
	return liveProfileEnding(t, c, time.Now().UTC().Truncate(time.Second))
}

// liveProfileEnding is liveProfile with data that ends at end.
func liveProfileEnding(t *testing.T, c *k8stest.Cluster, end time.Time) string {
	t.Helper()
	start := end.Add(-600 * time.Second)
	p := &profile.Profile{SchemaVersion: profile.SchemaVersion, Source: "test", StartedAt: start, EndedAt: start.Add(600 * time.Second), IntervalS: 60, Complete: true}
	byNode := map[string][]livePod{}
	for _, lp := range livePods(t, c) {
		if lp.gpus > 0 && lp.phase == "Running" {
			byNode[lp.node] = append(byNode[lp.node], lp)
		}
	}
	for _, name := range []string{"n1", "n2", "n3", "n4", "n5", "n6"} {
		n := profile.Node{Name: name}
		used := 0
		for _, lp := range byNode[name] {
			w := profile.Workload{ID: lp.ns + "/" + lp.name, Name: lp.name, Kind: profile.KindPod, State: profile.StateRunning,
				Labels: map[string]string{"namespace": lp.ns}}
			if ctl := controllerOf(lp.kind, lp.owner); ctl != "" {
				w.Labels[profile.ControllerLabel] = ctl
			}
			for i := 0; i < lp.gpus; i++ {
				w.GPUs = append(w.GPUs, used)
				used++
			}
			w.GPUCount = lp.gpus
			n.Workloads = append(n.Workloads, w)
		}
		for i := 0; i < 8; i++ {
			util := 0.0
			if i < used {
				util = 60
			}
			g := profile.GPU{Index: i, UUID: fmt.Sprintf("GPU-%s-%d", name, i), Model: "NVIDIA H100 80GB HBM3", MemoryTotalBytes: 80 << 30}
			for s := 0; s < 10; s++ {
				g.Series.T = append(g.Series.T, float64(60*s))
				g.Series.GPUUtilPct = append(g.Series.GPUUtilPct, util)
			}
			n.GPUs = append(n.GPUs, g)
		}
		p.Nodes = append(p.Nodes, n)
	}
	path := filepath.Join(t.TempDir(), "cluster.json")
	if err := profile.WriteFile(path, p); err != nil {
		t.Fatal(err)
	}
	return path
}

// controllerOf names a pod's controller as kube_pod_owner does, a
// ReplicaSet as its Deployment.
func controllerOf(kind, owner string) string {
	switch kind {
	case "-":
		return ""
	case "ReplicaSet":
		if i := strings.LastIndexByte(owner, '-'); i > 0 {
			return "Deployment/" + owner[:i]
		}
	}
	return kind + "/" + owner
}

// runPlan writes the kubectl plan of the profile and runs it with
// --execute against the cluster.
func runPlan(t *testing.T, c *k8stest.Cluster, prof string, env ...string) (string, int, string) {
	t.Helper()
	plan := filepath.Join(t.TempDir(), "plan.sh")
	r := run(t, nil, "recommend", "-i", prof, "-o", plan)
	if r.code != 0 {
		t.Fatalf("recommend: exit %d: %s", r.code, r.errOut)
	}
	return runScriptOn(t, c, plan, env, "--execute")
}

// runScriptOn runs a plan's script with args against the cluster: its
// output, exit status and text.
func runScriptOn(t *testing.T, c *k8stest.Cluster, plan string, env []string, args ...string) (string, int, string) {
	t.Helper()
	script, _ := os.ReadFile(plan)
	cmd := exec.Command("bash", append([]string{plan}, args...)...)
	cmd.Env = append(append([]string{}, c.Env...), env...)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code, string(script)
}

func nodeState(t *testing.T, c *k8stest.Cluster, node string) (cordoned bool, pods []string) {
	t.Helper()
	out, _ := c.Kubectl("get", "node", node, "-o", "jsonpath={.spec.unschedulable}")
	for _, p := range livePods(t, c) {
		if p.node == node && p.kind != "DaemonSet" && p.phase != "Succeeded" && p.phase != "Failed" {
			pods = append(pods, p.name)
		}
	}
	sort.Strings(pods)
	return out == "true", pods
}

// TestKubectlPlanOnRealAPIServer (#26): the kubectl plan of a real
// cluster's profile runs to the end with --execute against a real API
// server, controller-manager and scheduler: the movable pod is evicted and
// its Deployment's replacement is ready elsewhere, the nodes the plan
// releases are cordoned and drained, the nodes with a bare pod or a
// StatefulSet's pod are untouched, no other pod restarts, and the budget
// at its minimum is not broken.
func TestKubectlPlanOnRealAPIServer(t *testing.T) {
	t.Parallel() // its settings are its own (testFactory)
	c := k8sScenario(t, 0)
	before := map[string]string{}
	for _, p := range livePods(t, c) {
		before[p.name] = p.uid
	}
	prof := liveProfile(t, c)
	r := run(t, nil, "recommend", "-i", prof, "--dialect", "json")
	var plan struct {
		Released []string `json:"released_nodes"`
		Moves    []struct {
			Workload string `json:"workload"`
		} `json:"moves"`
		Blockers []struct {
			Node, Workload, Reason string
		} `json:"blockers"`
	}
	if err := json.Unmarshal([]byte(r.out), &plan); err != nil {
		t.Fatalf("%v: %s", err, r.out)
	}
	if got := strings.Join(plan.Released, ","); got != "n1,n5,n6" || len(plan.Moves) != 1 || !strings.HasPrefix(plan.Moves[0].Workload, "ml/solo-") {
		t.Fatalf("plan: released %s, moves %+v, blockers %+v", got, plan.Moves, plan.Blockers)
	}
	out, code, script := runPlan(t, c, prof)
	if code != 0 || !strings.Contains(out, "seedance plan: done: released n1 n5 n6") {
		t.Fatalf("the plan did not run to the end (exit %d):\n%s\n%s", code, out, script)
	}
	t.Logf("the plan's run:\n%s", out)
	checkCordonedFirst(t, out, []string{"n1", "n5", "n6"})
	for _, n := range []string{"n1", "n5", "n6"} {
		if cordoned, pods := nodeState(t, c, n); !cordoned || len(pods) > 0 {
			t.Errorf("%s: cordoned %v, pods left %v", n, cordoned, pods)
		}
	}
	for _, n := range []string{"n2", "n3", "n4"} {
		if cordoned, _ := nodeState(t, c, n); cordoned {
			t.Errorf("%s was cordoned", n)
		}
	}
	after := livePods(t, c)
	solo := 0
	for _, p := range after {
		if strings.HasPrefix(p.name, "solo-") && p.phase == "Running" {
			solo++
		}
		if old, ok := before[p.name]; ok && old != p.uid {
			t.Errorf("%s restarted", p.name)
		}
		for _, kept := range []string{"wide-", "bare", "notebook-0"} {
			if strings.HasPrefix(p.name, kept) && before[p.name] == "" {
				t.Errorf("%s is new: %s was restarted or moved", p.name, kept)
			}
		}
	}
	if solo != 1 {
		t.Errorf("solo has %d running replicas, want 1", solo)
	}
}

// TestKubectlPlanStopsOnBudget (#26): when the movable pod's budget is at
// its minimum, the eviction is refused, retried for a bounded time, and
// the script stops with a clear message before draining any node.
func TestKubectlPlanStopsOnBudget(t *testing.T) {
	t.Parallel() // its settings are its own (testFactory)
	c := k8sScenario(t, 1)
	prof := liveProfile(t, c)
	out, code, _ := runPlan(t, c, prof, "SEEDANCE_EVICT_TIMEOUT=4")
	if code != 3 || !strings.Contains(out, "its PodDisruptionBudget refused the eviction for 4s") || !strings.Contains(out, "no node was drained") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if _, pods := nodeState(t, c, "n1"); len(pods) != 1 || !strings.HasPrefix(pods[0], "solo-") {
		t.Errorf("n1's pod: %v", pods)
	}
	if !strings.Contains(out, "kubectl uncordon") {
		t.Errorf("the message does not say how to undo the cordons:\n%s", out)
	}
}

// TestAnalyzeCommandsOnRealAPIServer (#26): every kubectl command in
// analyze's suggestions runs with the same rules as a plan: the empty
// nodes' drains succeed, and no command is offered that would evict a
// running pod.
func TestAnalyzeCommandsOnRealAPIServer(t *testing.T) {
	t.Parallel() // its settings are its own (testFactory)
	c := k8sScenario(t, 0)
	prof := liveProfile(t, c)
	r := run(t, nil, "analyze", prof, "--report", "all", "-f", "json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	var rep struct {
		Suggestions []struct{ Kind, Node, Text, Command string } `json:"suggestions"`
	}
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil {
		t.Fatal(err)
	}
	ran := map[string]bool{}
	for _, s := range rep.Suggestions {
		if !strings.HasPrefix(s.Command, "kubectl ") {
			continue
		}
		cmd := exec.Command("bash", "-c", s.Command)
		cmd.Env = c.Env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: %s: %v\n%s", s.Kind, s.Command, err, out)
		}
		ran[s.Node] = true
	}
	for _, n := range []string{"n5", "n6"} {
		if cordoned, pods := nodeState(t, c, n); !ran[n] || !cordoned || len(pods) > 0 {
			t.Errorf("%s: drained by a suggestion %v, cordoned %v, pods %v", n, ran[n], cordoned, pods)
		}
	}
	for _, n := range []string{"n1", "n2", "n3", "n4"} {
		if cordoned, pods := nodeState(t, c, n); cordoned || len(pods) != 1 {
			t.Errorf("%s: cordoned %v, pods %v: a suggestion touched a node with a running pod", n, cordoned, pods)
		}
	}
}

// checkCordonedFirst: every released node is cordoned before the first
// eviction, so that no replacement lands on a node being emptied; each
// moved pod is evicted once, and its replacement runs on a node that
// stays.
func checkCordonedFirst(t *testing.T, out string, released []string) {
	t.Helper()
	lines := strings.Split(out, "\n")
	firstEvict := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "+ evict ") })
	if firstEvict < 0 {
		t.Fatalf("no eviction in the run:\n%s", out)
	}
	for _, n := range released {
		if i := slices.Index(lines, "+ kubectl cordon "+n); i < 0 || i > firstEvict {
			t.Errorf("%s was not cordoned before the first eviction (line %d, eviction at %d)", n, i, firstEvict)
		}
	}
	evicted := map[string]int{}
	for _, l := range lines {
		if f := strings.Fields(l); len(f) > 3 && f[0] == "+" && f[1] == "evict" {
			rs := f[3] // a ReplicaSet's pod is named after it, then "-" and 5 characters
			if i := strings.LastIndexByte(rs, '-'); i > 0 {
				rs = rs[:i]
			}
			evicted[f[2]+"/"+rs]++
		}
		if _, where, ok := strings.Cut(l, "its ReplicaSet runs on "); ok {
			for _, n := range released {
				if strings.Contains(where, n+"×") {
					t.Errorf("a replacement runs on %s, a node being released: %s", n, l)
				}
			}
		}
	}
	for rs, k := range evicted {
		if k != 1 {
			t.Errorf("%s's pods were evicted %d times", rs, k)
		}
	}
}

// TestKubectlPlanRefusesStaleData: a plan run longer than
// migration.max_plan_age after its data ends refuses to execute before
// any command (exit 3, nothing cordoned, no pod moved), warns in a dry
// run, and executes with --stale-ok.
func TestKubectlPlanRefusesStaleData(t *testing.T) {
	t.Parallel() // its settings are its own (testFactory)
	c := k8sScenario(t, 0)
	prof := liveProfileEnding(t, c, time.Now().UTC().Add(-2*time.Hour).Truncate(time.Second))
	plan := filepath.Join(t.TempDir(), "plan.sh")
	if r := run(t, nil, "recommend", "-i", prof, "-o", plan); r.code != 0 {
		t.Fatalf("recommend: exit %d: %s", r.code, r.errOut)
	}
	before := livePods(t, c)
	out, code, _ := runScriptOn(t, c, plan, nil, "--execute")
	if code != 3 || !strings.Contains(out, "seedance plan: refused: its data is 72") || !strings.Contains(out, "nothing was done") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, n := range []string{"n1", "n5", "n6"} {
		if cordoned, _ := nodeState(t, c, n); cordoned {
			t.Errorf("%s was cordoned by a refused plan", n)
		}
	}
	if after := livePods(t, c); !reflect.DeepEqual(before, after) {
		t.Errorf("pods changed under a refused plan:\n%v\n%v", before, after)
	}
	out, code, _ = runScriptOn(t, c, plan, nil)
	if code != 0 || !strings.Contains(out, "seedance plan: warning: its data is 72") || !strings.Contains(out, "dry run: would release n1 n5 n6") {
		t.Fatalf("dry run: exit %d:\n%s", code, out)
	}
	out, code, _ = runScriptOn(t, c, plan, nil, "--execute", "--stale-ok")
	if code != 0 || !strings.Contains(out, "seedance plan: done: released n1 n5 n6") {
		t.Fatalf("--stale-ok: exit %d:\n%s", code, out)
	}
}
