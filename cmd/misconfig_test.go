package cmd

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seedance/seedance/internal/exit"

	"github.com/seedance/seedance/internal/testkit/dcgmtest"
	"github.com/seedance/seedance/internal/testkit/promtest"
	"github.com/seedance/seedance/profile"
)

// summaryOf decodes the figures a cost gate reads from a JSON report.
func summaryOf(t *testing.T, out string) map[string]any {
	t.Helper()
	var rep struct {
		Summary map[string]any `json:"summary"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v: %.300s", err, out)
	}
	return rep.Summary
}

// TestStepBelowScrapeInterval (#25, case 1): data scraped every 30 s read
// with --step 10s, auto, 30s or 60s gives the same idle GPU-hours and cost:
// each target's spacing is measured on its samples. A --step the data
// contradicts is noted.
func TestStepBelowScrapeInterval(t *testing.T) {
	sim, err := profile.ReadFile(simProfile(t, "--interval", "30s", "--duration", "20m", "--sim-nodes", "4"), nil)
	if err != nil {
		t.Fatal(err)
	}
	var om bytes.Buffer
	if err := dcgmtest.WriteOpenMetrics(&om, sim); err != nil {
		t.Fatal(err)
	}
	srv := promtest.Start(t, om.Bytes())
	var first map[string]any
	for _, step := range []string{"auto", "10s", "30s", "60s"} {
		path := filepath.Join(t.TempDir(), "p.json")
		r := run(t, nil, "profile", "--source", "prometheus", "--prometheus-url", srv.URL, "--start", "2026-01-05T09:00:00Z",
			"--end", "2026-01-05T09:20:00Z", "--step", step, "-o", path, "--quiet")
		if r.code != 0 {
			t.Fatalf("--step %s: %s", step, r.errOut)
		}
		p, err := profile.ReadFile(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if p.IntervalS != 30 || p.Nodes[0].GPUs[0].IntervalS != 30 {
			t.Errorf("--step %s: interval_s %v, GPU's %v, want the measured 30", step, p.IntervalS, p.Nodes[0].GPUs[0].IntervalS)
		}
		noted := strings.Contains(strings.Join(p.Notes, "\n"), "is not the scrape interval measured on the data (30s on 4 targets)")
		if contradicts := step == "10s" || step == "60s"; noted != contradicts {
			t.Errorf("--step %s: noted %v, notes %q", step, noted, p.Notes)
		}
		a := run(t, nil, "analyze", path, "-f", "json")
		if a.code != 0 {
			t.Fatal(a.errOut)
		}
		s := summaryOf(t, a.out)
		if first == nil {
			first = s
			if h, _ := s["idle_gpu_hours"].(float64); h <= 0 {
				t.Fatalf("nothing idle proves nothing: %v", s)
			}
			continue
		}
		for _, k := range []string{"idle_gpu_hours", "idle_cost_usd", "idle_ratio", "gpu_hours", "energy_kwh"} {
			if s[k] != first[k] {
				t.Errorf("--step %s: %s = %v, with auto %v", step, k, s[k], first[k])
			}
		}
	}
	if r := run(t, nil, "profile", "--source", "prometheus", "--prometheus-url", srv.URL, "--duration", "1h", "--step", "soon"); r.code != exit.Usage || !strings.Contains(r.errOut, `--step "soon" is not auto or a duration`) {
		t.Errorf("--step soon: exit %d %s", r.code, r.errOut)
	}
}

// TestSelectorDroppingKubeStateMetrics (#25, case 4): a --selector on
// dcgm-exporter's job drops kube-state-metrics' series; the profile says
// pending work is unknown, and neither analyze nor recommend offers a
// drain or release command (the report says why). Without the selector,
// the same data gets its drain commands.
func TestSelectorDroppingKubeStateMetrics(t *testing.T) {
	sim, err := profile.ReadFile(simProfile(t, "--interval", "15s", "--duration", "10m"), nil)
	if err != nil {
		t.Fatal(err)
	}
	var om bytes.Buffer
	if err := dcgmtest.WriteOpenMetricsLayout(&om, sim, dcgmtest.LayoutKubePrometheus); err != nil {
		t.Fatal(err)
	}
	srv := promtest.Start(t, om.Bytes())
	read := func(selector string) string {
		path := filepath.Join(t.TempDir(), "p.json")
		args := []string{"profile", "--source", "prometheus", "--prometheus-url", srv.URL, "--start", "2026-01-05T09:00:00Z",
			"--end", "2026-01-05T09:10:00Z", "-o", path, "--quiet"}
		if selector != "" {
			args = append(args, "--selector", selector)
		}
		if r := run(t, nil, args...); r.code != 0 {
			t.Fatal(r.errOut)
		}
		return path
	}
	whole, narrowed := read(""), read(`{job="nvidia-dcgm-exporter"}`)
	if p, _ := profile.ReadFile(whole, nil); p.PendingUnknown != "" {
		t.Fatalf("with kube-state-metrics: pending_unknown %q", p.PendingUnknown)
	}
	p, err := profile.ReadFile(narrowed, nil)
	if err != nil || !strings.Contains(p.PendingUnknown, `no kube-state-metrics series (kube_pod_info) match {job="nvidia-dcgm-exporter"}`) {
		t.Fatalf("pending_unknown %q %v", p.PendingUnknown, err)
	}
	if r := run(t, nil, "analyze", whole, "--report", "cost-savings"); r.code != 0 || !strings.Contains(r.out, "kubectl drain") {
		t.Fatalf("with kube-state-metrics, no drain: exit %d\n%s", r.code, r.out)
	}
	r := run(t, nil, "analyze", narrowed, "--report", "all", "-f", "json")
	if r.code != 0 || strings.Contains(r.out, "kubectl drain") || strings.Contains(r.out, "kubectl cordon") {
		t.Fatalf("a drain without pending data: exit %d\n%s", r.code, r.out)
	}
	for _, want := range []string{`"pending_unknown"`, "no command: the work waiting for GPUs is unknown", `"refused"`} {
		if !strings.Contains(r.out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	rec := run(t, nil, "recommend", "-i", narrowed)
	if rec.code != 0 || strings.Contains(rec.out, "run kubectl cordon") || !strings.Contains(rec.errOut, "the work waiting for GPUs is unknown") {
		t.Errorf("recommend: exit %d\n%s\n%s", rec.code, rec.out, rec.errOut)
	}
}

// TestWrapWithoutGPU (#25, case 9): on a runner without a GPU, profile --
// CMD exits 2 without running the command, and the one line says so and
// where the recipe is.
func TestWrapWithoutGPU(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	r := run(t, nil, "profile", "-o", filepath.Join(dir, "out.json"), "--", "touch", marker)
	if r.code != exit.Usage {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the command ran")
	}
	line := strings.TrimSpace(r.errOut)
	if strings.Contains(line, "\n") || !strings.Contains(line, "NVML library not found") || !strings.Contains(line, "touch was not run") || !strings.Contains(line, "docs/ci.md") {
		t.Errorf("message %q", line)
	}
}
