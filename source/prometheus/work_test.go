package prometheus

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/internal/testkit/dcgmtest"
	"github.com/seedance/seedance/internal/testkit/promtest"
	"github.com/seedance/seedance/pricing"
	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source"
)

// workCluster is docs/units.md's example on one node, as dcgm-exporter,
// kube-state-metrics and two vLLM servers would have written it: ml/tp
// serves on GPUs 0–3 at 50 % and 100 W, its generated tokens rising 100
// every 10 s from 1000; ml/r holds GPU 4, idle, its requests split by
// finished_reason (stop + length = 50, 80, 10, 40 at 0, 30, 60, 90 s: a
// restart at 60 s); ml/router serves from no GPU.
func workCluster(t *testing.T, start time.Time) []byte {
	p := &profile.Profile{SchemaVersion: profile.SchemaVersion, StartedAt: start, EndedAt: start.Add(120 * time.Second), IntervalS: 10, Complete: true}
	n := profile.Node{Name: "n"}
	for i := range 5 {
		g := profile.GPU{Index: i, UUID: fmt.Sprintf("GPU-%d", i), Model: "TestGPU"}
		for s := range 12 {
			g.Series.T = append(g.Series.T, float64(10*s))
			util, power := 50.0, 100.0
			if i == 4 {
				util, power = 0, profile.Null
			}
			g.Series.GPUUtilPct = append(g.Series.GPUUtilPct, util)
			g.Series.PowerW = append(g.Series.PowerW, power)
		}
		n.GPUs = append(n.GPUs, g)
	}
	for _, w := range []struct {
		name string
		gpus []int
	}{{"tp", []int{0, 1, 2, 3}}, {"r", []int{4}}} {
		n.Workloads = append(n.Workloads, profile.Workload{ID: "ml/" + w.name, Name: w.name, Kind: profile.KindPod, State: profile.StateRunning,
			GPUs: w.gpus, Labels: map[string]string{"namespace": "ml"}})
	}
	p.Nodes = []profile.Node{n}
	var om bytes.Buffer
	if err := dcgmtest.WriteOpenMetrics(&om, p); err != nil {
		t.Fatal(err)
	}
	doc := strings.TrimSuffix(om.String(), "# EOF\n")
	var b strings.Builder
	b.WriteString(doc)
	at := func(s float64) string { return fmt.Sprintf("%.3f", float64(start.UnixMilli())/1e3+s) }
	b.WriteString("# TYPE vllm:generation_tokens counter\n")
	for s := 0; s < 12; s++ {
		fmt.Fprintf(&b, "vllm:generation_tokens_total{model_name=\"m\",namespace=\"ml\",pod=\"tp\"} %d %s\n", 1000+100*s, at(float64(10*s)))
	}
	b.WriteString("# TYPE vllm:request_success counter\n")
	stop, length := []int{40, 60, 5, 25}, []int{10, 20, 5, 15}
	for i, s := range []float64{0, 30, 60, 90} {
		fmt.Fprintf(&b, "vllm:request_success_total{finished_reason=\"length\",model_name=\"m\",namespace=\"ml\",pod=\"r\"} %d %s\n", length[i], at(s))
		fmt.Fprintf(&b, "vllm:request_success_total{finished_reason=\"stop\",model_name=\"m\",namespace=\"ml\",pod=\"r\"} %d %s\n", stop[i], at(s))
		fmt.Fprintf(&b, "vllm:request_success_total{finished_reason=\"stop\",model_name=\"m\",namespace=\"ml\",pod=\"router\"} %d %s\n", 7*i, at(s))
	}
	// Counters the user defines (units:): videos rendered by ml/r, under
	// other label names, and frames of ml/tp in two shards, summed by an
	// expression.
	b.WriteString("# TYPE render_videos counter\n")
	for i, s := range []float64{0, 30, 60, 90} {
		fmt.Fprintf(&b, "render_videos_total{exported_namespace=\"ml\",exported_pod=\"r\"} %d %s\n", []int{0, 1, 3, 6}[i], at(s))
	}
	b.WriteString("# TYPE app_frames counter\n")
	for s := 0; s < 12; s++ {
		for _, shard := range []string{"a", "b"} {
			fmt.Fprintf(&b, "app_frames_total{namespace=\"ml\",pod=\"tp\",shard=%q} %d %s\n", shard, 25*s, at(float64(10*s)))
		}
	}
	b.WriteString("# EOF\n")
	return []byte(b.String())
}

// TestWorkThroughPrometheus: on a real Prometheus, the serving counters
// read raw and with pushdown give the same unit figures, and they are the
// hand computation's (docs/units.md); the request counter's
// finished_reason series are summed, and the counter of a pod with no GPU
// is left out with a note.
func TestWorkThroughPrometheus(t *testing.T) {
	start := time.Now().Add(-3 * time.Hour).Truncate(time.Minute)
	srv := promtest.Start(t, workCluster(t, start))
	var got []string
	for _, pushdown := range []bool{false, true} {
		p, err := Read(context.Background(), Options{URL: srv.URL, Start: start, End: start.Add(120 * time.Second), Step: 10 * time.Second,
			Chunk: time.Minute, Concurrency: 2, Timeout: 30 * time.Second, Retries: 1, Backoff: 50 * time.Millisecond, Pushdown: pushdown, Work: true, Units: []source.WorkQuery{
				{Unit: "videos", Metric: "render_videos_total", PodLabel: "exported_pod", NamespaceLabel: "exported_namespace"},
				{Unit: "frames", Expr: "sum by (namespace, pod) (app_frames_total)"}}})
		if err != nil {
			t.Fatal(err)
		}
		if err := profile.Validate(p); err != nil {
			t.Fatal(err)
		}
		if notes := strings.Join(p.Notes, "\n"); !strings.Contains(notes, "1 pod(s) that hold no GPU in the read were left out: ml/router") || strings.Contains(notes, "could not be read") {
			t.Errorf("pushdown %v: notes %q", pushdown, notes)
		}
		r := analyzeUnits(t, p)
		rows := map[string]analyze.UnitFigures{}
		for _, w := range r.UnitWorkloads {
			for unit, f := range w.Units {
				rows[w.Workload+" "+unit] = f
			}
		}
		tp, rr := rows["ml/tp output_tokens"], rows["ml/r requests"]
		if !same(tp.Work, 1100) || tp.CostUSD != 0.48 || !same(tp.USDPer, 0.48/1100*1e6) || !same(tp.KWhPer, 48000/3.6e6/1100*1e6) {
			t.Errorf("pushdown %v: ml/tp %+v", pushdown, tp)
		}
		if !same(rr.Work, 70) || rr.CostUSD != 0.12 || !same(rr.USDPer, 0.12/70*1000) || !same(rr.IdleShare, 1) || len(rows) != 4 {
			t.Errorf("pushdown %v: ml/r %+v (rows %d)", pushdown, rr, len(rows))
		}
		// The user's: 6 videos for $0.12, 11 rises of 2 × 25 frames for $0.48.
		if v, f := rows["ml/r videos"], rows["ml/tp frames"]; !same(v.Work, 6) || !same(v.USDPer, 0.02) || v.Per != 1 || !same(f.Work, 550) || !same(f.USDPer, 0.48/550) {
			t.Errorf("pushdown %v: the user's counters: videos %+v, frames %+v", pushdown, v, f)
		}
		got = append(got, fmt.Sprintf("%v %v", show(tp.USDPer), show(rr.USDPer)))
	}
	if got[0] != got[1] {
		t.Errorf("raw %s, pushdown %s", got[0], got[1])
	}
	// A read that is not asked for the counters reads none.
	p, err := Read(context.Background(), Options{URL: srv.URL, Start: start, End: start.Add(120 * time.Second), Step: 10 * time.Second,
		Chunk: time.Minute, Timeout: 30 * time.Second, Pushdown: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range p.Nodes[0].Workloads {
		if w.Work != nil {
			t.Errorf("read without Work: %s has %+v", w.ID, w.Work)
		}
	}
}

func analyzeUnits(t *testing.T, p *profile.Profile) *analyze.Report {
	var doc bytes.Buffer
	if err := profile.Encode(&doc, p); err != nil {
		t.Fatal(err)
	}
	s, err := profile.OpenStream(&doc, "p")
	if err != nil {
		t.Fatal(err)
	}
	params := analyze.DefaultParams()
	params.Pricer = pricing.New(nil, 3.6)
	params.Attribution = &analyze.AttributionParams{GroupBy: []string{"namespace"}, UnitsOnly: true}
	r, err := analyze.Analyze(context.Background(), []analyze.Source{{Name: "p", Stream: s}}, params)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func show(v *float64) string {
	if v == nil {
		return "null"
	}
	return fmt.Sprint(*v)
}

func same(got *float64, want float64) bool {
	return got != nil && math.Abs(*got-want) <= 1e-8*math.Max(1, math.Abs(want))
}
