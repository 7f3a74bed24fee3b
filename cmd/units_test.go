package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/seedance/seedance/internal/testkit/dcgmtest"
	"github.com/seedance/seedance/internal/testkit/promtest"
	"github.com/seedance/seedance/profile"
)

// unitSections are a JSON report's unit figures.
type unitSections struct {
	Units         map[string]map[string]any `json:"units"`
	UnitGroups    []map[string]any          `json:"unit_groups"`
	UnitWorkloads []map[string]any          `json:"unit_workloads"`
}

// TestUnitsFromEnginesEqualTheFile: the simulator's serving pods' vLLM
// counters, written beside dcgm-exporter's series into a real Prometheus
// and VictoriaMetrics, read raw and with pushdown, give the unit figures
// that the analysis of the simulator's own profile gives.
func TestUnitsFromEnginesEqualTheFile(t *testing.T) {
	t.Parallel() // its settings are its own (testFactory)
	path := simProfile(t, "--interval", "15s", "--duration", "30m", "--sim-nodes", "3")
	sim, err := profile.ReadFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := unitReport(t, "-i", path)
	if len(want.Units) == 0 || len(want.UnitWorkloads) == 0 {
		t.Fatalf("the simulator's profile has no unit figures: %+v", want)
	}
	for engine, srv := range engines(t, sim) {
		for _, push := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/pushdown=%v", engine, push), func(t *testing.T) {
				args := []string{"--source", "prometheus", "--prometheus-url", srv.URL, "--step", "15s", "--prometheus-chunk", "10m",
					"--start", "2026-01-05T09:00:00Z", "--end", "2026-01-05T09:30:00Z"}
				if push {
					args = append(args, "--pushdown")
				}
				got := unitReport(t, args...)
				if !reflect.DeepEqual(got.Units, want.Units) {
					t.Errorf("fleet units\n got %v\nwant %v", got.Units, want.Units)
				}
				if !reflect.DeepEqual(got.UnitWorkloads, want.UnitWorkloads) {
					t.Errorf("workloads' units\n got %v\nwant %v", got.UnitWorkloads, want.UnitWorkloads)
				}
			})
		}
	}
}

// unitReport is analyze --report units' JSON figures.
func unitReport(t *testing.T, args ...string) unitSections {
	t.Helper()
	r := run(t, nil, append([]string{"analyze", "--report", "units", "-f", "json"}, args...)...)
	if r.code != 0 {
		t.Fatalf("analyze %v: %s", args, r.errOut)
	}
	var s unitSections
	if err := json.Unmarshal([]byte(r.out), &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// engines are a real Prometheus and a real VictoriaMetrics, each holding
// p as dcgm-exporter, kube-state-metrics and vLLM would have written it.
func engines(t *testing.T, p *profile.Profile) map[string]*promtest.Server {
	t.Helper()
	var om bytes.Buffer
	if err := dcgmtest.WriteOpenMetrics(&om, p); err != nil {
		t.Fatal(err)
	}
	return map[string]*promtest.Server{"prometheus": promtest.Start(t, om.Bytes()), "victoria-metrics": promtest.StartVictoriaMetrics(t, om.Bytes())}
}

// TestLedgerReportUnits: ledger report --units shows the unit costs in
// its table and Markdown, and not without --units.
func TestLedgerReportUnits(t *testing.T) {
	t.Parallel() // its settings are its own (testFactory)
	path := simProfile(t, "--interval", "30s", "--duration", "20m", "--sim-nodes", "2")
	led := filepath.Join(t.TempDir(), "l.db")
	if r := run(t, nil, "ledger", "update", "--ledger", led, "-i", path); r.code != 0 {
		t.Fatal(r.errOut)
	}
	for _, f := range []string{"table", "markdown"} {
		r := run(t, nil, "ledger", "report", "--ledger", led, "--units", "-f", f)
		if r.code != 0 || !strings.Contains(r.out, "Unit costs") || !strings.Contains(strings.ReplaceAll(r.out, `\_`, "_"), "output_tokens") {
			t.Errorf("%s: exit %d %s%s", f, r.code, r.out, r.errOut)
		}
	}
	if r := run(t, nil, "ledger", "report", "--ledger", led); r.code != 0 || strings.Contains(r.out, "Unit costs") {
		t.Errorf("without --units: exit %d %s", r.code, r.out)
	}
}

// TestLedgerDailyUnits: ledger report --units gives each day its fleet's
// unit figures, whose work adds up to the window's.
func TestLedgerDailyUnits(t *testing.T) {
	t.Parallel() // its settings are its own (testFactory)
	path := simProfile(t, "--interval", "60s", "--duration", "2h", "--sim-nodes", "2", "--sim-start", "2026-01-05T23:00:00Z")
	led := filepath.Join(t.TempDir(), "l.db")
	if r := run(t, nil, "ledger", "update", "--ledger", led, "-i", path); r.code != 0 {
		t.Fatal(r.errOut)
	}
	r := run(t, nil, "ledger", "report", "--ledger", led, "--units", "-f", "json", "--since", "2026-01-05T00:00:00Z", "--until", "2026-01-07T00:00:00Z")
	var rep struct {
		Units map[string]struct{ Work float64 } `json:"units"`
		Daily []struct {
			Date  string
			Units map[string]struct {
				Work          float64
				USDPerMillion *float64 `json:"usd_per_million"`
			}
		} `json:"daily"`
	}
	if err := json.Unmarshal([]byte(r.out), &rep); r.code != 0 || err != nil {
		t.Fatalf("exit %d %v: %s", r.code, err, r.errOut)
	}
	sum := 0.0
	for _, d := range rep.Daily {
		if d.Units["output_tokens"].USDPerMillion == nil {
			t.Errorf("%s: no cost per million output tokens: %+v", d.Date, d.Units)
		}
		sum += d.Units["output_tokens"].Work
	}
	if total := rep.Units["output_tokens"].Work; len(rep.Daily) != 2 || total == 0 || math.Abs(sum-total) > 1e-6*total {
		t.Errorf("%d days, their output tokens %v, the window's %v", len(rep.Daily), sum, total)
	}
}
