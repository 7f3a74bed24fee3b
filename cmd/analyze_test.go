package cmd

import (
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seedance/seedance/internal/exit"
	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/report"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/internal/testkit/schematest"
)

// simProfile writes a simulated profile and returns its path.
func simProfile(t *testing.T, args ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "p.json")
	r := run(t, nil, append([]string{"profile", "--source", "sim", "--quiet", "--output", path}, args...)...)
	if r.code != 0 {
		t.Fatal(r.errOut)
	}
	return path
}

func TestAnalyzeEndToEnd(t *testing.T) {
	p := simProfile(t)
	// The done-when command of issue #3 prints a report a person can read.
	r := run(t, nil, "analyze", "--input", p, "--report", "cost-savings")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	for _, want := range []string{"seedance cost-savings report", "projected", "extrapolated from 5m observed", "node-gpu-08", "release it", "kubectl drain node-gpu-08 --ignore-daemonsets --timeout=300s || { kubectl uncordon node-gpu-08; false; }"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("report lacks %q:\n%s", want, r.out)
		}
	}
	// JSON to a file, valid against the schema, numbers as in the table.
	out := filepath.Join(t.TempDir(), "report.json")
	r = run(t, nil, "analyze", p, "--format", "json", "--report", "all", "--output", out)
	if r.code != 0 || r.out != "" {
		t.Fatalf("exit %d, stdout %q: %s", r.code, r.out, r.errOut)
	}
	b, _ := os.ReadFile(out)
	schematest.Validate(t, "report-v1.schema.json", b)
	var rep analyze.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Summary.Nodes != 8 || rep.Summary.GPUs != 64 || rep.Summary.IdleNodes < 1 {
		t.Fatalf("summary %+v", rep.Summary)
	}
	// The HTML page, written atomically like every format.
	page := filepath.Join(t.TempDir(), "report.html")
	if r := run(t, nil, "analyze", p, "--format", "html", "--output", page); r.code != 0 {
		t.Fatal(r.errOut)
	}
	if b, _ := os.ReadFile(page); !strings.HasPrefix(string(b), "<!DOCTYPE html>") || !strings.Contains(string(b), `id="chart-heatmap"`) {
		t.Fatalf("not the HTML report: %.200s", b)
	}
}

func TestAnalyzeStdinAndGzip(t *testing.T) {
	p := simProfile(t)
	raw, _ := os.ReadFile(p)
	gz := filepath.Join(t.TempDir(), "p.json.gz")
	f, _ := os.Create(gz)
	zw := gzip.NewWriter(f)
	_, _ = zw.Write(raw)
	zw.Close()
	f.Close()
	a := run(t, nil, "analyze", gz, "--format", "csv")
	f2, get := testFactory(t, nil)
	f2.IO.In = strings.NewReader(string(raw))
	code := Run(t.Context(), f2, []string{"analyze", "-", "--format", "csv"})
	b := get()
	if a.code != 0 || code != 0 || a.out != b.out || !strings.HasPrefix(a.out, "node,gpus") {
		t.Fatalf("gzip %d / stdin %d differ:\n%s\n%s\n%s", a.code, code, a.out, b.out, a.errOut+b.errOut)
	}
}

func TestAnalyzeBadInput(t *testing.T) {
	dir := t.TempDir()
	good, _ := os.ReadFile(simProfile(t, "--duration", "5", "--sim-nodes", "1"))
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	doc := string(good)
	tests := []struct {
		name, path, want string
	}{
		{"missing", filepath.Join(dir, "nope.json"), "nope.json"},
		{"empty", write("empty.json", ""), "empty input"},
		{"truncated", write("trunc.json", doc[:len(doc)/2]), "truncated JSON"},
		{"wrong version", write("v2.json", strings.Replace(doc, "profile/v1", "profile/v2", 1)), "major version 2"},
		{"mismatched lengths", write("len.json", strings.Replace(doc, `"gpu_util_pct":[`, `"gpu_util_pct":[1,`, 1)), "gpu_util_pct has 6 values but series.t has 5"},
		{"negative", write("neg.json", replaceFirstValue(doc, "-3")), "negative"},
		{"NaN", write("nan.json", strings.Replace(doc, `"gpu_util_pct":[`, `"gpu_util_pct":[NaN,`, 1)), "invalid character 'N'"},
		{"not ascending", write("t.json", strings.Replace(doc, `"t":[0,1,2`, `"t":[0,2,1`, 1)), "not ascending"},
		{"not json", write("x.json", "hello"), "JSON syntax error at byte 0"},
		{"empty profile", write("nonodes.json", `{"schema_version":"seedance.profile/v1","started_at":"2026-01-05T09:00:00Z","ended_at":"2026-01-05T09:00:00Z","interval_s":1,"nodes":[]}`), "no GPU samples in"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, nil, "analyze", tt.path)
			if r.code != exit.Usage || strings.Count(r.errOut, "\n") != 1 || !strings.Contains(r.errOut, tt.want) {
				t.Fatalf("exit %d, stderr %q, want one line with %q", r.code, r.errOut, tt.want)
			}
		})
	}
}

func TestAnalyzeGatesAndBaseline(t *testing.T) {
	idle := simProfile(t, "--sim-scenario", "idle", "--sim-nodes", "2")
	busy := simProfile(t, "--sim-scenario", "busy", "--sim-nodes", "2")
	base := filepath.Join(t.TempDir(), "base.json")
	if r := run(t, nil, "analyze", idle, "--format", "json", "-o", base); r.code != 0 {
		t.Fatal(r.errOut)
	}
	// Passing gates: exit 0, each result printed.
	r := run(t, nil, "analyze", busy, "--baseline", base, "--gate", "summary.idle_ratio <= 0.2", "--gate", "delta.avg_gpu_util_pct >= -5")
	if r.code != 0 || !strings.Contains(r.errOut, "gate PASS: summary.idle_ratio <= 0.2") || !strings.Contains(r.errOut, "gate PASS: delta.avg_gpu_util_pct >= -5") {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	if !strings.Contains(r.out, "vs baseline") {
		t.Errorf("table lacks the baseline delta:\n%s", r.out)
	}
	// A failing gate: exit 3, and the report is still written.
	out := filepath.Join(t.TempDir(), "r.json")
	r = run(t, nil, "analyze", idle, "--baseline", base, "--format", "json", "-o", out, "--gate", "summary.avg_gpu_util_pct >= 60", "--gate", "summary.gpus == 16")
	if r.code != exit.GateFailed || !strings.Contains(r.errOut, "gate FAIL: summary.avg_gpu_util_pct >= 60") || !strings.Contains(r.errOut, "1 of 2 gates failed") {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	var rep struct {
		Gates []report.Gate      `json:"gates"`
		Delta map[string]float64 `json:"delta"`
	}
	b, _ := os.ReadFile(out)
	if err := json.Unmarshal(b, &rep); err != nil || len(rep.Gates) != 2 || rep.Delta["idle_cost_usd"] != 0 {
		t.Fatalf("report gates %+v delta %v (%v)", rep.Gates, rep.Delta, err)
	}
	// A gate that does not compile, names no field, or uses delta without a
	// baseline is a usage error.
	for _, g := range []string{"summary.idle_ratio <=", "summary.no_such_field > 1", "delta.idle_ratio < 0"} {
		if r := run(t, nil, "analyze", idle, "--gate", g); r.code != exit.Usage || !strings.Contains(r.errOut, "invalid gate") {
			t.Errorf("gate %q: exit %d %s", g, r.code, r.errOut)
		}
	}
	// A baseline that is not a report.
	if r := run(t, nil, "analyze", idle, "--baseline", idle); r.code != exit.Usage || !strings.Contains(r.errOut, `schema_version "`+profile.SchemaVersion+`", want "seedance.report/v1"`) {
		t.Errorf("bad baseline: exit %d %s", r.code, r.errOut)
	}
}

func TestAnalyzeFlagsAndConfig(t *testing.T) {
	p := simProfile(t, "--sim-nodes", "1", "--sim-scenario", "idle")
	cfg := writeConfig(t, "pricing:\n  gpu_hour_usd:\n    H100: 2.0\n  energy_usd_per_kwh: 0.30\nanalyze:\n  idle_window: 120\n")
	r := run(t, map[string]string{"SEEDANCE_CONFIG": cfg}, "analyze", p, "--format", "json", "--gpu-price", "h100 80gb=3.5")
	var rep analyze.Report
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil {
		t.Fatal(err, r.errOut)
	}
	if rep.Params.Prices["h100 80gb"] != 3.5 || rep.Params.Prices["h100"] != 2.0 || rep.Params.EnergyUSDPerKWh != 0.30 || rep.Params.IdleWindowS != 120 {
		t.Fatalf("params %+v", rep.Params)
	}
	// 8 H100s idle for 300 s at the flag's $3.50: 8 × 300/3600 × 3.5.
	if got, want := *rep.Summary.IdleCostUSD, 8*300.0/3600*3.5; got < want*0.999 || got > want*1.001 {
		t.Fatalf("idle cost %v, want %v", got, want)
	}
	for _, args := range [][]string{
		{"analyze"},
		{"analyze", p, "--format", "toml"},
		{"analyze", p, "--report", "everything"},
		{"analyze", p, "--dialect", "ansible"},
		{"analyze", p, "--gpu-price", "H100"},
		{"analyze", p, "--gpu-price", "H100=1e-320"}, // below a cent: +Inf and NaN before
		{"analyze", p, "--default-gpu-price", "0.001"},
		{"analyze", p, "--idle-threshold", "150"},
		{"analyze", p, "--slurm-queues", "partition"},
	} {
		if r := run(t, nil, args...); r.code != exit.Usage || strings.Count(r.errOut, "\n") != 1 {
			t.Errorf("%v: exit %d %q", args, r.code, r.errOut)
		}
	}
}

func TestAnalyzeOutputIsAtomic(t *testing.T) {
	out := filepath.Join(t.TempDir(), "report.txt")
	if err := os.WriteFile(out, []byte("last week's report"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, nil, "analyze", filepath.Join(t.TempDir(), "missing.json"), "-o", out)
	if r.code != exit.Usage {
		t.Fatal(r.errOut)
	}
	if b, _ := os.ReadFile(out); string(b) != "last week's report" {
		t.Fatal("a failed analyze changed the existing report")
	}
}

// replaceFirstValue replaces the first value of the first gpu_util_pct column.
func replaceFirstValue(doc, v string) string {
	i := strings.Index(doc, `"gpu_util_pct":[`) + len(`"gpu_util_pct":[`)
	j := i + strings.IndexAny(doc[i:], ",]")
	return doc[:i] + v + doc[j:]
}

// TestAnalyzeFragmentation: the fragmented scenario's pool is above the
// default threshold and gets a suggestion; --fragmentation-ratio moves the
// threshold, and a gate on the pool fails the run (exit 3).
func TestAnalyzeFragmentation(t *testing.T) {
	p := simProfile(t, "--sim-scenario", "fragmented")
	r := run(t, nil, "analyze", p, "--report", "fragmentation")
	if r.code != 0 || !strings.Contains(r.out, "6 of its 13 free GPUs are stranded (fragmentation ratio 0.46, above 0.35)") {
		t.Fatalf("exit %d:\n%s%s", r.code, r.out, r.errOut)
	}
	r = run(t, nil, "analyze", p, "--report", "fragmentation", "--fragmentation-ratio", "0.5", "--format", "csv")
	if r.code != 0 || !strings.Contains(r.out, "NVIDIA H100 80GB HBM3,8,64,13,6,0.461538462,") {
		t.Fatalf("exit %d:\n%s%s", r.code, r.out, r.errOut)
	}
	r = run(t, nil, "analyze", p, "--report", "fragmentation", "--fragmentation-ratio", "0.5")
	if strings.Contains(r.out, "are stranded") {
		t.Errorf("a suggestion under the threshold:\n%s", r.out)
	}
	r = run(t, nil, "analyze", p, "--report", "fragmentation", "--gate", "fragmentation.pool['NVIDIA H100 80GB HBM3'].ratio <= 0.35")
	if r.code != 3 {
		t.Errorf("gate on the pool: exit %d: %s", r.code, r.errOut)
	}
	if r := run(t, nil, "analyze", p, "--fragmentation-ratio", "2"); r.code != 2 {
		t.Errorf("a ratio above 1: exit %d: %s", r.code, r.errOut)
	}
}

// TestAnalyzeRules: rules from a --rules file and from the config file
// become suggestions, narrow a built-in one and fail a gate; a bad rule is
// one line naming the file, line and rule, exit 2, before anything is read.
func TestAnalyzeRules(t *testing.T) {
	p := simProfile(t)
	dir := t.TempDir()
	rules := filepath.Join(dir, "rules.yaml")
	write := func(path, text string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(rules, `rules:
  - name: dip
    when: util_pct < 20
    for: 4m
    severity: critical
    suggest:
      text: "{name} under 20% for {held}"
      command: "kubectl annotate node {name} seedance.io/dip={held}"
  - name: release-node
    when: price_usd_per_hour > 100
`)
	r := run(t, nil, "analyze", p, "--rules", rules)
	if r.code != 0 || !strings.Contains(r.out, "[critical] node-gpu-08 under 20% for 5m") || !strings.Contains(r.out, "$ kubectl annotate node node-gpu-08 seedance.io/dip=5m") ||
		strings.Contains(r.out, "kubectl cordon") {
		t.Fatalf("exit %d:\n%s%s", r.code, r.out, r.errOut)
	}
	if r := run(t, nil, "analyze", p, "--rules", rules, "--gate", "rule_matches['dip'] == 0"); r.code != 3 {
		t.Errorf("gate on a rule: exit %d: %s", r.code, r.errOut)
	}
	cfg := filepath.Join(dir, "seedance.yaml")
	write(cfg, "analyze:\n  dialect: none\nrules:\n  - name: dip\n    when: util_pct < 20\n    suggest: {text: \"{name} dips\", command: \"echo {name}\"}\n")
	r = run(t, nil, "--config", cfg, "analyze", p, "--format", "json")
	if r.code != 0 || !strings.Contains(r.out, `"kind": "rule:dip"`) || strings.Contains(r.out, `"command": "echo`) {
		t.Fatalf("config rules: exit %d:\n%.2000s%s", r.code, r.out, r.errOut)
	}
	write(rules, "rules:\n  - name: dip\n    when: util_pct < 20 &&\n    suggest: {text: t}\n")
	r = run(t, nil, "analyze", p, "--rules", rules)
	if r.code != 2 || !strings.Contains(r.errOut, rules+`:2: rule "dip": when: unexpected token EOF`) || strings.Count(strings.TrimSpace(r.errOut), "\n") != 0 {
		t.Errorf("bad rule: exit %d: %q", r.code, r.errOut)
	}
	if r := run(t, nil, "analyze", p, "--rules", filepath.Join(dir, "missing.yaml")); r.code != 2 || !strings.Contains(r.errOut, "missing.yaml") {
		t.Errorf("missing rules file: exit %d: %q", r.code, r.errOut)
	}
}
