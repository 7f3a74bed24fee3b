package prometheus

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source/dcgm"
)

// TestKubePrometheusLayoutRealCapture reads real Prometheus answers from an
// EKS H100 node scraped through kube-prometheus (aicr-4ddf3b88.02–05): every
// series carries the exporter's pod (nvidia-dcgm-exporter-hblfm in
// gpu-operator), and GPU 6's also names the vLLM pod in exported_pod with
// 74,198 MiB of memory in use. The vLLM pod must hold GPU 6; the exporter
// must be no workload.
func TestKubePrometheusLayoutRealCapture(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(realdata, "aicr-4ddf3b88.0[2-5].json"))
	if len(files) != 4 {
		t.Fatalf("want 4 captures in %s, found %d", realdata, len(files))
	}
	b := dcgm.NewBuilder(0)
	var ts int64
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		a, err := parsePromAnswer(fh)
		fh.Close()
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, s := range a.Series {
			ts = s.Pairs[0].TMillis
			addSeries(b, s.Labels["__name__"], s, time.UnixMilli(ts-1000), time.UnixMilli(ts+1000))
		}
	}
	nodes := build(t, b, ts, ts)
	if len(nodes) != 1 || len(nodes[0].GPUs) != 8 {
		t.Fatalf("%d nodes", len(nodes))
	}
	n := nodes[0]
	if len(n.Workloads) != 1 {
		t.Fatalf("workloads %+v", n.Workloads)
	}
	w := n.Workloads[0]
	if w.ID != "dynamo-workload/vllm-agg-0-vllmdecodeworker-5fljt" || len(w.GPUs) != 1 || w.GPUs[0] != 6 || w.Labels["container"] != "main" {
		t.Fatalf("workload %+v", w)
	}
	g := n.GPUs[6]
	found := false
	for _, v := range g.Series.MemUsedBytes {
		found = found || v == 74198*(1<<20)
	}
	if !found {
		t.Fatalf("GPU 6 memory %v", g.Series.MemUsedBytes)
	}
}

// TestExporterPodNeverAWorkload: an exporter pod whose name says nothing
// is still known from the series where it pushed a workload to exported_*,
// and then it is no workload on any GPU, including GPUs that run nothing.
func TestExporterPodNeverAWorkload(t *testing.T) {
	b := dcgm.NewBuilder(0)
	series := []map[string]string{
		{"UUID": "GPU-0", "gpu": "0", "Hostname": "n1", "namespace": "monitoring", "pod": "gpu-agent-7f9c2", "container": "agent",
			"exported_namespace": "ml", "exported_pod": "train-0", "exported_container": "main"},
		{"UUID": "GPU-1", "gpu": "1", "Hostname": "n1", "namespace": "monitoring", "pod": "gpu-agent-7f9c2", "container": "agent"},
		{"UUID": "GPU-2", "gpu": "2", "Hostname": "n1", "namespace": "gpu-operator", "pod": "nvidia-dcgm-exporter-x1", "container": "nvidia-dcgm-exporter"},
		{"UUID": "GPU-3", "gpu": "3", "Hostname": "n1", "namespace": "ml", "pod": "infer-1", "container": "main"}, // honor_labels layout
	}
	for _, l := range series {
		id, ok := dcgm.ParseLabels(func(k string) string { return l[k] })
		if !ok {
			t.Fatal(l)
		}
		b.Add(id, "DCGM_FI_DEV_GPU_UTIL", []dcgm.Pair{{TMillis: 1000, V: 50}})
	}
	var ids []string
	for _, w := range build(t, b, 0, 2000)[0].Workloads {
		ids = append(ids, w.ID)
	}
	if got := strings.Join(ids, " "); got != "ml/infer-1 ml/train-0" {
		t.Fatalf("workloads %q", got)
	}
}

// realdata holds real Prometheus answers, copied with their licences
// (README.md there).
const realdata = "testdata/dcgm-exporter"

// TestAnswerBuffersReused: answers parsed one after another share one
// scanner buffer, and nothing an answer holds points into it: the first
// answer's labels and values are intact after a second, different one.
func TestAnswerBuffersReused(t *testing.T) {
	doc := func(node, v string) string {
		return `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"Hostname":"` + node +
			`","gpu":"0","UUID":"GPU-` + node + `","weird\u00e9":"x\"y"},"values":[[1767571200.5,"` + v + `"]]}]}}`
	}
	a, err := parsePromAnswer(strings.NewReader(doc("node-a", "41.5")))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := parsePromAnswer(strings.NewReader(doc("node-zzzzzz", "99"))); err != nil {
			t.Fatal(err)
		}
	}
	s := a.Series[0]
	if s.Labels["Hostname"] != "node-a" || s.Labels["UUID"] != "GPU-node-a" || s.Labels["weirdé"] != `x"y` || s.Pairs[0].V != 41.5 || s.Pairs[0].TMillis != 1767571200500 {
		t.Fatalf("the first answer changed: %+v", s)
	}
}

// build is b.Build for a test whose GPUs have one index each.
func build(t *testing.T, b *dcgm.Builder, lo, hi int64) []profile.Node {
	t.Helper()
	nodes, err := b.Build(lo, hi)
	if err != nil {
		t.Fatal(err)
	}
	return nodes
}
