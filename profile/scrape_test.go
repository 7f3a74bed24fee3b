package profile

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const realdata = "../../shared/realdata/dcgm-exporter"

func scrapeFor(t *testing.T, targets []string, n int) *Profile {
	t.Helper()
	clk := NewSimClock(DefaultSimStart)
	p, err := Scrape(context.Background(), ScrapeOptions{Targets: targets, Timeout: 5 * time.Second},
		RecordOptions{Interval: 15 * time.Second, Duration: time.Duration(n) * 15 * time.Second, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	if err := Validate(p); err != nil {
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
		w.Write(b)
	}))
	t.Cleanup(s.Close)
	return s
}

// TestScrapeRealCaptures serves every real dcgm-exporter capture and checks
// that each either yields GPUs or fails with a one-line reason.
func TestScrapeRealCaptures(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(realdata, "extracted", "*.prom"))
	if len(files) == 0 {
		t.Fatalf("no captures under %s (is ../shared beside the repository?)", realdata)
	}
	parsed := 0
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			srv := serveFile(t, f)
			p := scrapeFor(t, []string{strings.TrimPrefix(srv.URL, "http://")}, 2)
			gpus := 0
			for _, n := range p.Nodes {
				gpus += len(n.GPUs)
			}
			switch {
			case gpus > 0:
				parsed++
				if len(p.Notes) != 0 {
					t.Errorf("notes %v", p.Notes)
				}
			case len(p.Notes) == 1 && !strings.Contains(p.Notes[0], "\n"):
				t.Logf("rejected in one line: %s", p.Notes[0])
			default:
				t.Fatalf("no GPUs and no reason: %+v", p)
			}
		})
	}
	if parsed < len(files)/2 {
		t.Errorf("only %d of %d captures parsed", parsed, len(files))
	}
}

func TestScrapeKnownCaptures(t *testing.T) {
	// An EKS H100 node with a vLLM pod: GPU util 0 with 74 GB allocated.
	srv := serveFile(t, filepath.Join(realdata, "extracted", "aicr-ff9c66d6.01.prom"))
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
	srv = serveFile(t, filepath.Join(realdata, "extracted", "cncf-kops-v1.35.01.prom"))
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
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(doc)) }))
	defer srv.Close()
	p := scrapeFor(t, []string{srv.URL + "/metrics"}, 1)
	s := p.Nodes[0].GPUs[0].Series
	if !IsNull(s.TempC[0]) || !IsNull(s.PowerW[0]) || s.GPUUtilPct[0] != 37 {
		t.Fatalf("series %+v", s)
	}
}

func TestScrapeTargetDownAndBack(t *testing.T) {
	b, _ := os.ReadFile(filepath.Join(realdata, "extracted", "aicr-ff9c66d6.01.prom"))
	var calls atomic.Int32
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n := calls.Add(1); n == 2 || n == 3 {
			http.Error(w, "restarting", http.StatusServiceUnavailable)
			return
		}
		w.Write(b)
	}))
	defer flaky.Close()
	steady := serveFile(t, filepath.Join(realdata, "extracted", "cncf-kops-v1.35.01.prom"))
	p := scrapeFor(t, []string{flaky.URL + "/metrics", steady.URL + "/metrics"}, 5)
	var down, up *Node
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
