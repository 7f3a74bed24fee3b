package scrape

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/testkit/testnet"
	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source"
	"github.com/seedance/seedance/source/sim"
)

// realdata holds real dcgm-exporter scrapes, copied with their licences
// (README.md there).
const realdata = "testdata/dcgm-exporter"

func scrapeFor(t *testing.T, targets []string, n int) *profile.Profile {
	t.Helper()
	clk := sim.NewClock(sim.DefaultStart)
	p, err := Scrape(context.Background(), Options{Targets: targets, Timeout: 5 * time.Second},
		source.RecordOptions{Interval: 15 * time.Second, Duration: time.Duration(n) * 15 * time.Second, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	if err := profile.Validate(p); err != nil {
		t.Fatal(err)
	}
	return p
}

func serveFile(t *testing.T, path string) *httptest.Server {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write(b)
	}))
	t.Cleanup(s.Close)
	return s
}

// TestScrapeRealCaptures serves every real dcgm-exporter capture and checks
// that each either yields GPUs or fails with a one-line reason.
func TestScrapeRealCaptures(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(realdata, "*.prom"))
	if len(files) == 0 {
		t.Fatalf("no captures under %s ", realdata)
	}
	parsed := 0
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			srv := serveFile(t, f)
			clk := sim.NewClock(sim.DefaultStart)
			p, err := Scrape(context.Background(), Options{Targets: []string{strings.TrimPrefix(srv.URL, "http://")}, Timeout: 5 * time.Second},
				source.RecordOptions{Interval: 15 * time.Second, Duration: 30 * time.Second, Clock: clk})
			switch {
			case err == nil && len(p.Nodes) > 0 && len(p.Nodes[0].GPUs) > 0:
				parsed++
				if len(p.Notes) != 0 {
					t.Errorf("notes %v", p.Notes)
				}
			case errors.Is(err, source.ErrNothingObserved) && p == nil && !strings.Contains(err.Error(), "\n") && strings.Contains(err.Error(), srv.URL+"/metrics"):
				t.Logf("rejected in one line: %v", err)
			default:
				t.Fatalf("no GPUs and no one-line reason: %v %+v", err, p)
			}
		})
	}
	if parsed < len(files)/2 {
		t.Errorf("only %d of %d captures parsed", parsed, len(files))
	}
}

func TestScrapeKnownCaptures(t *testing.T) {
	// An EKS H100 node with a vLLM pod: GPU util 0 with 74 GB allocated.
	srv := serveFile(t, filepath.Join(realdata, "aicr-ff9c66d6.01.prom"))
	p := scrapeFor(t, []string{srv.URL + "/metrics"}, 3)
	n := p.Nodes[0]
	if n.Name != "gpu-node-1" || len(n.GPUs) != 8 || n.GPUs[0].Model != "NVIDIA H100 80GB HBM3" || n.GPUs[0].PCIBusID != "0000:53:00.0" {
		t.Fatalf("node %s, %d GPUs, %+v", n.Name, len(n.GPUs), n.GPUs[0])
	}
	if len(n.Workloads) == 0 || n.Workloads[0].ID != "dynamo-workload/vllm-agg-0-vllmdecodeworker-s65j5" || n.Workloads[0].GPUs[0] != 0 {
		t.Fatalf("workloads %+v", n.Workloads)
	}
	if got := n.GPUs[0].Series.T; len(got) != 3 || got[1] != 15 {
		t.Fatalf("t = %v", got)
	}
	// The kops capture is a full L4 scrape with blank sentinels.
	srv = serveFile(t, filepath.Join(realdata, "cncf-kops-v1.35.01.prom"))
	p = scrapeFor(t, []string{strings.TrimPrefix(srv.URL, "http://")}, 1)
	g := p.Nodes[0].GPUs[0]
	if g.Model != "NVIDIA L4" || g.Series.GPUUtilPct == nil || g.Series.PowerW == nil {
		t.Fatalf("L4 = %+v", g)
	}
}

func TestBlankSentinel(t *testing.T) {
	doc := `# TYPE DCGM_FI_DEV_GPU_TEMP gauge
DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="GPU-1",Hostname="h"} 9223372036854775794
# TYPE DCGM_FI_DEV_POWER_USAGE gauge
DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-1",Hostname="h"} 140737488355328
# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-1",Hostname="h"} 37
`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(doc)) }))
	defer srv.Close()
	p := scrapeFor(t, []string{srv.URL + "/metrics"}, 1)
	s := p.Nodes[0].GPUs[0].Series
	if !profile.IsNull(s.TempC[0]) || !profile.IsNull(s.PowerW[0]) || s.GPUUtilPct[0] != 37 {
		t.Fatalf("series %+v", s)
	}
}

func TestScrapeTargetDownAndBack(t *testing.T) {
	flaky := flakyExporter(t)
	steady := serveFile(t, filepath.Join(realdata, "cncf-kops-v1.35.01.prom"))
	p := scrapeFor(t, []string{flaky.URL + "/metrics", steady.URL + "/metrics"}, 5)
	var down, up *profile.Node
	for i := range p.Nodes {
		if p.Nodes[i].Name == "gpu-node-1" {
			down = &p.Nodes[i]
		} else {
			up = &p.Nodes[i]
		}
	}
	if got := down.GPUs[0].Series.T; len(got) != 3 || got[0] != 0 || got[1] != 45 || got[2] != 60 {
		t.Fatalf("flaky target t = %v, want a gap at 15 and 30", got)
	}
	if got := up.GPUs[0].Series.T; len(got) != 5 {
		t.Fatalf("steady target t = %v", got)
	}
	if len(p.Notes) != 1 || !strings.Contains(p.Notes[0], "2 of 5 scrapes failed (last: HTTP 503)") {
		t.Fatalf("notes %v", p.Notes)
	}
}

// TestScrapeNothingObserved: when every scrape fails the run is an error
// naming every target (without credentials) and the first error, and there
// is no profile; failures are logged once per target, not once per scrape.
func TestScrapeNothingObserved(t *testing.T) {
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusServiceUnavailable)
	}))
	defer down.Close()
	gone := httptest.NewServer(http.NotFoundHandler())
	goneURL := gone.URL
	gone.Close() // connection refused
	withCreds := strings.Replace(down.URL, "http://", "http://user:s3cret@", 1) + "/metrics"
	var logs []string
	clk := sim.NewClock(sim.DefaultStart)
	p, err := Scrape(context.Background(), Options{Targets: []string{withCreds, goneURL + "/metrics"}, Timeout: time.Second,
		Log: func(l string) { logs = append(logs, l) }},
		source.RecordOptions{Interval: 15 * time.Second, Duration: 10 * time.Minute, Clock: clk,
			Checkpoint: time.Minute, OnCheckpoint: func(*profile.Profile) error { t.Error("a checkpoint without samples"); return nil }})
	if p != nil || !errors.Is(err, source.ErrNothingObserved) {
		t.Fatalf("profile %v, err %v", p, err)
	}
	msg := err.Error()
	for _, want := range []string{down.URL + "/metrics", goneURL + "/metrics", "first error: " + down.URL + "/metrics: HTTP 503"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	// 40 scrapes of 2 targets over 10 minutes: one line per target when it
	// starts failing, then one a minute at most: 2 × 10 lines.
	if len(logs) != 20 || !strings.Contains(logs[0], "scrape "+down.URL+"/metrics failed: HTTP 503 (1 of 1 scrapes failed so far)") {
		t.Errorf("%d log lines, first %q", len(logs), logs)
	}
	for _, l := range append(logs, msg) {
		if strings.Contains(l, "s3cret") {
			t.Fatalf("a password reached a message: %s", l)
		}
	}
}

// TestScrapeLogsRecovery: a target that fails and comes back is logged
// twice, and the note names its full URL.
func TestScrapeLogsRecovery(t *testing.T) {
	flaky := flakyExporter(t)
	var logs []string
	clk := sim.NewClock(sim.DefaultStart)
	p, err := Scrape(context.Background(), Options{Targets: []string{flaky.URL + "/metrics"}, Timeout: time.Second, Log: func(l string) { logs = append(logs, l) }},
		source.RecordOptions{Interval: 15 * time.Second, Duration: 75 * time.Second, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	if len(logs) != 2 || !strings.Contains(logs[1], "is back after 2 failed scrape(s)") {
		t.Errorf("logs %q", logs)
	}
	if len(p.Notes) != 1 || !strings.HasPrefix(p.Notes[0], "target "+flaky.URL+"/metrics: 2 of 5") {
		t.Errorf("notes %q", p.Notes)
	}
}

// flakyExporter serves the EKS H100 capture, failing the second and third
// scrapes with 503.
func flakyExporter(t *testing.T) *httptest.Server {
	b, err := os.ReadFile(filepath.Join(realdata, "aicr-ff9c66d6.01.prom"))
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n := calls.Add(1); n == 2 || n == 3 {
			http.Error(w, "restarting", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write(b)
	}))
	t.Cleanup(flaky.Close)
	return flaky
}

// TestScrapeLeavesNoConnectionOpen: a run closes the connections it opened
// when it returns; the loop scrapes once per run, and each run's client
// used to leave its keep-alive connections to every target open.
func TestScrapeLeavesNoConnectionOpen(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(realdata, "cncf-kops-v1.35.01.prom"))
	if err != nil {
		t.Fatal(err)
	}
	srv := testnet.CountConns(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write(b)
	}))
	scrapeFor(t, []string{srv.URL + "/metrics"}, 2)
	srv.WaitAllClosed(t, "a scrape run", 10*time.Second)
}
