package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seedance/seedance/internal/testkit/dcgmtest"
	"github.com/seedance/seedance/internal/testkit/jsonnear"
	"github.com/seedance/seedance/internal/testkit/promtest"
	"github.com/seedance/seedance/pricing"
	"github.com/seedance/seedance/profile"
)

// TestLedgerFromEnginesEqualsOneAnalysis: a ledger kept by updates that
// read a real Prometheus and a real VictoriaMetrics from where the ledger's
// data ends (raw and with --pushdown) equals one analyze of the whole
// range, figure for figure: summary and attribution. The data has a
// counter reset, a two-minute gap and a GPU without an energy counter.
func TestLedgerFromEnginesEqualsOneAnalysis(t *testing.T) {
	t.Parallel() // its settings are its own (testFactory)
	sim, err := profile.ReadFile(simProfile(t, "--interval", "15s", "--duration", "30m", "--sim-nodes", "3"), nil)
	if err != nil {
		t.Fatal(err)
	}
	gpus := sim.Nodes[1].GPUs
	for i := 30; i < len(gpus[0].Series.EnergyJ); i++ { // a driver reload
		gpus[0].Series.EnergyJ[i] = float64(i-30) * 1000
	}
	for m := profile.Metric(0); m < profile.NumMetrics; m++ { // the exporter down for two minutes
		if col := *gpus[1].Series.Col(m); col != nil {
			for i := 20; i < 28; i++ {
				col[i] = profile.Null
			}
		}
	}
	gpus[2].Series.EnergyJ = nil
	for engine, srv := range engines(t, sim) {
		for _, push := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/pushdown=%v", engine, push), func(t *testing.T) {
				src := []string{"--source", "prometheus", "--prometheus-url", srv.URL, "--step", "15s", "--prometheus-chunk", "10m", "--idle-window", "30s"}
				if push {
					src = append(src, "--pushdown")
				}
				one := run(t, nil, append([]string{"analyze", "--start", "2026-01-05T09:00:00Z", "--end", "2026-01-05T09:30:00Z", "-f", "json",
					"--report", "attribution", "--group-by", "namespace"}, src...)...)
				if one.code != 0 {
					t.Fatalf("analyze: %s", one.errOut)
				}
				led := filepath.Join(t.TempDir(), "ledger.db")
				for i, end := range []string{"09:07:00", "09:13:31", "09:13:45", "09:22:07", "09:30:00"} {
					args := append([]string{"ledger", "update", "--ledger", led, "--end", "2026-01-05T" + end + "Z"}, src...)
					if i == 0 {
						args = append(args, "--start", "2026-01-05T09:00:00Z")
					}
					if r := run(t, nil, args...); r.code != 0 {
						t.Fatalf("update to %s: %s", end, r.errOut)
					}
				}
				sameAsOneAnalysis(t, led, one.out)
				// One update over the whole range, read in steps of 7
				// minutes (five transactions), counts the same.
				stepped := filepath.Join(t.TempDir(), "stepped.db")
				r := run(t, nil, append([]string{"ledger", "update", "--ledger", stepped, "--start", "2026-01-05T09:00:00Z", "--end", "2026-01-05T09:30:00Z", "--ledger-step", "7m"}, src...)...)
				if r.code != 0 || !strings.Contains(r.out+r.errOut, "in 5 steps") {
					t.Fatalf("a stepped update: %s%s", r.out, r.errOut)
				}
				sameAsOneAnalysis(t, stepped, one.out)
				// Any window W of it: the ledger's report of W equals
				// analyze of W, which reads the context around W.
				fine := filepath.Join(t.TempDir(), "fine.db")
				if r := run(t, nil, append([]string{"ledger", "update", "--ledger", fine, "--bucket", "5m", "--start", "2026-01-05T09:00:00Z", "--end", "2026-01-05T09:30:00Z"}, src...)...); r.code != 0 {
					t.Fatalf("update: %s", r.errOut)
				}
				for _, w := range [][2]string{{"09:10:00", "09:15:00"}, {"09:05:00", "09:25:00"}} {
					since, until := "2026-01-05T"+w[0]+"Z", "2026-01-05T"+w[1]+"Z"
					one := run(t, nil, append([]string{"analyze", "--start", since, "--end", until, "-f", "json", "--report", "attribution", "--group-by", "namespace"}, src...)...)
					if one.code != 0 {
						t.Fatalf("analyze: %s", one.errOut)
					}
					sameAsOneAnalysis(t, fine, one.out, "--since", since, "--until", until)
				}
			})
		}
	}
}

// sameAsOneAnalysis compares the ledger's report with one analysis's JSON
// report: summary, attribution, and the unit figures (docs/units.md).
func sameAsOneAnalysis(t *testing.T, led, analysis string, args ...string) {
	t.Helper()
	rep := run(t, nil, append([]string{"ledger", "report", "--ledger", led, "-f", "json", "--group-by", "namespace", "--units"}, args...)...)
	if rep.code != 0 {
		t.Fatalf("report: %s", rep.errOut)
	}
	var want, got map[string]any
	if err := json.Unmarshal([]byte(analysis), &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(rep.out), &got); err != nil {
		t.Fatal(err)
	}
	for k, v := range got["summary"].(map[string]any) {
		if k != "provisional_from" {
			jsonnear.Equal(t, "summary."+k, v, want["summary"].(map[string]any)[k])
		}
	}
	jsonnear.Equal(t, "attribution", got["attribution"], want["attribution"])
	for _, k := range []string{"units", "unit_groups", "unit_models", "unit_workloads"} {
		jsonnear.Equal(t, k, got[k], want[k])
	}
}

// TestAnalyzeKeepsTheLedger: analyze --ledger counts what it reads, once,
// and so does every run of a loop: the ledger then equals the analysis.
func TestAnalyzeKeepsTheLedger(t *testing.T) {
	p := simProfile(t, "--interval", "15s", "--duration", "20m", "--sim-nodes", "3")
	dir := t.TempDir()
	one := run(t, nil, "analyze", "-i", p, "-f", "json", "--report", "attribution", "--ledger", filepath.Join(dir, "once.db"))
	if one.code != 0 || !strings.Contains(one.errOut, "ledger: cluster default: settled") {
		t.Fatalf("exit %d: %s", one.code, one.errOut)
	}
	// With HTML, the page shows the ledger's month to date (#31).
	page := run(t, nil, "analyze", "-i", p, "-f", "html", "--ledger", filepath.Join(dir, "page.db"))
	if page.code != 0 || !strings.Contains(page.out, "<h2>Month to date, from the ledger</h2>") || !strings.Contains(page.out, `<svg id="chart-history"`) ||
		!strings.Contains(page.out, "2026-01-01 to 2026-01-05") {
		t.Errorf("analyze -f html --ledger: exit %d: %s", page.code, page.errOut)
	}
	l := startLoop(t, "analyze", "-i", p, "-f", "json", "--output", filepath.Join(dir, "r.json"), "--ledger", filepath.Join(dir, "loop.db"))
	l.waitFor("two runs", func(m string) bool { return strings.Contains(m, `seedance_loop_runs_total{result="ok"} 2`) })
	l.stop()
	if s := l.stderr.String(); !strings.Contains(s, "run 1: ledger: cluster default: settled") || !strings.Contains(s, "run 2: ledger: cluster default: nothing after") {
		t.Errorf("the loop's log:\n%s", s)
	}
	var want map[string]any
	if err := json.Unmarshal([]byte(one.out), &want); err != nil {
		t.Fatal(err)
	}
	for _, db := range []string{"once.db", "loop.db"} {
		rep := run(t, nil, "ledger", "report", "--ledger", filepath.Join(dir, db), "-f", "json")
		var got map[string]any
		if err := json.Unmarshal([]byte(rep.out), &got); rep.code != 0 || err != nil {
			t.Fatalf("%s: exit %d %v: %s", db, rep.code, err, rep.errOut)
		}
		jsonnear.Equal(t, db+": attribution", got["attribution"], want["attribution"])
		prom := run(t, nil, "ledger", "report", "--ledger", filepath.Join(dir, db), "-f", "prom")
		if prom.code != 0 || !strings.Contains(prom.out, "# TYPE seedance_idle_cost_usd_total counter") || !strings.Contains(prom.out, `seedance_idle_gpu_seconds_total{namespace="`) {
			t.Errorf("%s: -f prom: exit %d\n%s%s", db, prom.code, prom.out, prom.errOut)
		}
		if promtool, err := exec.LookPath("promtool"); err == nil {
			c := exec.Command(promtool, "check", "metrics")
			c.Stdin = strings.NewReader(prom.out)
			if out, err := c.CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) != 0 {
				t.Errorf("promtool check metrics: %v\n%s", err, out)
			}
		}
		jsonnear.Equal(t, db+": summary.idle_cost_usd", got["summary"].(map[string]any)["idle_cost_usd"], want["summary"].(map[string]any)["idle_cost_usd"])
	}
}

// TestRealPrices: OpenCost's node_gpu_hourly_cost, read from the same
// Prometheus, prices each node's GPUs (a spot node at $0.50); a price file
// prices the others by node name and by model; analyze's idle cost and
// the ledger's both use them, and the ledger says where each came from.
// Where the price file names the spot node too ($9), the price given on
// purpose wins, and a warning says OpenCost's differs; with
// --prefer-discovered-prices OpenCost's wins.
func TestRealPrices(t *testing.T) {
	for _, prefer := range []bool{false, true} {
		t.Run(fmt.Sprintf("prefer-discovered=%v", prefer), func(t *testing.T) { realPrices(t, prefer) })
	}
}

func realPrices(t *testing.T, prefer bool) {
	sim, err := profile.ReadFile(simProfile(t, "--interval", "15s", "--duration", "10m", "--sim-nodes", "3", "--sim-scenario", "idle"), nil)
	if err != nil {
		t.Fatal(err)
	}
	sim.Nodes[0].Labels = map[string]string{pricing.NodeCostLabel: "0.5"}
	var om bytes.Buffer
	if err := dcgmtest.WriteOpenMetrics(&om, sim); err != nil {
		t.Fatal(err)
	}
	srv := promtest.Start(t, om.Bytes())
	dir := t.TempDir()
	prices := filepath.Join(dir, "prices.yaml")
	if err := os.WriteFile(prices, []byte("prices:\n  - node: "+sim.Nodes[0].Name+"\n    usd_per_gpu_hour: 9\n  - node: "+sim.Nodes[1].Name+"\n    usd_per_gpu_hour: 2\n  - model: A100\n    usd_per_gpu_hour: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := []string{"--source", "prometheus", "--prometheus-url", srv.URL, "--start", "2026-01-05T09:00:00Z", "--end", "2026-01-05T09:10:00Z", "--price-file", prices}
	spot := 9.0
	if prefer {
		src, spot = append(src, "--prefer-discovered-prices"), 0.5
	}
	r := run(t, nil, append([]string{"analyze", "-f", "json", "--ledger", filepath.Join(dir, "l.db")}, src...)...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	if warn := "OpenCost prices " + sim.Nodes[0].Name; strings.Count(r.errOut, warn) != 1 {
		t.Errorf("no one warning %q: %s", warn, r.errOut)
	}
	var rep struct {
		Nodes []struct {
			Name            string   `json:"name"`
			GPUs            int      `json:"gpus"`
			Models          []string `json:"models"`
			IdleGPUHours    float64  `json:"idle_gpu_hours"`
			IdleCostUSD     float64  `json:"idle_cost_usd"`
			PriceUSDPerHour float64  `json:"price_usd_per_hour"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{sim.Nodes[0].Name: spot, sim.Nodes[1].Name: 2, sim.Nodes[2].Name: 0}
	for _, n := range rep.Nodes {
		per := want[n.Name]
		if per == 0 { // the third node: by model, the price file's A100 or the built-in H100
			per = 1
			if !strings.Contains(strings.Join(n.Models, ","), "A100") {
				per = 4.916
			}
		}
		if math.Abs(n.PriceUSDPerHour-per*float64(n.GPUs)) > 1e-9 || math.Abs(n.IdleCostUSD-n.IdleGPUHours*per) > 1e-6 {
			t.Errorf("%s: $%v/h, idle %v h cost $%v; want $%v per GPU-hour", n.Name, n.PriceUSDPerHour, n.IdleGPUHours, n.IdleCostUSD, per)
		}
	}
	led := run(t, nil, "ledger", "report", "--ledger", filepath.Join(dir, "l.db"), "-f", "json")
	sources := []string{`"source": "price file"`}
	if prefer {
		sources = append(sources, `"source": "opencost"`)
	}
	for _, source := range sources {
		if !strings.Contains(led.out, source) {
			t.Errorf("the ledger's prices do not say %s:\n%s", source, led.out)
		}
	}
}

// TestLedgerReportFormats: every format of a ledger report is written,
// HTML as one self-contained page that escapes what it shows.
func TestLedgerReportFormats(t *testing.T) {
	p := simProfile(t, "--interval", "15s", "--duration", "10m", "--sim-nodes", "2")
	led := filepath.Join(t.TempDir(), "l.db")
	if r := run(t, nil, "ledger", "update", "--ledger", led, "-i", p); r.code != 0 {
		t.Fatal(r.errOut)
	}
	for _, f := range []string{"table", "json", "yaml", "csv", "markdown", "html", "prom"} {
		r := run(t, nil, "ledger", "report", "--ledger", led, "-f", f, "--group-by", "team=team")
		if r.code != 0 || len(r.out) < 100 {
			t.Errorf("-f %s: exit %d: %s%s", f, r.code, r.out, r.errOut)
		}
		if f == "html" && (!strings.Contains(r.out, "Content-Security-Policy") || strings.Contains(r.out, "<script src") || !strings.Contains(r.out, "(unallocated)") ||
			!strings.Contains(r.out, `<svg id="daily-waste"`)) {
			t.Errorf("-f html:\n%s", r.out)
		}
	}
	if r := run(t, nil, "ledger", "report", "--ledger", led, "-f", "pdf"); r.code != 2 || !strings.Contains(r.errOut, "unknown format") {
		t.Errorf("-f pdf: exit %d: %s", r.code, r.errOut)
	}
	// A report kept from before is a baseline; so is analyze's.
	kept := filepath.Join(t.TempDir(), "before.json")
	if r := run(t, nil, "ledger", "report", "--ledger", led, "-f", "json", "-o", kept); r.code != 0 {
		t.Fatal(r.errOut)
	}
	analyzed := filepath.Join(t.TempDir(), "analyzed.json")
	if r := run(t, nil, "analyze", "-i", p, "-f", "json", "-o", analyzed); r.code != 0 {
		t.Fatal(r.errOut)
	}
	for _, base := range []string{kept, analyzed} {
		r := run(t, nil, "ledger", "report", "--ledger", led, "--baseline-report", base)
		if r.code != 0 || !strings.Contains(r.out, "Against ") || !strings.Contains(r.out, "idle cost") {
			t.Errorf("--baseline-report %s: exit %d: %s%s", base, r.code, r.out, r.errOut)
		}
	}
	if r := run(t, nil, "ledger", "report", "--ledger", led, "--baseline-report", p+".missing"); r.code != 2 || strings.Count(strings.TrimSpace(r.errOut), "\n") != 0 {
		t.Errorf("a missing baseline: exit %d: %s", r.code, r.errOut)
	}
}
