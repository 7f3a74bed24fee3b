package render

import (
	"bytes"
	"errors"
	"html"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/testkit/engine"
	"github.com/seedance/seedance/recommend"
	"github.com/seedance/seedance/report"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// TestPromtoolFindsNothing runs promtool check metrics, the linter users
// run on textfile-collector files, over the report with a baseline and
// gates: base units, HELP texts and state series must leave it nothing to
// say.
func TestPromtoolFindsNothing(t *testing.T) {
	engine.SkipShort(t, "runs promtool")
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("promtool is not installed (.ci/run installs it)")
		}
		t.Skip("needs promtool on PATH (Debian: apt-get install prometheus; or run bash .ci/run)")
	}
	r := simReport(t, recommend.DialectKubectl)
	r.SetBaseline(&report.Baseline{Summary: simReport(t, recommend.DialectKubectl).Summary})
	// A failed gate is what this report should carry.
	if r.Gates, err = report.Gates(r, []string{"summary.idle_ratio <= 0.2"}); !errors.Is(err, report.ErrGateFailed) {
		t.Fatalf("gate: %v", err)
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(render(t, "prom", r, Options{}))
	out, err := cmd.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) != 0 {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
	// It does find problems: a percentage in hours is reported.
	cmd = exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader("# HELP seedance_idle_gpu_hours x\n# TYPE seedance_idle_gpu_hours gauge\nseedance_idle_gpu_hours 1\n")
	if out, err := cmd.CombinedOutput(); err == nil && len(out) == 0 {
		t.Fatal("promtool found nothing in a metric named in hours: the check cannot fail")
	}
}

// TestPromUnitsAndStates: figures in base units, one 0/1 series per verdict
// state, and a null figure left out rather than written as 0.
func TestPromUnitsAndStates(t *testing.T) {
	r := simReport(t, recommend.DialectKubectl)
	r.Summary.AvgMemBWUtilPct = nil
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(render(t, "prom", r, Options{})))
	if err != nil {
		t.Fatal(err)
	}
	gauge := func(name string) float64 {
		f := fams[name]
		if f == nil {
			t.Fatalf("no %s", name)
		}
		return f.Metric[0].Gauge.GetValue()
	}
	near := func(name string, got, want float64) {
		if d := got - want; d > 1e-9*want || d < -1e-9*want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	near("idle_gpu_seconds", gauge("seedance_idle_gpu_seconds"), *r.Summary.IdleGPUHours*3600)
	near("gpu_utilization_ratio", gauge("seedance_gpu_utilization_ratio"), *r.Summary.AvgGPUUtilPct/100)
	near("energy_joules", gauge("seedance_energy_joules"), *r.Summary.EnergyKWh*3.6e6)
	if _, ok := fams["seedance_memory_bandwidth_utilization_ratio"]; ok {
		t.Error("a null figure was written")
	}
	states := map[string]map[string]float64{}
	for _, m := range fams["seedance_node_verdict"].Metric {
		var node, verdict string
		for _, l := range m.Label {
			switch l.GetName() {
			case "node":
				node = l.GetValue()
			case "verdict":
				verdict = l.GetValue()
			}
		}
		if states[node] == nil {
			states[node] = map[string]float64{}
		}
		states[node][verdict] = m.Gauge.GetValue()
	}
	for _, n := range r.Nodes {
		s := states[n.Name]
		sum := 0.0
		for _, v := range s {
			sum += v
		}
		if len(s) != 5 || sum != 1 || s[n.Verdict] != 1 {
			t.Errorf("node %s (%s): states %v", n.Name, n.Verdict, s)
		}
	}
}

// TestWindowAndMoneyText: a window over days shows the end's date and the
// covered time; money deltas are money.
func TestWindowAndMoneyText(t *testing.T) {
	r := simReport(t, recommend.DialectKubectl)
	base := simReport(t, recommend.DialectKubectl)
	*base.Summary.IdleCostUSD -= 97577.54
	r.SetBaseline(&report.Baseline{Summary: base.Summary})
	r.Window.End = r.Window.Start.Add(25 * time.Hour)
	r.Window.DurationS, r.Window.CoveredS = 25*3600, 2*3600
	for _, f := range []string{"table", "markdown", "html"} {
		out := html.UnescapeString(string(render(t, f, r, Options{})))
		for _, want := range []string{"2026-01-05 09:00", "→ 2026-01-06 10:00", "(25h00m, 2h00m observed)", "+$97,577.54", "extrapolated from 2h00m observed"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s lacks %q", f, want)
			}
		}
	}
}
