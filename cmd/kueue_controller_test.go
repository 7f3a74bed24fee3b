package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/testkit/k8stest"
	"github.com/seedance/seedance/internal/testkit/promtest"
)

// kueueJob is a suspended Job of one pod of gpus GPUs in LocalQueue
// queue, its pod kept Running (kwok, k8stest.Options.JobPodsRun).
func kueueJob(name, queue string, gpus int) string {
	return fmt.Sprintf(`apiVersion: batch/v1
kind: Job
metadata: {name: %s, namespace: ml, labels: {kueue.x-k8s.io/queue-name: %s}}
spec:
  suspend: true
  parallelism: 1
  completions: 1
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: fake, resources: {limits: {nvidia.com/gpu: "%d"}}}]
---
`, name, queue, gpus)
}

// kueueRun is what the test reads back from the API server: each Job's
// Workload (its ClusterQueue, when it was created and when Kueue reserved
// its quota) and its pod (name, node, start).
type kueueRun struct {
	queue, reason     string
	created, reserved time.Time
	pod, node         string
	started           time.Time
}

// TestQueuesUnderKueuesController (#58): Kueue's real controller (v0.19.2,
// built by .ci/kueue-build.sh) on the real control plane with two kwok
// nodes of 4 GPUs. research (4 GPUs of quota) and prod (2) are in
// cohorts team-r and team-p, children of ml (Cohort objects: Kueue lends
// across the tree); Jobs train (4 GPUs, research) and serve (1, prod) are admitted by
// Kueue and their pods run, then wait (4, prod) finds no quota and stays
// pending. A real Prometheus has the pods' dcgm-exporter series from
// their start, every 15 s: train's GPUs at 10 %, serve's at 90 %.
// seedance's reserved GPU-hours equal what Kueue admitted, from the
// QuotaReserved times Kueue wrote; its allocated ones what the nodes
// held; the pending ones the waiting Workload's; and research is named
// hoarding while prod waited.
func TestQueuesUnderKueuesController(t *testing.T) {
	t.Parallel()
	c := k8stest.StartWith(t, k8stest.Options{JobPodsRun: true})
	c.StartKueue()
	c.AddGPUNodes(4, "gpu-a", "gpu-b")
	c.Apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: ml}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: h100}\n---\n" +
		"apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: team-r}\nspec: {parentName: ml}\n---\n" +
		"apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: team-p}\nspec: {parentName: ml}\n---\n" +
		kueueQueueIn("research", "team-r", `[{name: nvidia.com/gpu, nominalQuota: "4"}]`) + kueueQueueIn("prod", "team-p", `[{name: nvidia.com/gpu, nominalQuota: "2"}]`) +
		strings.Replace(kueueQueueIn("frozen", "team-p", `[{name: nvidia.com/gpu, nominalQuota: "1"}]`), "  namespaceSelector: {}", "  namespaceSelector: {}\n  stopPolicy: Hold", 1))
	vm := scrapeKueue(t, c)
	c.Apply(kueueJob("train", "research", 4) + kueueJob("serve", "prod", 1))
	var runs map[string]kueueRun
	c.WaitFor("train's and serve's pods Running", 120*time.Second, func() bool {
		runs = readKueueRuns(t, c)
		return !runs["train"].started.IsZero() && !runs["serve"].started.IsZero()
	})
	c.Apply(kueueJob("wait", "prod", 4) + kueueJob("iced", "frozen", 1))
	c.WaitFor("wait's Workload pending, iced's inadmissible", 60*time.Second, func() bool {
		runs = readKueueRuns(t, c)
		w, ok := runs["wait"]
		return ok && w.queue == "" && !w.created.IsZero() && runs["iced"].reason == "Inadmissible"
	})
	if runs["train"].queue != "research" || runs["serve"].queue != "prod" {
		t.Fatalf("Kueue admitted %+v", runs)
	}

	// The window: from the second the first Workload was created until a
	// minute from now, a sample every 15 s; a pod's GPUs have samples from
	// the first at or after its start, each counting 15 s or to the end.
	end := time.Now().UTC().Truncate(time.Second).Add(time.Minute)
	start := end
	for _, r := range runs {
		start = minTime(start, r.created)
	}
	jobs := []struct {
		name, queue string
		gpus, util  int
	}{{"train", "research", 4, 10}, {"serve", "prod", 1, 90}, {"wait", "prod", 4, 0}}
	var om bytes.Buffer
	om.WriteString("# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n")
	// want: each queue's reserved, allocated and pending GPU-hours and its
	// waiting Workloads, as Kueue admitted them and the nodes held them.
	want := map[string]*struct{ reserved, allocated, used, pending, waited float64 }{"research": {}, "prod": {}}
	for _, job := range jobs {
		r, q := runs[job.name], want[job.queue]
		waitEnd := end
		if !r.reserved.IsZero() {
			waitEnd = r.reserved
			q.reserved += float64(job.gpus) * end.Sub(r.reserved).Hours()
		}
		if d := waitEnd.Sub(r.created).Hours(); d > 0 {
			q.pending += float64(job.gpus) * d
			q.waited++
		}
		for at := start; r.pod != "" && at.Before(end); at = at.Add(15 * time.Second) {
			if at.Before(r.started) {
				continue
			}
			held := float64(job.gpus) * min(15*time.Second, end.Sub(at)).Hours() // a sample counts until the next, within the window
			q.allocated += held
			q.used += held * float64(job.util) / 100
			for g := range job.gpus {
				fmt.Fprintf(&om, "DCGM_FI_DEV_GPU_UTIL{gpu=\"%d\",UUID=\"GPU-%s-%d\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=%q,namespace=\"ml\",pod=%q} %d %d\n",
					g, r.node, g, r.node, r.pod, job.util, at.Unix())
			}
		}
	}
	om.WriteString("# EOF\n")
	srv := promtest.Start(t, om.Bytes())
	rep := analyzeQueues(t, []string{"--source", "prometheus", "--prometheus-url", srv.URL,
		"--step", "15s", "--start", start.Format(time.RFC3339), "--end", end.Format(time.RFC3339), "--kubeconfig", c.Kubeconfig()})
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-6 }
	for name, w := range want {
		got := rep.Queues[name]
		if got.ReservedGPUHours == nil || !near(*got.ReservedGPUHours, w.reserved) || !near(deref(got.AllocatedGPUHours), w.allocated) || !near(deref(got.UsedGPUHours), w.used) ||
			!near(got.PendingGPUHours, w.pending) || got.PendingWorkloads == nil || float64(*got.PendingWorkloads) != w.waited {
			t.Errorf("%s: reserved %v, allocated %v, used %v, pending %v in %v Workloads; want %+v", name, deref(got.ReservedGPUHours), show(got.AllocatedGPUHours),
				show(got.UsedGPUHours), got.PendingGPUHours, deref(got.PendingWorkloads), *w)
		}
	}
	if q := rep.Queues["research"]; q.NominalGPUs == nil || *q.NominalGPUs != 4 || q.Cohort != "ml" {
		t.Errorf("research's quota: %+v", q)
	}
	if len(rep.Hoarding) != 1 || rep.Hoarding[0].Queue != "research" || len(rep.Hoarding[0].Waiting) != 1 || rep.Hoarding[0].Waiting[0] != "prod" {
		t.Errorf("hoarding: %+v", rep.Hoarding)
	}
	// iced waits in a stopped ClusterQueue: Kueue calls it Inadmissible,
	// a wait held by its own queue, which research's idle quota could not
	// have ended (so research's verdict names prod alone, above).
	if f := rep.Queues["frozen"]; f.PendingGPUHours <= 0 || f.HeldPendingGPUHours != f.PendingGPUHours {
		t.Errorf("frozen: pending %v GPU-h, %v of them held", f.PendingGPUHours, f.HeldPendingGPUHours)
	}
	vm.Import(t, om.Bytes())
	fromKueuesMetrics(t, c, vm, start, runs)
}

// scrapeKueue starts a VictoriaMetrics that scrapes Kueue's metrics
// endpoint every 5 s, as a Prometheus would (HTTPS, a bearer token the
// API server reviews), and waits until it has the ClusterQueues' quota.
func scrapeKueue(t *testing.T, c *k8stest.Cluster) *promtest.Server {
	t.Helper()
	vm := promtest.StartVictoriaMetricsScraping(t, fmt.Sprintf(`- job_name: kueue
  scrape_interval: 5s
  scheme: https
  tls_config: {insecure_skip_verify: true}
  authorization: {credentials: %q}
  static_configs: [{targets: [%q]}]
`, c.Token(), c.KueueMetrics()))
	c.WaitFor("Kueue's quota scraped", 90*time.Second, func() bool {
		resp, err := http.Get(vm.URL + "/api/v1/series?match[]=kueue_cluster_queue_nominal_quota")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var ans struct{ Data []map[string]string }
		return json.NewDecoder(resp.Body).Decode(&ans) == nil && len(ans.Data) >= 2
	})
	return vm
}

// fromKueuesMetrics reads the window from start until Kueue's metrics
// had been scraped for 30 s past the last reservation, without the API
// server: the queues come from Kueue's own metrics as scraped. Their
// quota and root cohort are Kueue's; their reserved and pending GPU-hours
// are what Kueue admitted and kept waiting (its QuotaReserved times), give
// or take the time from a change to the next scrape (5 s; 20 s allowed on
// a loaded machine) for each GPU; what their workloads held and used is
// unknown (null), so no queue is named hoarding.
func fromKueuesMetrics(t *testing.T, c *k8stest.Cluster, vm *promtest.Server, start time.Time, runs map[string]kueueRun) {
	t.Helper()
	var last time.Time
	for _, r := range runs {
		if r.reserved.After(last) {
			last = r.reserved
		}
	}
	var end time.Time
	c.WaitFor("Kueue scraped 30 s past the last reservation", 90*time.Second, func() bool {
		end = lastScrape(vm)
		return end.Sub(last) >= 30*time.Second
	})
	want := map[string]*struct{ reserved, pending, gpus float64 }{"research": {}, "prod": {}}
	for _, job := range []struct {
		name, queue string
		gpus        float64
	}{{"train", "research", 4}, {"serve", "prod", 1}, {"wait", "prod", 4}} {
		r, w := runs[job.name], want[job.queue]
		waitEnd := end
		if !r.reserved.IsZero() {
			waitEnd = r.reserved
			w.reserved += job.gpus * end.Sub(r.reserved).Hours()
		}
		w.pending += job.gpus * max(0, waitEnd.Sub(r.created).Hours())
		w.gpus += job.gpus
	}
	rep := analyzeQueues(t, []string{"--source", "prometheus", "--prometheus-url", vm.URL,
		"--step", "15s", "--start", start.Format(time.RFC3339), "--end", end.Format(time.RFC3339)})
	for name, w := range want {
		got, slack := rep.Queues[name], w.gpus*(20*time.Second).Hours()
		within := func(p *float64, v float64) bool { return p != nil && math.Abs(*p-v) <= slack }
		if !within(got.ReservedGPUHours, w.reserved) || !within(&got.PendingGPUHours, w.pending) || w.reserved == 0 ||
			got.AllocatedGPUHours != nil || got.UsedGPUHours != nil || got.PendingWorkloads != nil || got.Cohort != "ml" {
			t.Errorf("%s from Kueue's metrics: reserved %v, pending %v, allocated %v, cohort %q; want reserved %v, pending %v (± %v), allocated null",
				name, show(got.ReservedGPUHours), got.PendingGPUHours, show(got.AllocatedGPUHours), got.Cohort, w.reserved, w.pending, slack)
		}
	}
	if r, p := rep.Queues["research"], rep.Queues["prod"]; r.NominalGPUs == nil || *r.NominalGPUs != 4 || p.NominalGPUs == nil || *p.NominalGPUs != 2 || len(rep.Hoarding) != 0 {
		t.Errorf("quota from Kueue's metrics: research %v, prod %v; hoarding %+v", show(r.NominalGPUs), show(p.NominalGPUs), rep.Hoarding)
	}
}

// lastScrape is the time of the latest scrape of Kueue's metrics the
// VictoriaMetrics holds, to the second below (zero when none).
func lastScrape(vm *promtest.Server) time.Time {
	resp, err := http.Get(vm.URL + `/api/v1/query?query=timestamp(up{job="kueue"})`)
	if err != nil {
		return time.Time{}
	}
	defer resp.Body.Close()
	var ans struct {
		Data struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if json.NewDecoder(resp.Body).Decode(&ans) != nil || len(ans.Data.Result) != 1 {
		return time.Time{}
	}
	v, _ := ans.Data.Result[0].Value[1].(string)
	sec, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return time.Time{}
	}
	return time.Unix(int64(sec), 0).UTC()
}

// deref is *p, or the zero value for nil.
func deref[T any](p *T) T {
	var v T
	if p != nil {
		v = *p
	}
	return v
}

// minTime is the earlier of a and b.
func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// readKueueRuns reads each Job's Workload and pod in namespace ml.
func readKueueRuns(t *testing.T, c *k8stest.Cluster) map[string]kueueRun {
	t.Helper()
	var wls, pods struct {
		Items []struct {
			Metadata struct {
				Name              string            `json:"name"`
				CreationTimestamp time.Time         `json:"creationTimestamp"`
				Labels            map[string]string `json:"labels"`
				OwnerReferences   []struct {
					Kind string `json:"kind"`
					Name string `json:"name"`
				} `json:"ownerReferences"`
			} `json:"metadata"`
			Spec struct {
				NodeName string `json:"nodeName"`
			} `json:"spec"`
			Status struct {
				Phase     string     `json:"phase"`
				StartTime *time.Time `json:"startTime"`
				Admission *struct {
					ClusterQueue string `json:"clusterQueue"`
				} `json:"admission"`
				Conditions []struct {
					Type, Status, Reason string
					LastTransitionTime   time.Time `json:"lastTransitionTime"`
				} `json:"conditions"`
			} `json:"status"`
		} `json:"items"`
	}
	for kind, into := range map[string]any{"workloads.v1beta2.kueue.x-k8s.io": &wls, "pods": &pods} {
		out, err := c.Kubectl("get", kind, "-n", "ml", "-o", "json")
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if err := json.Unmarshal([]byte(out), into); err != nil {
			t.Fatal(err)
		}
	}
	runs := map[string]kueueRun{}
	for _, w := range wls.Items {
		for _, o := range w.Metadata.OwnerReferences {
			r := kueueRun{created: w.Metadata.CreationTimestamp}
			if w.Status.Admission != nil {
				r.queue = w.Status.Admission.ClusterQueue
			}
			for _, cd := range w.Status.Conditions {
				if cd.Type == "QuotaReserved" && cd.Status == "True" {
					r.reserved = cd.LastTransitionTime
				}
				if cd.Type == "QuotaReserved" && cd.Status == "False" {
					r.reason = cd.Reason
				}
			}
			runs[o.Name] = r
		}
	}
	for _, p := range pods.Items {
		job := p.Metadata.Labels["job-name"]
		if r, ok := runs[job]; ok && p.Status.Phase == "Running" && p.Status.StartTime != nil && p.Spec.NodeName != "" {
			r.pod, r.node, r.started = p.Metadata.Name, p.Spec.NodeName, *p.Status.StartTime
			runs[job] = r
		}
	}
	return runs
}
