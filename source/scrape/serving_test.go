package scrape

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source"
	"github.com/seedance/seedance/source/sim"
)

// vllmServer serves vLLM's counters in its documented exposition
// (docs/design/metrics.md; vLLM cannot run here), each scrape 10 more
// requests (split by finished_reason), 1,000 more prompt and 500 more
// generated tokens; a TGI-style histogram's _sum; and an app's own
// counter of videos in two shards, 3 more a scrape.
func vllmServer(t *testing.T) *httptest.Server {
	var n atomic.Int64
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k := n.Add(1)
		fmt.Fprintf(w, `# HELP vllm:request_success_total Count of successfully processed requests.
# TYPE vllm:request_success_total counter
vllm:request_success_total{finished_reason="stop",model_name="llama"} %d
vllm:request_success_total{finished_reason="length",model_name="llama"} %d
# TYPE vllm:prompt_tokens_total counter
vllm:prompt_tokens_total{model_name="llama"} %d
# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{model_name="llama"} %d
# TYPE tgi_request_input_length histogram
tgi_request_input_length_bucket{le="+Inf"} %d
tgi_request_input_length_sum %d
tgi_request_input_length_count %d
# TYPE render_videos_total counter
render_videos_total{model="sd",shard="0"} %d
render_videos_total{model="sd",shard="1"} %d
`, 8*k, 2*k, 1000*k, 500*k, k, 7*k, k, k, 2*k)
	}))
	t.Cleanup(s.Close)
	return s
}

// TestScrapeServingCounters (#57): a serving pod's vLLM endpoint scraped
// beside dcgm-exporter gives the pod its counters, each summed over its
// series by model, a histogram's _sum read; a target whose pod holds no
// GPU, and one that fails, are notes; a bad --serving is refused.
func TestScrapeServingCounters(t *testing.T) {
	dcgm := serveFile(t, filepath.Join(realdata, "aicr-ff9c66d6.01.prom"))
	vllm := vllmServer(t)
	pod := "dynamo-workload/vllm-agg-0-vllmdecodeworker-s65j5"
	serving := []ServingTarget{{Pod: pod, URL: vllm.URL + "/metrics"}, {Pod: "ml/elsewhere", URL: vllm.URL + "/metrics"}, {Pod: "ml/down", URL: "http://127.0.0.1:1/metrics"}}
	clk := sim.NewClock(sim.DefaultStart)
	units := []source.WorkQuery{{Unit: "videos", Metric: "render_videos_total", ModelLabel: "model"},
		{Unit: "frames", Expr: "sum(app_frames_total)"}, {Unit: "steps", Metric: "train_steps_total", JobLabel: "slurm_job"}}
	p, err := Scrape(context.Background(), Options{Targets: []string{dcgm.URL + "/metrics"}, Timeout: 2 * time.Second, Serving: serving, Units: units},
		source.RecordOptions{Interval: 15 * time.Second, Duration: 4 * 15 * time.Second, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	if err := profile.Validate(p); err != nil {
		t.Fatal(err)
	}
	var w *profile.Workload
	for i := range p.Nodes[0].Workloads {
		if p.Nodes[0].Workloads[i].ID == pod {
			w = &p.Nodes[0].Workloads[i]
		}
	}
	got := map[string]string{}
	for _, c := range w.Work {
		got[c.Unit+"/"+c.Model] = fmt.Sprint(c.T, c.V)
	}
	// The targets are scraped in turn: the pod's first, then ml/elsewhere's
	// (the same server), so the pod's readings are every other count.
	want := map[string]string{
		"requests/llama":      "[0 15 30 45] [10 30 50 70]",
		"input_tokens/llama":  "[0 15 30 45] [1000 3000 5000 7000]",
		"output_tokens/llama": "[0 15 30 45] [500 1500 2500 3500]",
		"input_tokens/":       "[0 15 30 45] [7 21 35 49]",
		"videos/sd":           "[0 15 30 45] [3 9 15 21]", // the user's units: metric, summed over its shards
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("work:\n%v\nwant\n%v", got, want)
	}
	// The analysis prices them: 60 requests over the window's 45 s.
	r := unitFigures(t, p)
	if u := r.Units["requests"]; u.Work == nil || *u.Work != 60 || u.USDPer == nil {
		t.Errorf("the unit figures: %+v", u)
	}
	notes := strings.Join(p.Notes, "\n")
	for _, want := range []string{"serving target ml/elsewhere: no GPU of the profile is its pod's", "serving target ml/down (http://127.0.0.1:1/metrics): 4 of 4 scrapes failed",
		"units[1] (frames): an expression is read through a PromQL engine", "units[2] (steps): joined by the Slurm job label slurm_job"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes: %s\nwant %q", notes, want)
		}
	}
	for _, bad := range []string{"nopod=http://x", "ns/pod", "ns/a/b=host:1", "=host:1"} {
		if _, err := ParseServing(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if st, err := ParseServing(" ml/llama-0=10.0.0.5:8000 "); err != nil || st.Pod != "ml/llama-0" || st.URL != "http://10.0.0.5:8000/metrics" {
		t.Errorf("parse: %+v %v", st, err)
	}
}

// TestTwoServersOfOnePod (#57): two serving targets that name one pod
// are two series of each counter (their instance apart), and the analysis
// trusts neither: a warning names both, the unit figures are null; the
// same target given twice is refused.
func TestTwoServersOfOnePod(t *testing.T) {
	dcgm := serveFile(t, filepath.Join(realdata, "aicr-ff9c66d6.01.prom"))
	one, two := vllmServer(t), vllmServer(t)
	pod := "dynamo-workload/vllm-agg-0-vllmdecodeworker-s65j5"
	p, err := Scrape(context.Background(), Options{Targets: []string{dcgm.URL + "/metrics"}, Timeout: 2 * time.Second,
		Serving: []ServingTarget{{Pod: pod, URL: one.URL + "/metrics"}, {Pod: pod, URL: two.URL + "/metrics"}}},
		source.RecordOptions{Interval: 15 * time.Second, Duration: 3 * 15 * time.Second, Clock: sim.NewClock(sim.DefaultStart)})
	if err != nil {
		t.Fatal(err)
	}
	series := map[string]bool{}
	for _, w := range p.Nodes[0].Workloads {
		for _, c := range w.Work {
			if c.Unit == "requests" {
				series[c.Series] = true
			}
		}
	}
	if len(series) != 2 {
		t.Fatalf("requests series: %v, want one per server", series)
	}
	r := unitFigures(t, p)
	if u := r.Units["requests"]; u.Work != nil || u.USDPer != nil {
		t.Errorf("requests of two servers of one pod: %+v, want null", u)
	}
	warned := false
	for _, w := range r.Warnings {
		warned = warned || strings.Contains(w, "both count requests of llama for "+pod) && strings.Count(w, "vllm:request_success_total{instance=") == 2
	}
	if !warned {
		t.Errorf("warnings: %q", r.Warnings)
	}
}

// unitFigures analyzes the scraped profile as written to a file, with the
// unit figures by namespace.
func unitFigures(t *testing.T, p *profile.Profile) *analyze.Report {
	t.Helper()
	var doc bytes.Buffer
	if err := profile.Encode(&doc, p); err != nil {
		t.Fatal(err)
	}
	st, err := profile.OpenStream(bytes.NewReader(doc.Bytes()), "scraped.json")
	if err != nil {
		t.Fatal(err)
	}
	ap := analyze.DefaultParams()
	ap.Attribution = &analyze.AttributionParams{GroupBy: []string{"namespace"}, UnitsOnly: true}
	r, err := analyze.Analyze(context.Background(), []analyze.Source{{Name: "scraped.json", Stream: st}}, ap)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
