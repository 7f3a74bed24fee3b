package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seedance/seedance/internal/exit"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/internal/testkit/dcgmtest"
	"github.com/seedance/seedance/internal/testkit/promtest"
	"github.com/seedance/seedance/profile"
)

// TestPrometheusSourceEndToEnd: a simulated cluster, written as dcgm-exporter
// metrics into a real Prometheus, read back with --source prometheus; analyze
// must find the same on both profiles.
func TestPrometheusSourceEndToEnd(t *testing.T) {
	simPath := simProfile(t, "--interval", "15s", "--duration", "15m")
	sim, err := profile.ReadFile(simPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	var om bytes.Buffer
	if err := dcgmtest.WriteOpenMetrics(&om, sim); err != nil {
		t.Fatal(err)
	}
	srv := promtest.Start(t, om.Bytes())

	promPath := filepath.Join(t.TempDir(), "cluster.json")
	r := run(t, nil, "profile", "--source", "prometheus", "--prometheus-url", srv.URL, "--start", "2026-01-05T09:00:00Z",
		"--end", "2026-01-05T09:15:00Z", "--step", "15s", "--output", promPath)
	if r.code != 0 || !strings.Contains(r.errOut, "wrote "+promPath+": 8 nodes, 64 GPUs, 60 samples") {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	readProfile(t, promPath) // schema-valid
	reports := map[string]analyze.Report{}
	for name, path := range map[string]string{"sim": simPath, "prometheus": promPath} {
		r := run(t, nil, "analyze", path, "--format", "json", "--report", "all")
		if r.code != 0 {
			t.Fatal(r.errOut)
		}
		var rep analyze.Report
		if err := json.Unmarshal([]byte(r.out), &rep); err != nil {
			t.Fatal(err)
		}
		reports[name] = rep
	}
	a, b := reports["sim"], reports["prometheus"]
	as, bs := analyze.SummaryNumbers(a.Summary), analyze.SummaryNumbers(b.Summary)
	if len(as) != len(bs) {
		t.Errorf("summary fields: sim %v, prometheus %v", as, bs)
	}
	for k, x := range as {
		if y := bs[k]; math.Abs(x-y) > 1e-6*math.Max(1, math.Abs(x)) {
			t.Errorf("summary.%s: sim %v, prometheus %v", k, x, y)
		}
	}
	for i := range a.Nodes {
		if a.Nodes[i].Name != b.Nodes[i].Name || a.Nodes[i].Verdict != b.Nodes[i].Verdict {
			t.Errorf("node %s: %s vs %s", a.Nodes[i].Name, a.Nodes[i].Verdict, b.Nodes[i].Verdict)
		}
	}
	// Placement suggestions need the topology, which Prometheus does not
	// hold; the money ones must agree.
	if x, y := moneySuggestions(a), moneySuggestions(b); x != y {
		t.Errorf("suggestions differ:\n%s\n%s", x, y)
	}
}

func TestPrometheusSourceErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--duration", "1h"}, "needs --prometheus-url"},
		{[]string{"--prometheus-url", "http://127.0.0.1:1"}, "needs a range"},
		{[]string{"--prometheus-url", "http://127.0.0.1:1", "--start", "yesterday"}, "RFC 3339"},
		{[]string{"--prometheus-url", "http://127.0.0.1:1", "--duration", "1h", "--selector", "cluster=a"}, "in braces"},
		{[]string{"--prometheus-url", "not a url", "--duration", "1h"}, "must be an http(s) URL"},
	}
	for _, tt := range tests {
		r := run(t, nil, append([]string{"profile", "--source", "prometheus"}, tt.args...)...)
		if r.code != exit.Usage || !strings.Contains(r.errOut, tt.want) || strings.Count(r.errOut, "\n") != 1 {
			t.Errorf("%v: exit %d %q", tt.args, r.code, r.errOut)
		}
	}
}

// TestSecretsStayOut: passwords and tokens from the config file and the URL
// appear in no error, no config view, and no profile.
func TestSecretsStayOut(t *testing.T) {
	cfg := writeConfig(t, `prometheus:
  retries: 0
  basic_auth:
    username: alice
    password: hunter2-pw
  http:
    http_headers:
      X-Scope-OrgID:
        values: [tenant-1]
scrape:
  http:
    authorization:
      credentials: tok-s3cret
`)
	env := map[string]string{"SEEDANCE_CONFIG": cfg}
	r := run(t, env, "profile", "--source", "prometheus", "--prometheus-url", "http://bob:url-pass@127.0.0.1:1", "--duration", "1h")
	if r.code != exit.Failure || strings.Contains(r.errOut, "hunter2") || strings.Contains(r.errOut, "url-pass") {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	r = run(t, env, "config", "view", "--config", cfg)
	if strings.Contains(r.out, "hunter2") || strings.Contains(r.out, "tok-s3cret") || !strings.Contains(r.out, "<secret>") {
		t.Fatalf("config view shows a secret:\n%s", r.out)
	}
	bad := writeConfig(t, "prometheus:\n  http:\n    basic_auth:\n      usrname: alice\n      password: hunter2-pw\n")
	r = run(t, map[string]string{"SEEDANCE_CONFIG": bad}, "profile", "--source", "prometheus", "--prometheus-url", "http://127.0.0.1:1", "--duration", "1h")
	if r.code != exit.Usage || strings.Contains(r.errOut, "hunter2") || !strings.Contains(r.errOut, "usrname") {
		t.Fatalf("misspelt http setting: exit %d %s", r.code, r.errOut)
	}
}

func TestScrapeSourceCLI(t *testing.T) {
	capture, err := os.ReadFile("../source/scrape/testdata/dcgm-exporter/aicr-ff9c66d6.01.prom")
	if err != nil {
		t.Fatal(err)
	}
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(capture) }))
	defer ok.Close()
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", 500) }))
	defer down.Close()
	list := filepath.Join(t.TempDir(), "targets")
	if err := os.WriteFile(list, []byte("# dcgm-exporters\n"+down.URL+"/metrics\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "s.json")
	r := run(t, nil, "profile", "--source", "scrape", "--targets", strings.TrimPrefix(ok.URL, "http://"), "--targets-file", list,
		"--interval", "100ms", "--duration", "0.5", "--output", out)
	if r.code != 0 || !strings.Contains(r.errOut, "1 nodes, 8 GPUs") || !strings.Contains(r.errOut, "note: target "+down.URL+"/metrics: 5 of 5 scrapes failed (last: HTTP 500)") {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	// Failures reach stderr as they happen, once for the target, full URL.
	if strings.Count(r.errOut, "warning: scrape "+down.URL+"/metrics failed: HTTP 500") != 1 {
		t.Errorf("failure lines: %s", r.errOut)
	}
	p := readProfile(t, out)
	if p.Source != "scrape" || p.Nodes[0].GPUs[0].Series.Len() != 5 {
		t.Fatalf("profile %s %d samples", p.Source, p.Nodes[0].GPUs[0].Series.Len())
	}
	if r := run(t, nil, "profile", "--source", "scrape"); r.code != exit.Usage || !strings.Contains(r.errOut, "needs --targets") {
		t.Fatalf("no targets: %d %s", r.code, r.errOut)
	}
	// Every scrape failed: exit 1, one line naming the targets and the first
	// error, and the existing file is left as it was.
	if err := os.WriteFile(out, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = run(t, nil, "profile", "--source", "scrape", "--targets-file", list, "--interval", "100ms", "--duration", "0.3", "--output", out)
	lines := strings.Split(strings.TrimSpace(r.errOut), "\n")
	last := lines[len(lines)-1]
	if r.code != exit.Failure || !strings.HasPrefix(last, "seedance: nothing observed: no GPU sample from "+down.URL+"/metrics (first error: "+down.URL+"/metrics: HTTP 500)") {
		t.Fatalf("all failed: exit %d: %s", r.code, r.errOut)
	}
	if b, _ := os.ReadFile(out); string(b) != "precious" {
		t.Fatalf("the output was touched: %q", b)
	}
}

// TestPrometheusHTTPSettingsApplied: basic auth and headers given directly
// under prometheus: in the config file reach the server.
func TestPrometheusHTTPSettingsApplied(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		if !ok || u != "alice" || p != "hunter2-pw" || r.Header.Get("X-Scope-OrgID") != "tenant-1" {
			http.Error(w, `{"status":"error","errorType":"unauthorized","error":"who are you"}`, http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[]}}`))
	}))
	defer srv.Close()
	cfg := writeConfig(t, "prometheus:\n  basic_auth:\n    username: alice\n    password: hunter2-pw\n  http_headers:\n    X-Scope-OrgID:\n      values: [tenant-1]\n")
	r := run(t, map[string]string{"SEEDANCE_CONFIG": cfg}, "profile", "--source", "prometheus", "--prometheus-url", srv.URL, "--duration", "1h")
	if r.code != exit.Failure || !strings.Contains(r.errOut, "nothing observed: no dcgm-exporter metrics match") {
		t.Fatalf("with credentials: exit %d %s", r.code, r.errOut)
	}
	r = run(t, nil, "profile", "--source", "prometheus", "--prometheus-url", srv.URL, "--duration", "1h")
	if r.code != exit.Failure || !strings.Contains(r.errOut, "HTTP 401: who are you") {
		t.Fatalf("without: exit %d %s", r.code, r.errOut)
	}
}

func moneySuggestions(r analyze.Report) string {
	var out []string
	for _, s := range r.Suggestions {
		if s.SavingsUSDPerHour > 0 {
			out = append(out, s.Kind+" "+s.Node+" "+s.Command)
		}
	}
	return strings.Join(out, "\n")
}

// TestTopologyFile attaches a topo -m capture to nodes read from scrapes,
// and analyze then sees a workload spread over both NUMA nodes.
func TestTopologyFile(t *testing.T) {
	doc := "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n"
	for g := 0; g < 8; g++ {
		pod := ""
		if g == 3 || g == 4 {
			pod = `,namespace="ml",pod="llama-70b-infer-0"`
		}
		doc += fmt.Sprintf("DCGM_FI_DEV_GPU_UTIL{gpu=\"%d\",UUID=\"GPU-%d\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"dgx-1\"%s} 50\n", g, g, pod)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(doc)) }))
	defer srv.Close()
	capture, _ := os.ReadFile("../hwtopo/testdata/topo-dgxa100.txt")
	topo := filepath.Join(t.TempDir(), "topo.txt")
	if err := os.WriteFile(topo, []byte(strings.ReplaceAll(string(capture), "NV12", "NV18")), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "p.json")
	r := run(t, nil, "profile", "--source", "scrape", "--targets", srv.URL+"/metrics", "--interval", "100ms", "--duration", "0.3",
		"--topology-file", "dgx-1="+topo, "--output", out, "--quiet")
	if r.code != 0 {
		t.Fatal(r.errOut)
	}
	p := readProfile(t, out)
	tp := p.Nodes[0].Topology
	if tp == nil || tp.Matrix[0][7] != "NV18" || tp.NVLinkGBps[0][7] != 18*26.562 || len(tp.Host.NUMANodes) != 2 {
		t.Fatalf("topology %+v", tp)
	}
	r = run(t, nil, "analyze", out, "--format", "json")
	if !strings.Contains(r.out, `"kind": "pack-numa"`) || !strings.Contains(r.out, "ml/llama-70b-infer-0's 2 GPUs (3, 4) sit on NUMA nodes 0, 1") {
		t.Fatalf("no pack-numa suggestion:\n%s", r.out)
	}
	r = run(t, nil, "profile", "--source", "scrape", "--targets", srv.URL+"/metrics", "--interval", "100ms", "--duration", "0.1",
		"--topology-file", "other="+topo, "--output", out, "--quiet")
	if r.code != 0 || !strings.Contains(r.errOut, "matched no node") {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
}
