package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/internal/testkit/k8stest"
	"github.com/seedance/seedance/internal/testkit/promtest"
)

// kueueObjects are three ClusterQueues of one cohort, research and prod
// with 2 GPUs of quota each and spare with 8 (and CPUs), and their
// LocalQueues; kueueWorkload makes the Workloads: ml/train-0's (2 GPUs,
// a pod of Kueue's pod integration), ml/serve-0's (1 GPU) and
// ml/spare-0's (1 GPU) admitted, and one that waits for 4 GPUs in prod.
var kueueObjects = "apiVersion: v1\nkind: Namespace\nmetadata: {name: ml}\n---\n" +
	kueueQueue("research", `[{name: nvidia.com/gpu, nominalQuota: "2"}]`) + kueueQueue("prod", `[{name: nvidia.com/gpu, nominalQuota: "2"}]`) +
	kueueQueue("spare", `[{name: cpu, nominalQuota: 64}, {name: nvidia.com/gpu, nominalQuota: 8}]`)

// kueueQueue is a ClusterQueue of cohort ml with one flavor of the
// resources (kueueQueueIn).
func kueueQueue(name, resources string) string { return kueueQueueIn(name, "ml", resources) }

// kueueQueueIn is a ClusterQueue of the cohort with one flavor of the
// resources, open to every namespace (Kueue admits nothing from a
// namespace its namespaceSelector does not match, and none when it has
// none), and its LocalQueue of the same name in namespace ml.
func kueueQueueIn(name, cohort, resources string) string {
	covered := "[nvidia.com/gpu]"
	if strings.Contains(resources, "cpu") {
		covered = "[cpu, nvidia.com/gpu]"
	}
	return fmt.Sprintf(`apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: %[1]s}
spec:
  cohortName: %[4]s
  namespaceSelector: {}
  resourceGroups: [{coveredResources: %[2]s, flavors: [{name: h100, resources: %[3]s}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: %[1]s, namespace: ml}
spec: {clusterQueue: %[1]s}
---
`, name, covered, resources, cohort)
}

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
	c, src := kueueScenario(t)
	end, _ := time.Parse(time.RFC3339, src[9]) // --end
	waitFrom := c.Created("workloads.v1beta2.kueue.x-k8s.io", "ml", "wait")
	rep := analyzeQueues(t, src)
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-6 }
	h := 600.0 / 3600
	res, prod := rep.Queues["research"], rep.Queues["prod"]
	if res.Cohort != "ml" || res.NominalGPUs == nil || *res.NominalGPUs != 2 || !near(deref(res.AllocatedGPUHours), 2*h) || !near(deref(res.UsedGPUHours), 0.2*h) ||
		res.ReservedGPUHours == nil || !near(*res.ReservedGPUHours, 2*h) || !near(deref(res.AllocatedUSD), 2*h*3.6) {
		t.Errorf("research: %+v", res)
	}
	waited := end.Sub(waitFrom).Seconds() / 3600 * 4
	if !near(deref(prod.AllocatedGPUHours), h) || !near(deref(prod.UsedGPUHours), 0.9*h) || !near(prod.PendingGPUHours, waited) || prod.PendingWorkloads == nil || *prod.PendingWorkloads != 1 {
		t.Errorf("prod: %+v, want %v pending GPU-hours", prod, waited)
	}
	if len(rep.Hoarding) != 1 || rep.Hoarding[0].Queue != "research" || rep.Hoarding[0].Waiting[0] != "prod" || rep.Hoarding[0].ContestedGPUHours == nil ||
		!near(*rep.Hoarding[0].ContestedGPUHours, min(2*0.9, 4)*end.Sub(waitFrom).Seconds()/3600) {
		t.Errorf("hoarding: %+v", rep.Hoarding)
	}
}

// queuesReport is the part of analyze's JSON report the queue tests read.
type queuesReport struct {
	Queues   map[string]analyze.QueueFigures `json:"queues"`
	Hoarding []analyze.Hoarding              `json:"hoarding"`
}

// analyzeQueues runs analyze --report queues over the source's arguments
// at $3.6 an H100-hour and decodes its report.
func analyzeQueues(t *testing.T, src []string) queuesReport {
	t.Helper()
	r := run(t, nil, append([]string{"analyze", "--gpu-price", "H100=3.6", "--report", "queues", "-f", "json"}, src...)...)
	if r.code != 0 {
		t.Fatalf("analyze: exit %d %s", r.code, r.errOut)
	}
	var rep queuesReport
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

// kueueScenario is the API server with kueueObjects, the Workloads'
// status, and a Prometheus with ten minutes of the pods' dcgm-exporter
// series a minute apart, ending one minute after now; src are the
// arguments that read them.
func kueueScenario(t *testing.T) (*k8stest.Cluster, []string) {
	c := k8stest.Start(t)
	c.InstallKueue("..")
	c.Apply(kueueObjects)
	c.Apply(kueueWorkload("train", "research", "train-0", 2) + kueueWorkload("serve", "prod", "serve-0", 1) + kueueWorkload("wait", "prod", "wait-0", 4) + kueueWorkload("spare", "spare", "spare-0", 1))
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
	admit("spare", "spare", 1)

	// Ten minutes of samples a minute apart, ending one minute after now:
	// GPUs 0–1 (train-0) and 3 (spare-0) at 10 %, GPU 2 (serve-0) at 90 %.
	start := t0.Add(-9 * time.Minute)
	end := start.Add(10 * time.Minute)
	var om bytes.Buffer
	fmt.Fprintf(&om, "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n")
	for i := 0; i < 10; i++ {
		for g, pod := range []string{"train-0", "train-0", "serve-0", "spare-0"} {
			u := 10
			if pod == "serve-0" {
				u = 90
			}
			fmt.Fprintf(&om, "DCGM_FI_DEV_GPU_UTIL{gpu=\"%d\",UUID=\"GPU-k%d\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"gpu-0\",namespace=\"ml\",pod=%q} %d %d\n", g, g, pod, u, start.Unix()+60*int64(i))
		}
	}
	om.WriteString("# EOF\n")
	srv := promtest.Start(t, om.Bytes())
	src := []string{"--source", "prometheus", "--prometheus-url", srv.URL, "--step", "60s", "--start", start.Format(time.RFC3339), "--end", end.Format(time.RFC3339),
		"--kubeconfig", c.Kubeconfig()}
	return c, src
}

// TestQuotaPatchOnKueue (#58): the quota what-if written by recommend
// --quotas, run against the real API server with Kueue's CRDs: a dry run
// changes nothing; --execute sets spare's quota 8 → 1 (it used 0.1 GPU of
// its 1) and gives prod, whose 4 waiting GPUs did not fit in its quota,
// 3 of them (2 → 5); run again, it finds the quotas changed since the
// analysis, leaves them alone, and ends non-zero.
func TestQuotaPatchOnKueue(t *testing.T) {
	t.Parallel()
	c, src := kueueScenario(t)
	prof := filepath.Join(t.TempDir(), "p.json")
	if r := run(t, nil, append([]string{"profile", "-o", prof}, src...)...); r.code != 0 {
		t.Fatalf("profile: exit %d %s", r.code, r.errOut)
	}
	script := filepath.Join(t.TempDir(), "quotas.sh")
	if r := run(t, nil, "recommend", "-i", prof, "--quotas", "-o", script); r.code != 0 || !strings.Contains(r.errOut, "quotas: 2 change(s)") {
		t.Fatalf("recommend --quotas: exit %d %s", r.code, r.errOut)
	}
	quota := func(cq string) string {
		out, err := c.Kubectl("get", "clusterqueue", cq, "-o", "jsonpath={.spec.resourceGroups[0].flavors[0].resources[*].nominalQuota}")
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	bash := func(args ...string) (string, error) {
		cmd := exec.Command("bash", append([]string{script}, args...)...)
		cmd.Env = c.Env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := bash(); err != nil || !strings.Contains(out, "dry run: clusterqueue spare: GPU quota 8 -> 1") || quota("spare") != "64 8" {
		t.Fatalf("dry run: %v\n%s", err, out)
	}
	if out, err := bash("--execute"); err != nil || quota("spare") != "64 1" || quota("prod") != "5" || quota("research") != "2" {
		t.Fatalf("--execute: %v, spare %q prod %q research %q\n%s", err, quota("spare"), quota("prod"), quota("research"), out)
	}
	if out, err := bash("--execute"); err == nil || !strings.Contains(out, "clusterqueue spare: its GPU quota is now 1, not 8 as analyzed: left alone") || quota("spare") != "64 1" {
		t.Errorf("a second run: %v\n%s", err, out)
	}
}
