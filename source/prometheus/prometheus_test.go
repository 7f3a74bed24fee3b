package prometheus

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/seedance/seedance/internal/testkit/engine"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/testkit/dcgmtest"

	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source"
	"github.com/seedance/seedance/source/sim"

	"github.com/seedance/seedance/internal/testkit/promtest"
	"github.com/seedance/seedance/internal/testkit/testnet"
)

func promOptions(url string, p *profile.Profile) Options {
	return Options{URL: url, Start: p.StartedAt, End: p.EndedAt, Step: time.Duration(p.IntervalS * float64(time.Second)),
		Chunk: 5 * time.Minute, Concurrency: 4, Timeout: 30 * time.Second, Retries: 2, Backoff: 50 * time.Millisecond}
}

// TestPrometheusRoundTrip fills a real Prometheus with a simulated
// cluster's metrics as dcgm-exporter and kube-state-metrics write them,
// reads them back with --source prometheus, and compares.
func TestPrometheusRoundTrip(t *testing.T) {
	for _, layout := range []string{dcgmtest.LayoutDirect, dcgmtest.LayoutKubePrometheus} {
		t.Run(layout, func(t *testing.T) { roundTrip(t, layout) })
	}
}

// roundTrip writes the simulated cluster in a label layout: with
// kube-prometheus's, the exporter's own pod is on every series and the
// workloads are in exported_*; the profile read back must name the
// workloads, never the exporter.
func roundTrip(t *testing.T, layout string) {
	clk := sim.NewClock(sim.DefaultStart)
	sim, err := sim.Open(sim.Options{Nodes: 8, Scenario: sim.ScenarioMixed, Seed: 1, Clock: clk, Start: sim.DefaultStart})
	if err != nil {
		t.Fatal(err)
	}
	want, err := source.Record(context.Background(), sim, source.RecordOptions{Interval: 15 * time.Second, Duration: 15 * time.Minute, Clock: clk})
	sim.Close()
	if err != nil {
		t.Fatal(err)
	}
	var om bytes.Buffer
	if err := dcgmtest.WriteOpenMetricsLayout(&om, want, layout); err != nil {
		t.Fatal(err)
	}
	srv := promtest.Start(t, om.Bytes())
	got, err := Read(context.Background(), promOptions(srv.URL, want))
	if err != nil {
		t.Fatal(err)
	}
	if err := profile.Validate(got); err != nil {
		t.Fatal(err)
	}
	if len(got.Nodes) != len(want.Nodes) {
		t.Fatalf("%d nodes, want %d", len(got.Nodes), len(want.Nodes))
	}
	for ni := range want.Nodes {
		wn, gn := want.Nodes[ni], got.Nodes[ni]
		if wn.Name != gn.Name || len(wn.GPUs) != len(gn.GPUs) {
			t.Fatalf("node %s/%s: %d/%d GPUs", wn.Name, gn.Name, len(wn.GPUs), len(gn.GPUs))
		}
		for gi := range wn.GPUs {
			compareGPU(t, wn.Name, &wn.GPUs[gi], &gn.GPUs[gi])
		}
		if a, b := workloadIDs(wn.Workloads), workloadIDs(gn.Workloads); a != b {
			t.Errorf("%s workloads:\n got %s\nwant %s", wn.Name, b, a)
		}
		want := map[string]string{}
		for _, w := range wn.Workloads {
			want[w.ID] = w.Labels[profile.ControllerLabel]
		}
		for _, w := range gn.Workloads {
			// kube_pod_labels' label_team, for attribution by team.
			if w.Kind == profile.KindPod && w.Labels["team"] != dcgmtest.Team(w.Name) {
				t.Errorf("%s: team %q, want %q (from kube_pod_labels)", w.ID, w.Labels["team"], dcgmtest.Team(w.Name))
			}
			// kube_pod_owner's owner, a ReplicaSet as its Deployment.
			if c := w.Labels[profile.ControllerLabel]; w.Kind == profile.KindPod && w.State != profile.StatePending && c != want[w.ID] {
				t.Errorf("%s: controller %q (from kube_pod_owner), want %q", w.ID, c, want[w.ID])
			}
		}
	}
	if !got.Complete || got.Source != profile.SourcePrometheus || got.IntervalS != 15 {
		t.Errorf("header %+v", got)
	}
}

func workloadIDs(ws []profile.Workload) string {
	var out []string
	for _, w := range ws {
		out = append(out, fmt.Sprintf("%s:%s:%v:%d", w.ID, w.State, w.GPUs, w.GPUCount))
	}
	return strings.Join(out, " ")
}

func compareGPU(t *testing.T, node string, want, got *profile.GPU) {
	t.Helper()
	if want.UUID != got.UUID || want.Index != got.Index || want.Model != got.Model || want.PCIBusID != got.PCIBusID {
		t.Fatalf("%s GPU %d identity: got %s %q %s", node, want.Index, got.UUID, got.Model, got.PCIBusID)
	}
	if got.Series.Len() != want.Series.Len() {
		t.Fatalf("%s GPU %d: %d samples, want %d", node, want.Index, got.Series.Len(), want.Series.Len())
	}
	for i := range want.Series.T {
		if got.Series.T[i] != want.Series.T[i] {
			t.Fatalf("t[%d] = %v, want %v", i, got.Series.T[i], want.Series.T[i])
		}
	}
	for m := profile.Metric(0); m < profile.NumMetrics; m++ {
		w, g := *want.Series.Col(m), *got.Series.Col(m)
		if (w == nil) != (g == nil) {
			// A column of nulls only has no series in Prometheus.
			if w != nil && allNull(w) {
				continue
			}
			t.Errorf("%s GPU %d %s: present %v, want %v", node, want.Index, m, g != nil, w != nil)
			continue
		}
		for i := range w {
			a, b := w[i], g[i]
			if profile.IsNull(a) != profile.IsNull(b) || (!profile.IsNull(a) && math.Abs(a-b) > 1e-9*math.Max(1, math.Abs(a))) {
				t.Errorf("%s GPU %d %s[%d] = %v, want %v", node, want.Index, m, i, b, a)
				break
			}
		}
	}
}

func allNull(v profile.Values) bool {
	for _, x := range v {
		if !profile.IsNull(x) {
			return false
		}
	}
	return true
}

func TestPrometheusNoMetrics(t *testing.T) {
	srv := promtest.Start(t, []byte("# TYPE up gauge\nup{job=\"x\"} 1 1767603600\n# EOF\n"))
	o := Options{URL: srv.URL, Start: sim.DefaultStart, End: sim.DefaultStart.Add(time.Hour), Step: 15 * time.Second, Concurrency: 2, Timeout: 10 * time.Second, Selector: `{cluster="a"}`}
	_, err := Read(context.Background(), o)
	if !errors.Is(err, ErrNoMetrics) || !strings.Contains(err.Error(), `{cluster="a"}`) {
		t.Fatalf("err = %v", err)
	}
	o.Selector = `{cluster=~"(}`
	if _, err = Read(context.Background(), o); !errors.Is(err, ErrPrometheus) || !strings.Contains(err.Error(), `{cluster=~"(}`) || !strings.Contains(err.Error(), "HTTP 400") {
		t.Fatalf("a bad selector should fail with a 4xx naming the query: %v", err)
	}
}

// faultyProxy forwards to a real Prometheus but answers the first n
// requests with 503, and stalls while stall is set.
func faultyProxy(t *testing.T, target string, n int32) (*httptest.Server, *atomic.Int32) {
	u, _ := url.Parse(target)
	rp := httputil.NewSingleHostReverseProxy(u)
	var calls atomic.Int32
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= n {
			http.Error(w, `{"status":"error","errorType":"unavailable","error":"overloaded"}`, http.StatusServiceUnavailable)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s, &calls
}

func TestPrometheusRetries(t *testing.T) {
	var om bytes.Buffer
	p := recordSim(t, 1, sim.ScenarioIdle, 1, 60*time.Second)
	if err := dcgmtest.WriteOpenMetrics(&om, p); err != nil {
		t.Fatal(err)
	}
	srv := promtest.Start(t, om.Bytes())
	o := promOptions(srv.URL, p)
	o.Concurrency, o.Retries, o.Backoff = 1, 3, 10*time.Millisecond
	// Two 503s, then answers: the query is retried and the profile is whole.
	proxy, calls := faultyProxy(t, srv.URL, 2)
	o.URL = proxy.URL
	got, err := Read(context.Background(), o)
	if err != nil || len(got.Nodes) != 1 || calls.Load() < 3 {
		t.Fatalf("err %v, calls %d", err, calls.Load())
	}
	// Always 503: reported after the retries, naming the query.
	proxy, _ = faultyProxy(t, srv.URL, 1000)
	o.URL = proxy.URL
	_, err = Read(context.Background(), o)
	if !errors.Is(err, ErrPrometheus) || !strings.Contains(err.Error(), "after 4 tries") || !strings.Contains(err.Error(), "HTTP 503") {
		t.Fatalf("err = %v", err)
	}
	// A server that is not there: a network error, retried, then reported
	// without the URL's credentials.
	o.URL = "http://alice:s3cret@127.0.0.1:1"
	_, err = Read(context.Background(), o)
	if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("err = %v", err)
	}
}

func TestPrometheusGapsStayGaps(t *testing.T) {
	// A GPU whose exporter missed 2 minutes of scrapes: Prometheus would
	// fill them for 5 minutes in a range query; raw samples keep the gap.
	p := recordSim(t, 1, sim.ScenarioBusy, 1, 10*time.Minute)
	g := &p.Nodes[0].GPUs[0]
	for m := profile.Metric(0); m < profile.NumMetrics; m++ {
		if col := *g.Series.Col(m); col != nil {
			for i := 240; i < 360; i++ {
				col[i] = profile.Null
			}
		}
	}
	var om bytes.Buffer
	if err := dcgmtest.WriteOpenMetrics(&om, p); err != nil {
		t.Fatal(err)
	}
	srv := promtest.Start(t, om.Bytes())
	o := promOptions(srv.URL, p)
	o.Step = time.Second
	got, err := Read(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	ts := got.Nodes[0].GPUs[0].Series.T
	if len(ts) != 480 || ts[239] != 239 || ts[240] != 360 {
		t.Fatalf("%d samples, around the gap %v", len(ts), ts[238:242])
	}
}

// TestPrometheusMaxSamples: a read that would hold more samples than
// MaxSamples stops with one line that says how to narrow it, instead of
// exhausting memory; progress counts the GPUs and samples read.
func TestPrometheusMaxSamples(t *testing.T) {
	p := recordSim(t, 1, sim.ScenarioBusy, 1, 10*time.Minute)
	var om bytes.Buffer
	if err := dcgmtest.WriteOpenMetrics(&om, p); err != nil {
		t.Fatal(err)
	}
	srv := promtest.Start(t, om.Bytes())
	o := promOptions(srv.URL, p)
	var last source.ReadProgress
	o.OnProgress = func(rp source.ReadProgress) { last = rp }
	if _, err := Read(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if last.Done != last.Total || last.GPUs != 8 || last.Samples == 0 {
		t.Fatalf("last progress %+v", last)
	}
	o.MaxSamples = last.Samples / 2
	_, err := Read(context.Background(), o)
	if !errors.Is(err, ErrTooManySamples) || !errors.Is(err, source.ErrSettings) || strings.Contains(err.Error(), "\n") ||
		!strings.Contains(err.Error(), "raise prometheus.max_samples") {
		t.Fatalf("err = %v", err)
	}
}

// TestPrometheusPartialAnswer: a store that answers with warnings (Thanos
// with partial_response) gives an incomplete profile that says why.
func TestPrometheusPartialAnswer(t *testing.T) {
	var om bytes.Buffer
	p := recordSim(t, 1, sim.ScenarioIdle, 1, 60*time.Second)
	if err := dcgmtest.WriteOpenMetrics(&om, p); err != nil {
		t.Fatal(err)
	}
	srv := promtest.Start(t, om.Bytes())
	u, _ := url.Parse(srv.URL)
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ModifyResponse = func(r *http.Response) error {
		b, _ := io.ReadAll(r.Body)
		b = bytes.Replace(b, []byte(`{"status":"success",`), []byte(`{"status":"success","warnings":["store eu-west-2 unavailable"],`), 1)
		r.Body = io.NopCloser(bytes.NewReader(b))
		r.ContentLength = int64(len(b))
		r.Header.Del("Content-Length")
		return nil
	}
	proxy := httptest.NewServer(rp)
	defer proxy.Close()
	got, err := Read(context.Background(), promOptions(proxy.URL, p))
	if err != nil {
		t.Fatal(err)
	}
	if got.Complete || len(got.Notes) != 1 || got.Notes[0] != "store eu-west-2 unavailable" || len(got.Nodes) != 1 {
		t.Fatalf("complete %v notes %v", got.Complete, got.Notes)
	}
}

// TestRetryWait: Retry-After (seconds or a date) replaces the backoff,
// capped at five minutes; every wait gets up to 20 % of jitter, so that
// waits drawn together differ.
func TestRetryWait(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for h, want := range map[string]time.Duration{
		"7": 7 * time.Second, " 0 ": 0, "": 0, "soon": 0, "-3": 0,
		now.Add(90 * time.Second).Format(http.TimeFormat): 90 * time.Second,
		now.Add(-time.Minute).Format(http.TimeFormat):     0,
	} {
		if got := retryAfter(h, now); got != want {
			t.Errorf("Retry-After %q = %v, want %v", h, got, want)
		}
	}
	seen := map[time.Duration]bool{}
	for i := 0; i < 50; i++ {
		d := retryWait(time.Second, 3, 0) // backoff 4 s
		if d < 4*time.Second || d > 4800*time.Millisecond {
			t.Fatalf("backoff wait %v outside 4–4.8 s", d)
		}
		seen[d] = true
		if d := retryWait(time.Second, 1, 30*time.Second); d < 30*time.Second || d > 36*time.Second {
			t.Fatalf("Retry-After wait %v outside 30–36 s", d)
		}
		if d := retryWait(time.Second, 1, time.Hour); d > 6*time.Minute {
			t.Fatalf("Retry-After of an hour waited %v", d)
		}
	}
	if len(seen) < 10 {
		t.Errorf("no jitter: %d distinct waits of 50", len(seen))
	}
}

// TestRetryAfterHonoured: a 429 with Retry-After: 1 makes the next try wait
// a second, not the 10 ms backoff.
func TestRetryAfterHonoured(t *testing.T) {
	var calls atomic.Int32
	var times []time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		times = append(times, time.Now())
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			http.Error(w, `{"status":"error","errorType":"too_many","error":"slow down"}`, http.StatusTooManyRequests)
			return
		}
		_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[]}}`))
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	c := &promClient{base: u, http: srv.Client(), retries: 2, backoff: 10 * time.Millisecond}
	if _, err := c.query(context.Background(), "up[1m]", time.Now()); err != nil {
		t.Fatal(err)
	}
	if len(times) != 2 || times[1].Sub(times[0]) < time.Second {
		t.Fatalf("%d calls, second after %v", len(times), times[len(times)-1].Sub(times[0]))
	}
}

// TestEndlessAnswer: a server whose answer never ends is refused once it
// passes the answer bound, with a hint (its memory is bounded by that size).
func TestEndlessAnswer(t *testing.T) {
	engine.SkipShort(t, "streams 256 MiB to reach the answer bound")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Endless series of one sample each: past the answer bound, not a
		// series' own.
		_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[`))
		chunk := []byte(strings.Repeat(`{"metric":{"__name__":"x"},"values":[[1767571200,"1"]]},`, 4096))
		for i := 0; i < 1<<20 && r.Context().Err() == nil; i++ {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	c := &promClient{base: u, http: srv.Client(), retries: 0, backoff: time.Millisecond}
	// Four queries in flight, as a read makes them: each is refused, and
	// together they never hold more than twice the bound (they held 3.5
	// GB when only the body was bounded: one-sample series cost five times
	// their JSON once parsed).
	peak := heapPeak(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = c.query(context.Background(), "x[1m]", time.Now())
		}()
	}
	wg.Wait()
	for _, err := range errs {
		// The parse-memory bound refuses them, and the error names it
		// (#56: it named the 256 MiB bound of the body, which a 60 MB
		// answer is far from).
		if err == nil || !strings.Contains(err.Error(), "would hold more than 128 MiB in memory together") || strings.Contains(err.Error(), "256 MiB") {
			t.Errorf("err = %v", err)
		}
	}
	got := peak()
	t.Logf("peak of the live heap while 4 answers were refused: %d MiB", got>>20)
	if got > 2*maxAnswerBytes {
		t.Errorf("the refused answers held %d MiB at their peak, more than twice the %d MiB bound", got>>20, maxAnswerBytes>>20)
	}
	if n := answersInFlight.Load(); n != 0 {
		t.Errorf("%d bytes still charged after every answer", n)
	}
}

// heapPeak samples the heap's live objects every millisecond until the
// returned function is called, which returns the largest seen. A peak
// between two samples can be missed, so it can only pass a test wrongly
// by a little, never fail it wrongly.
func heapPeak(t *testing.T) func() int64 {
	t.Helper()
	runtime.GC()
	stop, done := make(chan struct{}), make(chan int64)
	go func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		var top int64
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(s)
			top = max(top, int64(s[0].Value.Uint64()))
			select {
			case <-stop:
				done <- top
				return
			case <-tick.C:
			}
		}
	}()
	return func() int64 { close(stop); return <-done }
}

// recordSim records a simulated cluster at 1 s.
func recordSim(t testing.TB, nodes int, scenario string, seed int64, d time.Duration) *profile.Profile {
	t.Helper()
	p, err := sim.Record(sim.Options{Nodes: nodes, Scenario: scenario, Seed: seed}, time.Second, d, profile.Generator{Name: "seedance", Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCutAfter: an interrupted read keeps the samples up to the end of the
// last whole chunk, on every column, and drops what is left with none.
func TestCutAfter(t *testing.T) {
	nodes := []profile.Node{
		{Name: "a", GPUs: []profile.GPU{
			{UUID: "GPU-1", Series: profile.Series{T: profile.Values{0, 15, 30, 45}, GPUUtilPct: profile.Values{1, 2, 3, 4}, PowerW: profile.Values{5, 6, 7, 8}}},
			{UUID: "GPU-2", Series: profile.Series{T: profile.Values{60}, GPUUtilPct: profile.Values{9}}},
		}},
		{Name: "b", GPUs: []profile.GPU{{UUID: "GPU-3", Series: profile.Series{T: profile.Values{45}, GPUUtilPct: profile.Values{1}}}}},
	}
	got := cutAfter(nodes, 30)
	if len(got) != 1 || len(got[0].GPUs) != 1 {
		t.Fatalf("%+v", got)
	}
	s := got[0].GPUs[0].Series
	if len(s.T) != 3 || s.T[2] != 30 || len(s.GPUUtilPct) != 3 || len(s.PowerW) != 3 || s.MemBWUtilPct != nil {
		t.Fatalf("series %+v", s)
	}
}

func TestControllerOf(t *testing.T) {
	for _, c := range [][3]string{
		{"ReplicaSet", "llama-7b-infer-7d9f8b6c4", "Deployment/llama-7b-infer"},
		{"StatefulSet", "db", "StatefulSet/db"},
		{"Job", "train-42", "Job/train-42"},
		{"<none>", "x", ""},
		{"", "", ""},
	} {
		if got := controllerOf(c[0], c[1]); got != c[2] {
			t.Errorf("controllerOf(%q, %q) = %q, want %q", c[0], c[1], got, c[2])
		}
	}
}

// TestBatchesReadTheSameProfile: nodes read in batches (a budget of one
// node), their finished chunks' rows kept in a file, give the profile a
// read held in memory gives, byte for byte, raw and with pushdown, handed
// over one whole node at a time in name order; the row files are removed.
func TestBatchesReadTheSameProfile(t *testing.T) {
	p := recordSim(t, 3, sim.ScenarioMixed, 1, 12*time.Minute)
	var om bytes.Buffer
	if err := dcgmtest.WriteOpenMetricsLayout(&om, p, dcgmtest.LayoutKubePrometheus); err != nil {
		t.Fatal(err)
	}
	srv := promtest.Start(t, om.Bytes())
	for _, pushdown := range []bool{false, true} {
		o := promOptions(srv.URL, p) // 5-minute chunks: three
		o.Pushdown = pushdown
		whole, err := Read(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		o.BatchSamples, o.TempDir = 1, t.TempDir() // every node its own batch
		var names []string
		var nodes []profile.Node
		streamed, err := ReadNodes(context.Background(), o, func(ns []profile.Node) error {
			for _, n := range ns {
				names = append(names, n.Name)
			}
			nodes = append(nodes, ns...)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(names) != "[node-gpu-01 node-gpu-02 node-gpu-03]" || len(streamed.Nodes) != 0 {
			t.Fatalf("nodes %v, header %+v", names, streamed)
		}
		streamed.Nodes = nodes
		var a, b bytes.Buffer
		if err := profile.Encode(&a, whole); err != nil {
			t.Fatal(err)
		}
		if err := profile.Encode(&b, streamed); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Fatalf("pushdown %v: the profile read in batches differs from the one read at once", pushdown)
		}
		if left, _ := os.ReadDir(o.TempDir); len(left) != 0 {
			t.Fatalf("left in the temporary directory: %v", left)
		}
	}
}

// TestReadLeavesNoConnectionOpen: a read closes the connections it opened
// when it returns. A ledger update of a week in one-hour steps reads 168
// times in one process: with each read's keep-alive connections left open,
// a real Prometheus (at its default 512 connections) stopped answering
// after about 110 steps and the update hung.
func TestReadLeavesNoConnectionOpen(t *testing.T) {
	var om bytes.Buffer
	p := recordSim(t, 2, sim.ScenarioMixed, 1, 5*time.Minute)
	if err := dcgmtest.WriteOpenMetrics(&om, p); err != nil {
		t.Fatal(err)
	}
	srv := promtest.Start(t, om.Bytes())
	u, _ := url.Parse(srv.URL)
	front := testnet.CountConns(t, httputil.NewSingleHostReverseProxy(u))
	for _, push := range []bool{false, true} {
		o := promOptions(front.URL, p)
		o.Pushdown = push
		if _, err := Read(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		front.WaitAllClosed(t, fmt.Sprintf("a read (pushdown %v)", push), 10*time.Second)
	}
}
