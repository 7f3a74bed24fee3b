package queues

import (
	"context"
	"strings"
	"testing"

	"github.com/seedance/seedance/profile"
)

// TestPodsGetTheirJobsQueue: a Workload admitted for Job ml/train gives
// its queue to the Job's pods: to one through kube-state-metrics' owner
// label, to one through the pod's ownerReferences read from the API
// server (no kube-state-metrics), to none else; a JobSet's Workload gives
// its queue to the pod of one of its Jobs, whose kube-state-metrics label
// names the Job (the API server's controllers walked up: pod, Job,
// JobSet); pods the server refuses to list are a warning, and their queue
// then comes from the label only.
func TestPodsGetTheirJobsQueue(t *testing.T) {
	base := "/apis/kueue.x-k8s.io/v1beta2/"
	lists := map[string]string{
		base + "clusterqueues": `{"metadata":{"name":"research"},"spec":{"resourceGroups":[{"flavors":[{"name":"f","resources":[{"name":"nvidia.com/gpu","nominalQuota":"4"}]}]}]}}`,
		base + "localqueues":   `{"metadata":{"name":"research","namespace":"ml"},"spec":{"clusterQueue":"research"}}`,
		base + "workloads": `{"metadata":{"name":"job-train-1","namespace":"ml","creationTimestamp":"2026-01-05T09:00:00Z","ownerReferences":[{"kind":"Job","name":"train"}]},` +
			`"spec":{"queueName":"research","podSets":[{"count":1,"template":{"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":"4"}}}]}}}]},` +
			`"status":{"admission":{"clusterQueue":"research"},"conditions":[{"type":"QuotaReserved","status":"True","lastTransitionTime":"2026-01-05T09:00:01Z"}]}}`,
		"/api/v1/namespaces/ml/pods": `{"metadata":{"name":"train-x","ownerReferences":[{"kind":"Job","name":"train","controller":true}]}},` +
			`{"metadata":{"name":"other","ownerReferences":[{"kind":"Job","name":"other","controller":true}]}},{"metadata":{"name":"bare"}},` +
			`{"metadata":{"name":"js-w-0-x","ownerReferences":[{"kind":"Job","name":"js-w-0","controller":true}]}}`,
		"/apis/batch/v1/namespaces/ml/jobs": `{"metadata":{"name":"js-w-0","ownerReferences":[{"kind":"JobSet","name":"js","controller":true}]}},` +
			`{"metadata":{"name":"train"}}`,
		"/apis/apps/v1/namespaces/ml/replicasets": ``,
	}
	// A JobSet's Workload: its pods are its Jobs'.
	lists[base+"workloads"] += `,{"metadata":{"name":"jobset-js-1","namespace":"ml","creationTimestamp":"2026-01-05T09:00:00Z","ownerReferences":[{"kind":"JobSet","name":"js"}]},` +
		`"spec":{"queueName":"research","podSets":[{"count":1,"template":{"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":"1"}}}]}}}]},` +
		`"status":{"admission":{"clusterQueue":"research"},"conditions":[{"type":"QuotaReserved","status":"True","lastTransitionTime":"2026-01-05T09:00:01Z"}]}}`
	nodes := func() []profile.Node {
		return []profile.Node{{Name: "n", Workloads: []profile.Workload{
			{ID: "ml/train-x", Kind: profile.KindPod},
			{ID: "ml/train-y", Kind: profile.KindPod, Labels: map[string]string{profile.ControllerLabel: "Job/train"}},
			{ID: "ml/other", Kind: profile.KindPod}, {ID: "ml/bare", Kind: profile.KindPod},
			{ID: "ml/js-w-0-x", Kind: profile.KindPod, Labels: map[string]string{profile.ControllerLabel: "Job/js-w-0"}}}}}
	}
	queues := func(ns []profile.Node) string {
		var out []string
		for _, w := range ns[0].Workloads {
			out = append(out, w.ID+"="+w.Queue)
		}
		return strings.Join(out, " ")
	}
	b, err := Read(context.Background(), fakeAPI(t, lists, 0))
	if err != nil {
		t.Fatal(err)
	}
	ns := nodes()
	b.Apply(ns)
	if got := queues(ns); got != "ml/train-x=research ml/train-y=research ml/other= ml/bare= ml/js-w-0-x=research" || len(b.Warnings) != 0 {
		t.Errorf("queues: %s; warnings %q", got, b.Warnings)
	}
	delete(lists, "/api/v1/namespaces/ml/pods")
	if b, err = Read(context.Background(), fakeAPI(t, lists, 0)); err != nil {
		t.Fatal(err)
	}
	ns = nodes()
	b.Apply(ns)
	if got := queues(ns); got != "ml/train-x= ml/train-y=research ml/other= ml/bare= ml/js-w-0-x=" || len(b.Warnings) != 1 || !strings.Contains(b.Warnings[0], "the pods of namespace ml not read") {
		t.Errorf("pods refused: %s; warnings %q", got, b.Warnings)
	}
}
