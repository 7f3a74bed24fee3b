package queues

import (
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/testkit/k8stest"
	"github.com/seedance/seedance/profile"
)

// TestVolcanoFromTheAPIServer (#58): a real API server with Volcano
// v1.15.1's own Queue and PodGroup CRDs (Volcano's scheduler does not run:
// the PodGroups' status is written as it would write it). A Queue's quota
// is what it deserves, its borrowing limit its capability above that, its
// lending limit what it deserves above its guarantee, its cohort its
// parent; a running PodGroup reserves its minimum GPUs from when it was
// scheduled, a pending one waits since its creation, a completed one is
// left out; a quantity that is not a count of GPUs is a warning. With
// Kueue served too, Volcano's queues are named volcano/NAME.
func TestVolcanoFromTheAPIServer(t *testing.T) {
	c := k8stest.Start(t)
	c.InstallVolcano("../..")
	scheduled := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	c.Apply(`apiVersion: v1
kind: Namespace
metadata: {name: ml}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: research}
spec: {parent: root, weight: 1, deserved: {nvidia.com/gpu: "4", cpu: "64"}, capability: {nvidia.com/gpu: "6"}, guarantee: {resource: {nvidia.com/gpu: "1"}}}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: odd}
spec: {weight: 1, deserved: {nvidia.com/gpu: "2Ki"}}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: stray}
spec: {weight: 1, parent: groot}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: train, namespace: ml, ownerReferences: [{apiVersion: batch.volcano.sh/v1alpha1, kind: Job, name: train, uid: 00000000-0000-0000-0000-000000000001}]}
spec: {queue: research, minMember: 2, minResources: {nvidia.com/gpu: "4"}}
status: {phase: Running, conditions: [{type: Scheduled, status: "True", lastTransitionTime: "` + scheduled.Format(time.RFC3339) + `"}]}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: wait, namespace: ml}
spec: {queue: research, minMember: 1, minResources: {nvidia.com/gpu: "2"}}
status: {phase: Pending}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: done, namespace: ml}
spec: {queue: research, minMember: 1, minResources: {nvidia.com/gpu: "8"}}
status: {phase: Completed}
`)
	created := c.Created("podgroups.scheduling.volcano.sh", "ml", "train")
	waitFrom := c.Created("podgroups.scheduling.volcano.sh", "ml", "wait")
	b := readBook(t, c, "scheduling.volcano.sh/v1beta1")
	start, end := scheduled.Add(-10*time.Minute), created.Add(time.Hour)
	at := func(ts time.Time) float64 { return ts.Sub(start).Seconds() }
	qs := map[string]profile.Queue{}
	for _, q := range b.Queues(start, end) {
		qs[q.Name] = q
	}
	r := qs["research"]
	if r.Kind != QueueVolcano || r.Cohort != "root" || r.NominalGPUs == nil || *r.NominalGPUs != 4 || *r.BorrowingLimitGPUs != 2 || *r.LendingLimitGPUs != 3 {
		t.Errorf("research: %+v", r)
	}
	if len(r.Admitted) != 1 || r.Admitted[0] != (profile.QueueSpan{Workload: "ml/train", GPUs: 4, StartS: at(scheduled), EndS: at(end)}) ||
		len(r.Pending) != 1 || r.Pending[0] != (profile.QueueSpan{Workload: "ml/wait", GPUs: 2, StartS: at(waitFrom), EndS: at(end)}) {
		t.Errorf("research's spans: %+v %+v", r.Admitted, r.Pending)
	}
	if o := qs["odd"]; o.NominalGPUs != nil || len(b.Warnings) != 2 || !strings.Contains(b.Warnings[0], `Volcano Queue odd: nvidia.com/gpu: quantity "2Ki" is not a count of GPUs`) {
		t.Errorf("odd: %+v, warnings %q", o, b.Warnings)
	}
	// A parent that only ends in root is not root.
	if s := qs["stray"]; s.Cohort != "" || len(b.Warnings) != 2 || b.Warnings[1] != "volcano queue stray names parent groot, which is not a queue: its cohort unknown" {
		t.Errorf("stray: %+v, warnings %q", s, b.Warnings)
	}
	nodes := []profile.Node{{Name: "n", Workloads: []profile.Workload{{ID: "ml/train-worker-0", Kind: profile.KindPod, Labels: map[string]string{profile.ControllerLabel: "Job/train"}}}}}
	b.Apply(nodes)
	if nodes[0].Workloads[0].Queue != "research" {
		t.Errorf("the pod's queue: %q", nodes[0].Workloads[0].Queue)
	}
	// With Kueue served as well.
	c.InstallKueue("../..")
	if b := readBook(t, c, "kueue.x-k8s.io/v1beta2,scheduling.volcano.sh/v1beta1"); b.queues["volcano/research"] == nil || b.queues["volcano/research"].q.Cohort != "volcano/root" {
		t.Errorf("with Kueue: %v", b.Versions)
	}
}

// TestKAIFromTheAPIServer (#58): a real API server with KAI Scheduler
// v0.20.1's own Queue and PodGroup CRDs (KAI's scheduler does not run: the
// PodGroups' status is written through its subresource as it would). A
// Queue's quota is resources.gpu.quota, its borrowing limit its limit
// above that (−1: none); a PodGroup reserves the GPUs allocated to it from
// its creation, and waits for what it asked beyond them; a queue whose
// parent is not a queue is a note.
func TestKAIFromTheAPIServer(t *testing.T) {
	c := k8stest.Start(t)
	c.InstallKAI("../..")
	c.Apply(`apiVersion: v1
kind: Namespace
metadata: {name: ml}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: research}
spec: {parentQueue: org, resources: {gpu: {quota: 4, limit: 6, overQuotaWeight: 1}, cpu: {quota: -1, limit: -1, overQuotaWeight: 1}, memory: {quota: -1, limit: -1, overQuotaWeight: 1}}}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: org}
spec: {resources: {gpu: {quota: 8, limit: -1, overQuotaWeight: 1}, cpu: {quota: -1, limit: -1, overQuotaWeight: 1}, memory: {quota: -1, limit: -1, overQuotaWeight: 1}}}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: lost}
spec: {parentQueue: nowhere, resources: {gpu: {quota: 1, limit: -1, overQuotaWeight: 1}, cpu: {quota: -1, limit: -1, overQuotaWeight: 1}, memory: {quota: -1, limit: -1, overQuotaWeight: 1}}}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: open}
spec: {resources: {gpu: {quota: -1, limit: -1, overQuotaWeight: 1}, cpu: {quota: -1, limit: -1, overQuotaWeight: 1}, memory: {quota: -1, limit: -1, overQuotaWeight: 1}}}
---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: train, namespace: ml, ownerReferences: [{apiVersion: batch/v1, kind: Job, name: train, uid: 00000000-0000-0000-0000-000000000001}]}
spec: {queue: research, minMember: 1}
`)
	status := `{"status":{"resourcesStatus":{"allocated":{"nvidia.com/gpu":"3"},"requested":{"nvidia.com/gpu":"5"}}}}`
	if out, err := c.Kubectl("patch", "podgroups.v2alpha2.scheduling.run.ai", "train", "-n", "ml", "--subresource=status", "--type=merge", "-p", status); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	created := c.Created("podgroups.v2alpha2.scheduling.run.ai", "ml", "train")
	b := readBook(t, c, "scheduling.run.ai/v2")
	start, end := created.Add(-time.Minute), created.Add(time.Hour)
	qs := map[string]profile.Queue{}
	for _, q := range b.Queues(start, end) {
		qs[q.Name] = q
	}
	r := qs["research"]
	if r.Kind != QueueKAI || r.Cohort != "org" || r.NominalGPUs == nil || *r.NominalGPUs != 4 || r.BorrowingLimitGPUs == nil || *r.BorrowingLimitGPUs != 2 ||
		len(r.Admitted) != 1 || r.Admitted[0] != (profile.QueueSpan{Workload: "ml/train", GPUs: 3, StartS: 60, EndS: 3660}) ||
		len(r.Pending) != 1 || r.Pending[0] != (profile.QueueSpan{Workload: "ml/train", GPUs: 2, StartS: 60, EndS: 3660}) {
		t.Errorf("research: %+v", r)
	}
	if o := qs["open"]; o.NominalGPUs != nil || o.BorrowingLimitGPUs != nil {
		t.Errorf("an unlimited queue: %+v", o)
	}
	// A parent that is not a queue: a note, and no cohort.
	if l := qs["lost"]; l.Cohort != "" || len(b.Warnings) != 1 || b.Warnings[0] != "kai queue lost names parent nowhere, which is not a queue: its cohort unknown" {
		t.Errorf("an orphan: %+v, warnings %q", l, b.Warnings)
	}
	nodes := []profile.Node{{Name: "n", Workloads: []profile.Workload{{ID: "ml/train-0", Kind: profile.KindPod, Labels: map[string]string{profile.ControllerLabel: "Job/train"}}}}}
	if b.Apply(nodes); nodes[0].Workloads[0].Queue != "research" {
		t.Errorf("the pod's queue: %q", nodes[0].Workloads[0].Queue)
	}
}
