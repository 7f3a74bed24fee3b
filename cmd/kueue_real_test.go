package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/internal/testkit/k8stest"
	"github.com/seedance/seedance/internal/testkit/promtest"
)

// kueueObjects are two ClusterQueues of one cohort, each with 2 GPUs of
// quota, their LocalQueues, and three Workloads: ml/train-0's (2 GPUs, a
// pod of Kueue's pod integration) and ml/serve-0's (1 GPU) admitted, and
// one that waits for 4 GPUs in prod.
const kueueObjects = `apiVersion: v1
kind: Namespace
metadata: {name: ml}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: research}
spec:
  cohortName: ml
  resourceGroups: [{coveredResources: [nvidia.com/gpu], flavors: [{name: h100, resources: [{name: nvidia.com/gpu, nominalQuota: "2"}]}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: prod}
spec:
  cohortName: ml
  resourceGroups: [{coveredResources: [nvidia.com/gpu], flavors: [{name: h100, resources: [{name: nvidia.com/gpu, nominalQuota: "2"}]}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: research, namespace: ml}
spec: {clusterQueue: research}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: prod, namespace: ml}
spec: {clusterQueue: prod}
`

// kueueWorkload is a Workload of one pod of gpus GPUs owned by the pod.
func kueueWorkload(name, queue, pod string, gpus int) string {
	return fmt.Sprintf(`apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata:
  name: %s
  namespace: ml
  ownerReferences: [{apiVersion: v1, kind: Pod, name: %s, uid: 00000000-0000-0000-0000-0000000000%02d}]
spec:
  queueName: %s
  podSets: [{name: main, count: 1, template: {spec: {containers: [{name: c, image: fake, resources: {limits: {nvidia.com/gpu: "%d"}}}]}}}]
---
`, name, pod, gpus, queue, gpus)
}

// TestQueuesFromKueueAndPrometheus (#58): a real API server with Kueue's
// own CRDs and a real Prometheus with dcgm-exporter's series of the
// pods. With --kubeconfig, analyze --report queues gives each queue's
// quota, what its pods held and used (measured), the waiting Workload's
// GPU-hours, and names research as hoarding while prod waited. The
// Workloads' status is written as Kueue's controller would (it does not
// run here).
func TestQueuesFromKueueAndPrometheus(t *testing.T) {
	t.Parallel() // its settings are its own (testFactory)
	c := k8stest.Start(t)
	c.InstallKueue("..")
	c.Apply(kueueObjects)
	c.Apply(kueueWorkload("train", "research", "train-0", 2) + kueueWorkload("serve", "prod", "serve-0", 1) + kueueWorkload("wait", "prod", "wait-0", 4))
	t0 := time.Now().UTC().Truncate(time.Second)
	admit := func(name, cq string, gpus int) {
		status := fmt.Sprintf(`{"status":{"admission":{"clusterQueue":%q,"podSetAssignments":[{"name":"main","count":1,"flavors":{"nvidia.com/gpu":"h100"},"resourceUsage":{"nvidia.com/gpu":"%d"}}]},`+
			`"conditions":[{"type":"QuotaReserved","status":"True","reason":"QuotaReserved","message":"reserved","lastTransitionTime":%q}]}}`, cq, gpus, t0.Add(-time.Hour).Format(time.RFC3339))
		if out, err := c.Kubectl("patch", "workloads.v1beta2.kueue.x-k8s.io", name, "-n", "ml", "--subresource=status", "--type=merge", "-p", status); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	}
	admit("train", "research", 2)
	admit("serve", "prod", 1)
	waitFrom := c.Created("workloads.v1beta2.kueue.x-k8s.io", "ml", "wait")

	// Ten minutes of samples a minute apart, ending one minute after now:
	// GPUs 0–1 (train-0) at 10 %, GPU 2 (serve-0) at 90 %.
	start := t0.Add(-9 * time.Minute)
	end := start.Add(10 * time.Minute)
	var om bytes.Buffer
	fmt.Fprintf(&om, "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n")
	for i := 0; i < 10; i++ {
		for g, pod := range []string{"train-0", "train-0", "serve-0"} {
			u := 10
			if pod == "serve-0" {
				u = 90
			}
			fmt.Fprintf(&om, "DCGM_FI_DEV_GPU_UTIL{gpu=\"%d\",UUID=\"GPU-k%d\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"gpu-0\",namespace=\"ml\",pod=%q} %d %d\n", g, g, pod, u, start.Unix()+60*int64(i))
		}
	}
	om.WriteString("# EOF\n")
	srv := promtest.Start(t, om.Bytes())
	r := run(t, nil, "analyze", "--source", "prometheus", "--prometheus-url", srv.URL, "--step", "60s", "--start", start.Format(time.RFC3339), "--end", end.Format(time.RFC3339),
		"--kubeconfig", c.Kubeconfig(), "--gpu-price", "H100=3.6", "--report", "queues", "-f", "json")
	if r.code != 0 {
		t.Fatalf("analyze: exit %d %s", r.code, r.errOut)
	}
	var rep struct {
		Queues   map[string]analyze.QueueFigures `json:"queues"`
		Hoarding []analyze.Hoarding              `json:"hoarding"`
	}
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil {
		t.Fatal(err)
	}
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-6 }
	h := 600.0 / 3600
	res, prod := rep.Queues["research"], rep.Queues["prod"]
	if res.Cohort != "ml" || res.NominalGPUs == nil || *res.NominalGPUs != 2 || !near(res.AllocatedGPUHours, 2*h) || !near(res.UsedGPUHours, 0.2*h) ||
		res.ReservedGPUHours == nil || !near(*res.ReservedGPUHours, 2*h) || !near(res.AllocatedUSD, 2*h*3.6) {
		t.Errorf("research: %+v", res)
	}
	waited := end.Sub(waitFrom).Seconds() / 3600 * 4
	if !near(prod.AllocatedGPUHours, h) || !near(prod.UsedGPUHours, 0.9*h) || !near(prod.PendingGPUHours, waited) || prod.PendingWorkloads != 1 {
		t.Errorf("prod: %+v, want %v pending GPU-hours", prod, waited)
	}
	if len(rep.Hoarding) != 1 || rep.Hoarding[0].Queue != "research" || rep.Hoarding[0].Waiting[0] != "prod" || rep.Hoarding[0].ContestedGPUHours == nil ||
		!near(*rep.Hoarding[0].ContestedGPUHours, min(2*0.9, 4)*end.Sub(waitFrom).Seconds()/3600) {
		t.Errorf("hoarding: %+v", rep.Hoarding)
	}
}
