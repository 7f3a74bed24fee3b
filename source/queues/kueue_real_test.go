package queues

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/kubeapi"
	"github.com/seedance/seedance/internal/testkit/k8stest"
	"github.com/seedance/seedance/profile"
)

// TestKueueFromTheAPIServer (#58): a real API server with Kueue's own
// CRDs. Kueue's controller does not run here: the test writes each
// Workload's status (admission, conditions) as the controller would,
// through the status subresource, which the CRD's validation checks. The
// read gives each ClusterQueue's cohort and GPU quota (CPU left out, a
// quantity in an unknown unit a warning and a null quota), the admitted
// Workload's reservation and wait, the pending one's wait in the
// ClusterQueue its LocalQueue feeds, and the pod of the admitted Job its
// queue. Of prod's other waits, one Kueue calls Inadmissible and one
// deactivated (spec.active false) are held by their own constraints
// (held_by); the one waiting for quota (Pending) is not.
func TestKueueFromTheAPIServer(t *testing.T) {
	c := k8stest.Start(t)
	c.InstallKueue("../..")
	c.Apply(`apiVersion: v1
kind: Namespace
metadata: {name: ml}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: research}
spec:
  cohortName: ml
  resourceGroups:
  - coveredResources: [cpu, nvidia.com/gpu]
    flavors:
    - name: h100
      resources:
      - {name: cpu, nominalQuota: "64"}
      - {name: nvidia.com/gpu, nominalQuota: "4", borrowingLimit: "2"}
    - name: a100
      resources:
      - {name: cpu, nominalQuota: "32"}
      - {name: nvidia.com/gpu, nominalQuota: "2", borrowingLimit: "1"}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: prod}
spec:
  cohortName: ml
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: h100
      resources:
      - {name: nvidia.com/gpu, nominalQuota: 4}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: odd}
spec:
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: h100
      resources:
      - {name: nvidia.com/gpu, nominalQuota: 1Ki}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: h100}
spec: {nodeLabels: {gpu: h100}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: a100}
spec: {nodeLabels: {gpu: a100, zone: b}}
---
apiVersion: v1
kind: Node
metadata: {name: gpu-1, labels: {gpu: h100, zone: b}}
---
apiVersion: v1
kind: Node
metadata: {name: gpu-2, labels: {gpu: a100, zone: a}}
` + localQueues("research", "prod", "odd"))
	workload := func(name, queue, owner string, count int) string {
		return `apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata:
  name: ` + name + `
  namespace: ml
  ownerReferences: [{apiVersion: batch/v1, kind: Job, name: ` + owner + `, uid: 00000000-0000-0000-0000-00000000000` + string(rune('0'+count)) + `}]
spec:
  queueName: ` + queue + `
  podSets:
  - name: main
    count: ` + string(rune('0'+count)) + `
    template:
      spec:
        containers:
        - name: c
          image: fake
          resources: {requests: {cpu: "1", nvidia.com/gpu: "2"}, limits: {nvidia.com/gpu: "2"}}
---
`
	}
	c.Apply(workload("job-train", "research-lq", "train", 2) + workload("job-wait", "prod-lq", "wait", 3) +
		workload("job-lost", "odd-lq", "lost", 1) + workload("job-ghost", "odd-lq", "ghost", 1) + workload("job-gated", "prod-lq", "gated", 1) +
		strings.Replace(workload("job-off", "prod-lq", "paused", 1), "  queueName:", "  active: false\n  queueName:", 1))
	created := c.Created("workloads.v1beta2.kueue.x-k8s.io", "ml", "job-train")
	reservedAt := created.Add(30 * time.Second)
	status := `{"status":{"admission":{"clusterQueue":"research","podSetAssignments":[{"name":"main","count":2,"flavors":{"nvidia.com/gpu":"h100"},"resourceUsage":{"nvidia.com/gpu":"4"}}]},` +
		`"conditions":[{"type":"QuotaReserved","status":"True","reason":"QuotaReserved","message":"Quota reserved in ClusterQueue research","lastTransitionTime":"` + reservedAt.Format(time.RFC3339) + `"}]}}`
	if out, err := c.Kubectl("patch", "workloads.v1beta2.kueue.x-k8s.io", "job-train", "-n", "ml", "--subresource=status", "--type=merge", "-p", status); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	waiting := `{"status":{"conditions":[{"type":"QuotaReserved","status":"False","reason":"Pending","message":"couldn't assign flavors","lastTransitionTime":"` + created.Format(time.RFC3339) + `"}]}}`
	if out, err := c.Kubectl("patch", "workloads.v1beta2.kueue.x-k8s.io", "job-wait", "-n", "ml", "--subresource=status", "--type=merge", "-p", waiting); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	waitCreated := c.Created("workloads.v1beta2.kueue.x-k8s.io", "ml", "job-wait")
	inadmissible := `{"status":{"conditions":[{"type":"QuotaReserved","status":"False","reason":"Inadmissible","message":"ClusterQueue prod is inactive","lastTransitionTime":"` + created.Format(time.RFC3339) + `"}]}}`
	if out, err := c.Kubectl("patch", "workloads.v1beta2.kueue.x-k8s.io", "job-gated", "-n", "ml", "--subresource=status", "--type=merge", "-p", inadmissible); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// Admitted to flavors no Node has: a100 asks for zone b, which only
	// the h100 Node is in; ghost is no ResourceFlavor.
	for name, flavor := range map[string]string{"job-lost": "a100", "job-ghost": "ghost"} {
		admitted := `{"status":{"admission":{"clusterQueue":"odd","podSetAssignments":[{"name":"main","count":1,"flavors":{"cpu":"h100","nvidia.com/gpu":"` + flavor + `"},"resourceUsage":{"nvidia.com/gpu":"2"}}]},` +
			`"conditions":[{"type":"QuotaReserved","status":"True","reason":"QuotaReserved","message":"Quota reserved in ClusterQueue odd","lastTransitionTime":"` + reservedAt.Format(time.RFC3339) + `"}]}}`
		if out, err := c.Kubectl("patch", "workloads.v1beta2.kueue.x-k8s.io", name, "-n", "ml", "--subresource=status", "--type=merge", "-p", admitted); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	}

	b := readBook(t, c, "kueue.x-k8s.io/v1beta2")
	start, end := created.Add(-10*time.Minute), created.Add(50*time.Minute)
	qs := map[string]profile.Queue{}
	for _, q := range b.Queues(start, end) {
		qs[q.Name] = q
	}
	r := qs["research"]
	if r.Cohort != "ml" || r.NominalGPUs == nil || *r.NominalGPUs != 6 || r.BorrowingLimitGPUs == nil || *r.BorrowingLimitGPUs != 3 ||
		r.LendingLimitGPUs != nil || strings.Join(r.Flavors, ",") != "h100,a100" {
		t.Errorf("research: %+v", r)
	}
	at := func(ts time.Time) float64 { return ts.Sub(start).Seconds() }
	if len(r.Admitted) != 1 || r.Admitted[0] != (profile.QueueSpan{Workload: "ml/job-train", GPUs: 4, StartS: at(reservedAt), EndS: at(end)}) ||
		len(r.Pending) != 1 || r.Pending[0] != (profile.QueueSpan{Workload: "ml/job-train", GPUs: 4, StartS: at(created), EndS: at(reservedAt)}) {
		t.Errorf("research's spans: %+v %+v", r.Admitted, r.Pending)
	}
	p := qs["prod"]
	held := map[string]string{}
	for _, s := range p.Pending {
		held[s.Workload] = s.HeldBy
	}
	if p.NominalGPUs == nil || *p.NominalGPUs != 4 || len(p.Admitted) != 0 || len(p.Pending) != 3 ||
		p.Pending[2] != (profile.QueueSpan{Workload: "ml/job-wait", GPUs: 6, StartS: at(waitCreated), EndS: at(end)}) ||
		held["ml/job-gated"] != "Inadmissible" || held["ml/job-off"] != "Deactivated" {
		t.Errorf("prod: %+v", p)
	}
	if o := qs["odd"]; o.NominalGPUs != nil || len(o.Admitted) != 2 || len(b.Warnings) != 3 ||
		!strings.Contains(b.Warnings[0], `ClusterQueue odd flavor h100 nvidia.com/gpu: quantity "1Ki" is not a count of GPUs`) ||
		!slices.Contains(b.Warnings, "Workload ml/job-lost: admitted to ResourceFlavor a100, which no Node has (nodeLabels gpu=a100,zone=b): no GPU of the cluster can show its use") ||
		!slices.Contains(b.Warnings, "Workload ml/job-ghost: admitted to flavor ghost, which is no ResourceFlavor: no GPU of the cluster can show its use") {
		t.Errorf("odd: %+v, warnings %q", o, b.Warnings)
	}
	nodes := []profile.Node{{Name: "n", Workloads: []profile.Workload{
		{ID: "ml/train-abc", Kind: profile.KindPod, Labels: map[string]string{profile.ControllerLabel: "Job/train"}},
		{ID: "ml/wait-xyz", Kind: profile.KindPod, Labels: map[string]string{profile.ControllerLabel: "Job/wait"}},
	}}}
	b.Apply(nodes)
	if nodes[0].Workloads[0].Queue != "research" || nodes[0].Workloads[1].Queue != "" {
		t.Errorf("pods' queues: %+v", nodes[0].Workloads)
	}
}

// localQueues are a LocalQueue NAME-lq in namespace ml for each
// ClusterQueue NAME.
func localQueues(cqs ...string) string {
	var b strings.Builder
	for _, cq := range cqs {
		b.WriteString("---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: " + cq + "-lq, namespace: ml}\nspec: {clusterQueue: " + cq + "}\n")
	}
	return b.String()
}

// readBook reads the cluster's queues, which must be of the versions
// (comma-separated).
func readBook(t *testing.T, c *k8stest.Cluster, versions string) *Book {
	t.Helper()
	kc, err := kubeapi.Load(c.Kubeconfig(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Read(context.Background(), kc)
	if err != nil || b == nil || strings.Join(b.Versions, ",") != versions {
		t.Fatalf("read: %+v %v", b, err)
	}
	return b
}
