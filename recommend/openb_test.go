package recommend

import (
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

const openbDir = "../../shared/realdata/openb"

// loadOpenB reads Alibaba's openb trace (ATC'23): its GPU nodes, and its GPU
// pods placed first-fit in trace order, as the running state of a cluster.
// With phases set, only pods in those phases are taken ("Running"); pods
// that fit nowhere first-fit are left out and counted.
func loadOpenB(t testing.TB, phases ...string) (*Cluster, int) {
	t.Helper()
	read := func(name string) [][]string {
		f, err := os.Open(filepath.Join(openbDir, name))
		if err != nil {
			t.Skipf("needs the openb trace of ../shared beside the repository (research-use terms: not copied here): %v", err)
		}
		defer f.Close()
		rows, err := csv.NewReader(f).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		return rows[1:]
	}
	c := &Cluster{}
	for _, r := range read("openb_node_list_gpu_node.csv") {
		gpus, _ := strconv.Atoi(r[3])
		if gpus == 0 {
			continue
		}
		n := &Node{Name: r[0], Model: r[4], PricePerHour: float64(gpus)}
		n.GPUs = make([]GPU, gpus)
		c.Nodes = append(c.Nodes, n)
	}
	skipped := 0
	for _, r := range read("openb_pod_list_default.csv") {
		num, _ := strconv.Atoi(r[3])
		milli, _ := strconv.Atoi(r[4])
		if num == 0 || milli == 0 || (len(phases) > 0 && !contains(phases, r[7])) {
			continue
		}
		spec := map[string]bool{}
		for _, m := range strings.Split(r[5], "|") {
			if m != "" {
				spec[m] = true
			}
		}
		w := &Workload{ID: "default/" + r[0], Name: r[0], Namespace: "default", Kind: "pod", Count: num, Milli: milli}
		if !firstFit(c, w, spec) {
			skipped++
			continue
		}
		c.Workloads = append(c.Workloads, w)
	}
	return c, skipped
}

func firstFit(c *Cluster, w *Workload, spec map[string]bool) bool {
	for _, n := range c.Nodes {
		if len(spec) > 0 && !spec[n.Model] {
			continue
		}
		var gs []int
		for i, g := range n.GPUs {
			if (w.Milli == milliPerGPU && g.UsedMilli == 0) || (w.Milli < milliPerGPU && g.UsedMilli+w.Milli <= milliPerGPU) {
				gs = append(gs, i)
				if len(gs) == w.Count {
					break
				}
			}
		}
		if len(gs) == w.Count {
			for _, i := range gs {
				n.GPUs[i].UsedMilli += w.Milli
			}
			w.Node, w.GPUs = n.Name, gs
			return true
		}
	}
	return false
}

// releasableBound is issue #4's yardstick: per model, all nodes but
// ceil(GPUs requested / GPUs per node), where a pod requests num_gpu GPUs
// (a shared pod requests one GPU, whatever its gpu_milli). Plans that pack
// shared pods onto shared GPUs can beat it for a model.
func releasableBound(c *Cluster) int {
	nodes, gpus, per := map[string]int{}, map[string]float64{}, map[string]int{}
	model := map[string]string{}
	for _, n := range c.Nodes {
		nodes[n.Model]++
		per[n.Model] = max(per[n.Model], len(n.GPUs))
		model[n.Name] = n.Model
	}
	for _, w := range c.Workloads {
		gpus[model[w.Node]] += float64(w.Count)
	}
	bound := 0
	for m, n := range nodes {
		bound += n - int(math.Ceil(gpus[m]/float64(per[m])))
	}
	return bound
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestOpenBQuality: on the real trace's running pods the planner releases
// at least 95% of the nodes any plan could.
func TestOpenBQuality(t *testing.T) {
	c, skipped := loadOpenB(t, "Running")
	bound := releasableBound(c)
	plan, err := makePlan(context.Background(), c, Options{AllowSharing: true})
	if err != nil {
		t.Fatal(err)
	}
	ratio := float64(len(plan.ReleasedNodes)) / float64(bound)
	t.Logf("openb: %d GPU nodes, %d pods placed (%d did not fit first-fit), %d moves, %d nodes released of at most %d (%.1f%%)",
		len(c.Nodes), len(c.Workloads), skipped, len(plan.Moves), len(plan.ReleasedNodes), bound, 100*ratio)
	if ratio < 0.95 {
		t.Fatalf("released %d of at most %d nodes (%.1f%% < 95%%)", len(plan.ReleasedNodes), bound, 100*ratio)
	}
}

func BenchmarkOpenB(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		c, _ := loadOpenB(b, "Running")
		bound := releasableBound(c)
		b.StartTimer()
		plan, err := makePlan(context.Background(), c, Options{AllowSharing: true})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(len(plan.ReleasedNodes)), "released")
		b.ReportMetric(float64(bound), "bound")
	}
}

// synthCluster is n DGX nodes of 8 GPUs: a pattern of full, half-used,
// lightly used and idle nodes, with 1-, 2- and 4-GPU pods.
func synthCluster(n int) *Cluster {
	c := &Cluster{}
	for i := 0; i < n; i++ {
		node := dgx(fmt.Sprintf("node-%05d", i), "H100", 40)
		c.Nodes = append(c.Nodes, node)
		var sizes []int
		switch i % 4 {
		case 0:
			sizes = []int{4, 2, 1, 1}
		case 1:
			sizes = []int{2, 2}
		case 2:
			sizes = []int{1}
		}
		g := 0
		for k, s := range sizes {
			gs := make([]int, s)
			for j := range gs {
				gs[j] = g
				g++
			}
			c.Workloads = append(c.Workloads, pod(fmt.Sprintf("p-%d-%d", i, k), node.Name, gs...))
		}
	}
	occupy(c)
	return c
}

// BenchmarkPlan10000Nodes: planning time for 10,000 nodes (target ≤ 2 s on
// one core; run with GOMAXPROCS=1).
func BenchmarkPlan10000Nodes(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		c := synthCluster(10000)
		b.StartTimer()
		start := time.Now()
		plan, err := makePlan(context.Background(), c, Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(time.Since(start).Seconds(), "plan-s")
		b.ReportMetric(float64(len(plan.ReleasedNodes)), "released")
		b.ReportMetric(float64(releasableBound(c)), "bound")
	}
}
