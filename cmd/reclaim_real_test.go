package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/testkit/k8stest"
	"github.com/seedance/seedance/internal/testkit/promtest"
	"github.com/seedance/seedance/profile"
)

// reclaimOwner is one workload of the reclaim scenario: its pod (one GPU
// of node n1), the controller that owns it ("" for a bare pod) and its
// utilization in the first and second profile.
type reclaimOwner struct {
	pod, controller string
	first, second   float64
}

var reclaimOwners = []reclaimOwner{
	{"ml/eval-5f7c9-abcde", "Deployment/eval", 0, 0},
	{"ml/busy-7d9f8-fghij", "Deployment/busy", 0, 80}, // busy again before its grace ends
	{"ml/kept-6c5d4-klmno", "Deployment/kept", 0, 0},  // seedance.io/keep-until on it
	{"ml/manual-8b7a6-pqrst", "Deployment/manual", 0, 0},
	{"ml/silenced-9a8b7-uvwxy", "Deployment/silenced", 0, 0},
	{"ml/train-zzzzz", "Job/train", 0.5, 1}, // the noise floor
	{"ml/free", "", 0, 0},
	{"ml/guarded", "", 0, 0},                    // its PodDisruptionBudget refuses
	{"ml/llm-6d5c4-vwxyz", "Rollout/llm", 0, 0}, // a custom resource with /scale
	{"ml/nb-0", "Notebook/nb", 0, 0},            // a custom resource without it
}

// reclaimCRDs are two custom resources: Argo's Rollout with a /scale
// subresource, Kubeflow's Notebook without one (their groups and kinds; a
// schema that keeps any field).
var reclaimCRDs = crd("argoproj.io", "v1alpha1", "Rollout", "rollouts",
	"    subresources:\n      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}\n") +
	"---\n" + crd("kubeflow.org", "v1", "Notebook", "notebooks", "")

// crd is a namespaced CustomResourceDefinition of one version.
func crd(group, version, kind, plural, extra string) string {
	return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: %[4]s.%[1]s}
spec:
  group: %[1]s
  names: {kind: %[3]s, plural: %[4]s, singular: %[5]s, listKind: %[3]sList}
  scope: Namespaced
  versions:
  - name: %[2]s
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
%[6]s`, group, version, kind, plural, strings.ToLower(kind), extra)
}

// reclaimProfile writes four hours of minute samples of n1 ending at end.
func reclaimProfile(t *testing.T, path string, end time.Time, second bool) {
	t.Helper()
	var ws []profile.Workload
	for g, o := range reclaimOwners {
		w := profile.Workload{ID: o.pod, Kind: profile.KindPod, State: profile.StateRunning, GPUs: []int{g},
			Labels: map[string]string{"namespace": "ml", "team": "research"}}
		if o.controller != "" {
			w.Labels[profile.ControllerLabel] = o.controller
		}
		ws = append(ws, w)
	}
	minuteProfile(t, path, "n1", end, len(reclaimOwners), func(g, i int) float64 {
		o := reclaimOwners[g]
		switch {
		case !second:
			return o.first
		case o.second > 50 && i < 240-40:
			return 0 // busy only in its last 40 minutes
		}
		return o.second
	}, ws...)
}

// reclaimCluster makes the scenario's owners in a real control plane.
func reclaimCluster(t *testing.T) *k8stest.Cluster {
	c := k8stest.Start(t)
	c.AddGPUNodes(8, "n1")
	c.Apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: ml}\n")
	c.WaitFor("the ml ServiceAccount", 60*time.Second, func() bool { _, err := c.Kubectl("get", "serviceaccount", "default", "-n", "ml"); return err == nil })
	deploy := func(name, annotations string) string {
		return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %s, namespace: ml, annotations: {%s}}
spec:
  replicas: 1
  selector: {matchLabels: {app: %s}}
  template:
    metadata: {labels: {app: %s}}
    spec: {containers: [{name: c, image: fake, resources: {limits: {nvidia.com/gpu: "1"}}}]}
---
`, name, annotations, name, name)
	}
	pod := func(name string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: ml, labels: {app: %s}}\nspec: {containers: [{name: c, image: fake, resources: {limits: {nvidia.com/gpu: \"1\"}}}]}\n---\n", name, name)
	}
	keep := fmt.Sprintf("seedance.io/keep-until: %q", time.Now().Add(24*time.Hour).UTC().Format(time.RFC3339))
	c.Apply(deploy("eval", "") + deploy("busy", "") + deploy("kept", keep) + deploy("manual", "") + deploy("silenced", "") +
		pod("free") + pod("guarded") + `apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: guarded, namespace: ml}
spec: {minAvailable: 1, selector: {matchLabels: {app: guarded}}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: ml}
spec:
  template:
    spec: {restartPolicy: Never, containers: [{name: c, image: fake, resources: {limits: {nvidia.com/gpu: "1"}}}]}
`)
	c.Apply(reclaimCRDs)
	c.WaitFor("the custom resources served", 60*time.Second, func() bool {
		_, err1 := c.Kubectl("get", "rollouts.argoproj.io", "-n", "ml")
		_, err2 := c.Kubectl("get", "notebooks.kubeflow.org", "-n", "ml")
		return err1 == nil && err2 == nil
	})
	c.Apply("apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: llm, namespace: ml}\nspec: {replicas: 1}\n---\n" +
		"apiVersion: kubeflow.org/v1\nkind: Notebook\nmetadata: {name: nb, namespace: ml}\nspec: {}\n")
	c.WaitFor("the pods running", 90*time.Second, func() bool {
		out, err := c.Kubectl("get", "pods", "-n", "ml", "-o", "jsonpath={range .items[*]}{.status.phase} {end}")
		return err == nil && strings.Count(out, "Running") >= 7
	})
	return c
}

func kubeconfigOf(t *testing.T, c *k8stest.Cluster) string {
	for _, e := range c.Env {
		if v, ok := strings.CutPrefix(e, "KUBECONFIG="); ok {
			return v
		}
	}
	t.Fatal("the control plane has no KUBECONFIG")
	return ""
}

// runAt runs seedance with its clock at now.
func runAt(t *testing.T, now time.Time, args ...string) result {
	t.Helper()
	f, get := testFactory(t, nil)
	f.Now = func() time.Time { return now }
	code := Run(context.Background(), f, args)
	r := get()
	r.code = code
	return r
}

func jsonOf(t *testing.T, method, url, body string, out any) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("%s %s: HTTP %d", method, url, resp.StatusCode)
	}
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReclaimKubernetes runs reclaim against a real control plane and a
// real Alertmanager: an idle Deployment is noticed (the alert carries its
// figures), scaled to 0 at the grace's end and restored; a Job suspended;
// a bare pod evicted and another's PodDisruptionBudget refusal reported;
// a busy-again Deployment, one kept by annotation, one kept by the keep
// command and one whose alert was silenced are left alone; a second pass
// before the deadline neither notifies again nor acts. A custom resource
// with /scale (an Argo Rollout) is scaled to 0 and back, one without it
// (a Kubeflow Notebook) is notice only, the reason said.
func TestReclaimKubernetes(t *testing.T) {
	t.Parallel() // its settings are its own (testFactory)
	am := promtest.StartAlertmanager(t)
	c := reclaimCluster(t)
	dir := t.TempDir()
	db, cfgFile := filepath.Join(dir, "ledger.db"), filepath.Join(dir, "seedance.yaml")
	if err := os.WriteFile(cfgFile, []byte("reclaim:\n  grace: 30m\n  max_namespace_share: 1\n  max_actions_per_run: 10\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().UTC().Truncate(time.Second)
	first, second := filepath.Join(dir, "p1.json"), filepath.Join(dir, "p2.json")
	reclaimProfile(t, first, t0, false)
	reclaimProfile(t, second, t0.Add(31*time.Minute), true)
	args := func(input string, more ...string) []string {
		return append([]string{"reclaim", "--config", cfgFile, "-i", input, "--ledger", db, "--gpu-price", "H100=2.49",
			"--alertmanager-url", am.URL, "--kubeconfig", kubeconfigOf(t, c)}, more...)
	}

	dry := runAt(t, t0.Add(30*time.Second), args(first)...)
	if dry.code != 0 || !strings.Contains(dry.out, "ml/Deployment/eval: would notify (ml/Deployment/eval has held 1 × NVIDIA H100 80GB HBM3 idle for at least 4h: $9.96 so far, $2.49 an hour") {
		t.Fatalf("dry run: exit %d\n%s\n%s", dry.code, dry.out, dry.errOut)
	}
	r := runAt(t, t0.Add(30*time.Second), args(first, "--execute")...)
	if r.code != 0 || !strings.Contains(r.errOut, "10 targets, 10 candidates, 10 notices, 0 acted") {
		t.Fatalf("first pass: exit %d\n%s\n%s", r.code, r.out, r.errOut)
	}
	var alerts []struct {
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
	}
	jsonOf(t, "GET", am.URL+"/api/v2/alerts", "", &alerts)
	found, keepCmd := false, ""
	for _, a := range alerts {
		if a.Labels["seedance_target"] == "ml/Deployment/manual" {
			// The command the notice prints for the owner's answer.
			_, keepCmd, _ = strings.Cut(a.Annotations["summary"], "unless kept (")
			keepCmd = strings.TrimSuffix(keepCmd, ")")
		}
		if a.Labels["seedance_target"] == "ml/Deployment/eval" {
			found = a.Labels["namespace"] == "ml" && a.Labels["team"] == "research" && a.Annotations["usd_so_far"] == "9.96" &&
				a.Annotations["usd_per_hour"] == "2.49" && strings.Contains(a.Annotations["summary"], "scaled to 0")
		}
	}
	if len(alerts) != 10 || !found {
		t.Fatalf("Alertmanager has %d alerts, eval's with its figures: %v\n%+v", len(alerts), found, alerts)
	}
	if r := runAt(t, t0.Add(90*time.Second), args(first, "--execute")...); r.code != 0 || !strings.Contains(r.errOut, "0 notices, 0 acted") {
		t.Fatalf("a second pass before the deadline: exit %d\n%s\n%s", r.code, r.out, r.errOut)
	}
	// The owners' answers: the keep the notice prints, run by a shell as
	// printed (the real clock: t0 is now), and a silence.
	if !strings.HasPrefix(keepCmd, "seedance reclaim keep ") {
		t.Fatalf("the notice prints no keep command: %q", keepCmd)
	}
	sh := exec.Command("bash", "-c", keepCmd+` --reason "eval tonight" --ledger `+db)
	sh.Env = []string{"PATH=" + filepath.Dir(binary) + ":/usr/bin:/bin", "HOME=" + dir}
	if out, err := sh.CombinedOutput(); err != nil || !strings.Contains(string(out), "ml/Deployment/manual: kept until") {
		t.Fatalf("%s: %v\n%s", keepCmd, err, out)
	}
	jsonOf(t, "POST", am.URL+"/api/v2/silences", fmt.Sprintf(`{"matchers":[{"name":"seedance_target","value":"ml/Deployment/silenced","isRegex":false,"isEqual":true}],
"startsAt":%q,"endsAt":%q,"createdBy":"owner","comment":"keep it"}`, time.Now().UTC().Format(time.RFC3339), time.Now().Add(2*time.Hour).UTC().Format(time.RFC3339)), nil)

	r = runAt(t, t0.Add(31*time.Minute+30*time.Second), args(second, "--execute")...)
	if r.code != 0 {
		t.Fatalf("the pass at the deadline: exit %d\n%s\n%s", r.code, r.out, r.errOut)
	}
	for _, want := range []string{
		"ml/Deployment/eval: acted (scaled to 0 from 1;",
		"ml/Deployment/busy: dropped (busy again",
		"ml/Deployment/kept: kept (seedance.io/keep-until",
		"ml/Deployment/manual: kept (kept until",
		"ml/Deployment/silenced: kept (silenced in Alertmanager by owner",
		"ml/Job/train: acted (suspended;",
		"ml/Pod/free: acted (evicted;",
		"ml/Pod/guarded: refused (refused: the eviction of ml/Pod/guarded was refused (a PodDisruptionBudget)",
		"ml/Rollout/llm: acted (scaled to 0 from 1;",
		"ml/Notebook/nb: ",
		"the API server serves kubeflow.org/v1 notebooks without a /scale subresource: notice only",
	} {
		if !strings.Contains(r.out, want) {
			t.Errorf("the pass does not say %q:\n%s", want, r.out)
		}
	}
	get := func(args ...string) string {
		out, err := c.Kubectl(append([]string{"get", "-n", "ml"}, args...)...)
		if err != nil {
			return err.Error()
		}
		return out
	}
	replicas := func(d string) string { return get("deployment", d, "-o", "jsonpath={.spec.replicas}") }
	if replicas("eval") != "0" || get("deployment", "eval", "-o", `jsonpath={.metadata.annotations.seedance\.io/reclaimed-replicas}`) != "1" {
		t.Errorf("eval: replicas %s", replicas("eval"))
	}
	for _, d := range []string{"busy", "kept", "manual", "silenced"} {
		if replicas(d) != "1" {
			t.Errorf("%s was touched: replicas %s", d, replicas(d))
		}
	}
	if r := get("rollout", "llm", "-o", `jsonpath={.spec.replicas} {.metadata.annotations.seedance\.io/reclaimed-replicas}`); r != "0 1" {
		t.Errorf("the Rollout: replicas and the recorded ones %q", r)
	}
	if s := get("job", "train", "-o", "jsonpath={.spec.suspend}"); s != "true" {
		t.Errorf("train: suspend %q", s)
	}
	c.WaitFor("the evicted pod gone", 30*time.Second, func() bool { return strings.Contains(get("pod", "free"), "NotFound") })
	if s := get("pod", "guarded", "-o", "jsonpath={.metadata.name}"); s != "guarded" {
		t.Errorf("the guarded pod: %s", s)
	}
	// A pass after the actions acts on nothing again.
	// A pass after the actions, on data that still shows the idle runs
	// (as a source's window does), neither notifies nor acts again.
	if r := runAt(t, t0.Add(32*time.Minute), args(second, "--execute")...); r.code != 0 || !strings.Contains(r.errOut, "0 notices, 0 acted, 0 refused") ||
		!strings.Contains(r.out, "ml/Pod/guarded: failed at") {
		t.Fatalf("the pass after: exit %d\n%s\n%s", r.code, r.out, r.errOut)
	}
	r = runAt(t, t0.Add(91*time.Minute+30*time.Second), "reclaim", "restore", "ml/Deployment/eval", "--execute", "--ledger", db, "--kubeconfig", kubeconfigOf(t, c))
	if r.code != 0 || !strings.Contains(r.out, "ml/Deployment/eval: scaled back to 1; it had freed 1.00 GPU-hours ($2.49)") {
		t.Fatalf("restore: exit %d\n%s\n%s", r.code, r.out, r.errOut)
	}
	if replicas("eval") != "1" || strings.Contains(get("deployment", "eval", "-o", "jsonpath={.metadata.annotations}"), "reclaimed") {
		t.Errorf("eval after restore: replicas %s, %s", replicas("eval"), get("deployment", "eval", "-o", "jsonpath={.metadata.annotations}"))
	}
	r = runAt(t, t0.Add(91*time.Minute+40*time.Second), "reclaim", "restore", "ml/Rollout/llm", "--execute", "--ledger", db, "--kubeconfig", kubeconfigOf(t, c))
	if r.code != 0 || !strings.Contains(r.out, "ml/Rollout/llm: scaled back to 1") || get("rollout", "llm", "-o", "jsonpath={.spec.replicas}") != "1" {
		t.Fatalf("restore of the Rollout: exit %d\n%s\n%s", r.code, r.out, r.errOut)
	}
	l := runAt(t, t0.Add(92*time.Minute), "reclaim", "list", "--ledger", db)
	flat := strings.Join(strings.Fields(l.out), " ")
	for _, want := range []string{"ml/Deployment/eval restored", "ml/Pod/guarded failed", "keep: ml/Deployment/manual until", "reclaimed to", "research: 4.02 GPU-hours, $10.01"} {
		if !strings.Contains(flat, want) {
			t.Errorf("reclaim list does not say %q:\n%s", want, l.out)
		}
	}
}
