package render

import (
	"bytes"
	"context"
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/report"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/internal/testkit/golden"
	"github.com/seedance/seedance/internal/testkit/schematest"
	"github.com/seedance/seedance/pricing"
	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/recommend"
	"github.com/seedance/seedance/source/sim"
)

// simReport analyzes five simulated minutes of the mixed 8-node cluster.
func simReport(t *testing.T, dialect string) *report.Result {
	return simReportWith(t, dialect, false)
}

// simReportWith adds the scaling, migration, attribution and fragmentation
// sections when all is set.
func simReportWith(t *testing.T, dialect string, all bool) *report.Result {
	t.Helper()
	return simScenarioReport(t, sim.ScenarioMixed, dialect, all)
}

// simScenarioReport is simReportWith on a scenario of the simulator.
func simScenarioReport(t *testing.T, scenario, dialect string, all bool) *report.Result {
	t.Helper()
	p, err := sim.Record(sim.Options{Nodes: 8, Scenario: scenario, Seed: 1}, time.Second, 300*time.Second, profile.Generator{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := profile.Encode(&b, p); err != nil {
		t.Fatal(err)
	}
	s, err := profile.OpenStream(&b, "sim.json")
	if err != nil {
		t.Fatal(err)
	}
	params := analyze.DefaultParams()
	if all {
		sp := analyze.DefaultScaling()
		params.Scaling = &sp
		params.KeepFleet = true
		params.Attribution = &analyze.AttributionParams{GroupBy: []string{"namespace", "controller"}}
		params.Fragmentation = true
	}
	r, err := analyze.Analyze(context.Background(), []analyze.Source{{Name: "sim.json", Stream: s}}, params)
	if err != nil {
		t.Fatal(err)
	}
	res := report.New(r)
	recommend.Commands(res.Suggestions, r, dialect)
	if all {
		pricer := pricing.New(nil, pricing.DefaultGPUHourUSD)
		price := pricer.NodePrice
		plan, sugs, err := recommend.PlanReport(context.Background(), r, price, recommend.Options{})
		res.Add("no migration plan", sugs, err)
		res.Migration = plan
		f, sugs, err := recommend.FragmentReport(context.Background(), r, price, recommend.Options{}, res.Migration, recommend.FragmentOptions{ThresholdRatio: recommend.DefaultFragmentationRatio})
		res.Add("no fragmentation report", sugs, err)
		res.Fragmentation = f
	}
	return res
}

func render(t *testing.T, format string, r *report.Result, o Options) []byte {
	t.Helper()
	f, err := For(format)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := f(&b, r, o); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestGoldenFormats(t *testing.T) {
	r := simReport(t, recommend.DialectKubectl)
	for _, tt := range []struct {
		format, file string
		o            Options
	}{
		{"table", "report-sim.txt", Options{Report: "cost-savings"}},
		{"table", "report-sim-terminal.txt", Options{Report: "all", Terminal: true}},
		{"table", "report-sim-idle.txt", Options{Report: "idle"}},
		{"table", "report-sim-utilization.txt", Options{Report: "utilization"}},
		{"json", "report-sim.json", Options{}},
		{"markdown", "report-sim.md", Options{Report: "cost-savings"}},
		{"csv", "report-sim.csv", Options{}},
		{"prom", "report-sim.prom", Options{}},
	} {
		t.Run(tt.file, func(t *testing.T) {
			golden.Check(t, "testdata/"+tt.file, render(t, tt.format, r, tt.o))
		})
	}
}

func TestJSONConformsToSchema(t *testing.T) {
	r := simReport(t, recommend.DialectSlurm)
	r.SetBaseline(&report.Baseline{Summary: r.Summary})
	var err error
	if r.Gates, err = report.Gates(r, []string{"summary.idle_ratio <= 0.2", "delta.idle_cost_usd == 0"}); err == nil {
		t.Fatal("the idle-ratio gate should fail on the mixed cluster")
	}
	schematest.Validate(t, "report-v1.schema.json", render(t, "json", r, Options{}))
	// Figures that were not measured are null, and the schema says they
	// may be; every human format writes them as n/a, never 0.
	r.Summary.AvgMemBWUtilPct, r.Summary.AvgGPUUtilPct = nil, nil
	r.Nodes[0].AvgGPUUtilPct, r.Nodes[0].IdleShare = nil, nil
	r.Summary.Notes = []string{"a note"}
	out := render(t, "json", r, Options{})
	schematest.Validate(t, "report-v1.schema.json", out)
	if !bytes.Contains(out, []byte(`"avg_mem_bw_util_pct": null`)) {
		t.Error("null not written as null")
	}
	for _, f := range []string{"table", "markdown", "csv", "html"} {
		if got := string(render(t, f, r, Options{Report: "all"})); !strings.Contains(got, "n/a") {
			t.Errorf("%s shows no n/a for a null figure", f)
		}
	}
}

func TestPromParses(t *testing.T) {
	r := simReport(t, recommend.DialectKubectl)
	out := render(t, "prom", r, Options{})
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("prom output does not parse: %v", err)
	}
	f := fams["seedance_idle_cost_usd"]
	if f == nil || f.Metric[0].Gauge.GetValue() != *r.Summary.IdleCostUSD {
		t.Fatalf("seedance_idle_cost_usd = %v", f)
	}
	if n := len(fams["seedance_node_idle_cost_usd"].Metric); n != 8 {
		t.Fatalf("%d node series", n)
	}
}

func TestCSVRows(t *testing.T) {
	r := simReport(t, recommend.DialectKubectl)
	rows, err := csv.NewReader(bytes.NewReader(render(t, "csv", r, Options{}))).ReadAll()
	if err != nil || len(rows) != 10 || rows[0][0] != "node" || rows[9][0] != "(total)" {
		t.Fatalf("rows %d err %v", len(rows), err)
	}
	r.SetBaseline(&report.Baseline{Summary: r.Summary})
	rows, _ = csv.NewReader(bytes.NewReader(render(t, "csv", r, Options{}))).ReadAll()
	if len(rows) != 11 || rows[10][0] != "(delta vs baseline)" || rows[10][7] != "0" {
		t.Fatalf("delta row %v", rows[len(rows)-1])
	}
}

// TestSpreadInEveryFormat: the nodes' utilization variance, and its change
// against a baseline, is in every format (CSV on its total and delta rows).
func TestSpreadInEveryFormat(t *testing.T) {
	r := simReport(t, recommend.DialectKubectl)
	base := *r.Report
	v := 0.02
	base.Summary.NodeUtilVariance = &v
	r.SetBaseline(&report.Baseline{Summary: base.Summary})
	want := num(*r.Summary.NodeUtilVariance)
	wantDelta := num(r.Delta["node_util_variance"])
	if r.Delta["node_util_variance"] == 0 {
		t.Fatal("no variance delta against a baseline of 0.02")
	}
	for _, f := range []string{"table", "markdown", "html", "json", "yaml", "prom", "csv"} {
		out := string(render(t, f, r, Options{}))
		if !strings.Contains(out, "variance") {
			t.Errorf("%s: no variance", f)
		}
	}
	rows, _ := csv.NewReader(bytes.NewReader(render(t, "csv", r, Options{}))).ReadAll()
	head, total, delta := rows[0], rows[len(rows)-2], rows[len(rows)-1]
	if head[len(head)-1] != "node_util_variance" || total[len(total)-1] != want || delta[len(delta)-1] != wantDelta || rows[1][len(head)-1] != "" {
		t.Fatalf("csv variance column: head %q total %q delta %q node %q; want %s and %s",
			head[len(head)-1], total[len(total)-1], delta[len(delta)-1], rows[1][len(head)-1], want, wantDelta)
	}
}

func TestHostileNames(t *testing.T) {
	r := report.New(&analyze.Report{SchemaVersion: analyze.ReportSchema, Nodes: []analyze.NodeReport{
		{Name: "=cmd|' /C calc'!A0", GPUs: 1, Models: []string{"H100"}, Verdict: "idle"},
		{Name: "n|<script>alert(1)</script>", GPUs: 1, Models: []string{"`x`"}, Verdict: "idle"},
	}})
	csvOut := string(render(t, "csv", r, Options{}))
	if !strings.Contains(csvOut, "'=cmd") {
		t.Errorf("formula not neutralised: %s", csvOut)
	}
	md := string(render(t, "markdown", r, Options{Report: "all"}))
	if strings.Contains(md, "<script>") || !strings.Contains(md, `n\|&lt;script&gt;`) {
		t.Errorf("markdown not escaped: %s", md)
	}
	pp := expfmt.NewTextParser(model.UTF8Validation)
	if _, err := pp.TextToMetricFamilies(bytes.NewReader(render(t, "prom", r, Options{}))); err != nil {
		t.Errorf("prom with hostile labels does not parse: %v", err)
	}
}

func TestMoneyAndSparkline(t *testing.T) {
	for v, want := range map[float64]string{0: "$0.00", 9.345: "$9.35", 1234567.891: "$1,234,567.89", -1500: "-$1,500.00", 999.999: "$1,000.00"} {
		if got := money(v); got != want {
			t.Errorf("money(%v) = %s, want %s", v, got, want)
		}
	}
	v := func(x float64) *float64 { return &x }
	if got := Sparkline([]*float64{v(0), v(50), nil, v(100)}); got != "▁▅ █" {
		t.Errorf("sparkline %q", got)
	}
}

// TestAttributionSections: the attribution section in table, Markdown and
// CSV, with hostile group names kept inert.
func TestAttributionSections(t *testing.T) {
	eff := 0.25
	f := analyze.AttributionFigures{HeldGPUHours: 2, UsedGPUHours: 0.5, IdleHeldGPUHours: 1, WasteCostUSD: 3.5, Efficiency: &eff}
	r := report.New(&analyze.Report{SchemaVersion: analyze.ReportSchema, Attribution: &analyze.Attribution{
		GroupBy:     []string{"team=team"},
		Groups:      []analyze.AttributionGroup{{Key: []string{"=cmd|<b>x</b>\x1b[31m"}, Workloads: 2, AttributionFigures: f}},
		Unallocated: f, Total: f,
	}})
	o := Options{Report: "attribution"}
	table := string(render(t, "table", r, o))
	if !strings.Contains(table, "Attribution by team=team") || strings.Contains(table, "\x1b") || !strings.Contains(table, "$3.50") || !strings.Contains(table, "25%") {
		t.Errorf("table:\n%s", table)
	}
	md := string(render(t, "markdown", r, o))
	if strings.Contains(md, "<b>") || !strings.Contains(md, `=cmd\|&lt;b&gt;`) {
		t.Errorf("markdown:\n%s", md)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(render(t, "prom", r, o)))
	waste := fams["seedance_attribution_waste_usd"]
	if err != nil || waste == nil || len(waste.Metric) != 2 || waste.Metric[1].Label[0].GetName() != "team" || waste.Metric[1].Label[0].GetValue() != `=cmd|<b>x</b>\x1b[31m` {
		t.Fatalf("prom: %v %v", err, waste)
	}
	csvOut := render(t, "csv", r, o)
	rows, err := csv.NewReader(bytes.NewReader(csvOut)).ReadAll()
	if err != nil || len(rows) != 4 || rows[0][0] != "team=team" || rows[1][0] != `'=cmd|<b>x</b>\x1b[31m` || rows[2][0] != "(unallocated)" || rows[3][6] != "3.5" {
		t.Fatalf("csv %q %v", rows, err)
	}
	for format, out := range map[string][]byte{"csv": csvOut, "prom": render(t, "prom", r, o)} {
		if bytes.ContainsAny(out, "\x1b\x00") {
			t.Errorf("%s holds a raw control character:\n%q", format, out)
		}
	}
}
