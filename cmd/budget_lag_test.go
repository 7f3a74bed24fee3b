package cmd

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/seedance/seedance/internal/exit"
	"github.com/seedance/seedance/internal/testkit/pgtest"
)

// TestBudgetsOfALaggingCluster: two clusters in one ledger, a counted to
// 2026-11-30 08:00 (now, for the tests) and b only to 2026-11-29 20:00.
// Each cluster's budget is forecast from its own observed span: cluster
// a's 32 hours of November carried over the 16 left, 1.5 × its charges
// (one forecast over the ledger's span would carry b's 20 hours over 28).
// A cluster's budget is its whole bill, its unallocated cost included (a
// node of four holds no workload).
// Cluster b lags by more than --max-lag (2h): its budget is unknown, never
// ok, and the check fails (exit 3) and warns; with --max-lag 13h it is
// forecast. A misspelt key is one line and exit 2, not "ok 0.00 USD"; a
// budget in force from a later day says so and passes. In SQLite and
// PostgreSQL.
func TestBudgetsOfALaggingCluster(t *testing.T) {
	t.Parallel() // its settings are its own (testFactory)
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			led := filepath.Join(t.TempDir(), "ledger.db")
			if backend == "postgres" {
				led = pgtest.Start(t)
			}
			budgetsOfALaggingCluster(t, led)
		})
	}
}

func budgetsOfALaggingCluster(t *testing.T, led string) {
	dir := t.TempDir()
	for _, c := range []struct{ name, seed, hours string }{{"a", "1", "32h"}, {"b", "2", "20h"}} {
		p := simProfile(t, "--interval", "60s", "--duration", c.hours, "--sim-nodes", "4", "--sim-seed", c.seed, "--sim-start", "2026-11-29T00:00:00Z")
		if r := run(t, nil, "ledger", "update", "--ledger", led, "--cluster", c.name, "-i", p); r.code != 0 {
			t.Fatalf("update %s: %s", c.name, r.errOut)
		}
	}
	budgets := filepath.Join(dir, "budgets.yaml")
	saveAs(t, budgets, "budgets:\n  - {by: cluster, key: a, monthly: 1e6}\n  - {by: cluster, key: b, monthly: 1e6}\n  - {by: cluster, key: a, monthly: 5, from: 2026-12-01}\n  - {by: namespace, key: training, monthly: 5, from: 2026-12-01}\n")
	r := run(t, nil, "ledger", "check", "--ledger", led, "--budgets", budgets)
	lines := strings.Split(strings.TrimSpace(r.out), "\n")
	if r.code != exit.GateFailed || len(lines) != 3 || !strings.HasPrefix(lines[0], "ok ") || !strings.HasPrefix(lines[1], "NULL ") ||
		!strings.Contains(lines[1], "forecast unknown: cluster b's data ends at 2026-11-29T20:00:00Z, 12h0m0s behind") ||
		!strings.HasPrefix(lines[2], "later ") || !strings.Contains(lines[2], "namespace=training") || !strings.Contains(lines[2], "in force from 2026-12-01, not yet") ||
		!strings.Contains(r.errOut, "warning: cluster b's data ends at 2026-11-29T20:00:00Z, 12h0m0s behind now") {
		t.Errorf("check: exit %d\n%s%s", r.code, r.out, r.errOut)
	}
	if r := run(t, nil, "ledger", "check", "--ledger", led, "--budgets", budgets, "--max-lag", "13h"); r.code != 0 || strings.Contains(r.errOut, "warning") {
		t.Errorf("check with --max-lag 13h: exit %d\n%s%s", r.code, r.out, r.errOut)
	}
	// For Alertmanager: a lagging cluster's budget has no forecast gauge,
	// and says so, rather than fall silent.
	prom := run(t, nil, "ledger", "report", "--ledger", led, "--budgets", budgets, "-f", "prom")
	if !strings.Contains(prom.out, `seedance_budget_forecast_unknown{by="cluster",key="b",month="2026-11"} 1`) ||
		!strings.Contains(prom.out, `seedance_budget_forecast_unknown{by="cluster",key="a",month="2026-11"} 0`) ||
		strings.Contains(prom.out, `seedance_budget_forecast_ratio{by="cluster",key="b"`) {
		t.Errorf("-f prom:\n%s", prom.out)
	}

	// Each budget by hand, from the report's figures.
	rep := run(t, nil, "ledger", "report", "--ledger", led, "--budgets", budgets, "--max-lag", "13h", "-f", "json", "--by", "cluster", "--share-idle", "none")
	var got struct {
		DataEnds map[string]string `json:"data_ends"`
		Budgets  []struct {
			Key      string   `json:"key"`
			Actual   float64  `json:"actual_usd"`
			Forecast *float64 `json:"forecast_usd"`
			NotYet   bool     `json:"not_yet"`
		} `json:"budgets"`
		Chargeback struct {
			Rows []struct {
				Key  []string `json:"key"`
				Cost float64  `json:"cost_usd"`
			} `json:"rows"`
			Unallocated struct {
				Cost float64 `json:"cost_usd"`
			} `json:"unallocated"`
		} `json:"chargeback"`
	}
	if err := json.Unmarshal([]byte(rep.out), &got); rep.code != 0 || err != nil {
		t.Fatalf("report: %v %s", err, rep.errOut)
	}
	if got.DataEnds["a"] != "2026-11-30T08:00:00Z" || got.DataEnds["b"] != "2026-11-29T20:00:00Z" {
		t.Errorf("data ends %v", got.DataEnds)
	}
	bill := map[string]float64{}
	for _, c := range []string{"a", "b"} {
		one := run(t, nil, "ledger", "report", "--ledger", led, "--cluster", c, "-f", "json", "--share-idle", "none")
		var r struct {
			Chargeback struct {
				Total, Unallocated struct {
					Cost float64 `json:"cost_usd"`
				}
			} `json:"chargeback"`
		}
		if err := json.Unmarshal([]byte(one.out), &r); one.code != 0 || err != nil {
			t.Fatalf("report of %s: %v %s", c, err, one.errOut)
		}
		bill[c] = r.Chargeback.Total.Cost
		if r.Chargeback.Unallocated.Cost == 0 {
			t.Fatalf("cluster %s has no unallocated cost: the test cannot tell a cluster's bill from its rows", c)
		}
	}
	// a: 32 h observed of November, 16 h left; b: 20 h, 28 h left.
	want := map[string]float64{"a": math.Round(bill["a"]*48/32*100) / 100, "b": math.Round(bill["b"]*48/20*100) / 100}
	for _, b := range got.Budgets {
		if b.NotYet {
			continue
		}
		if b.Actual != math.Round(bill[b.Key]*100)/100 || b.Actual == 0 || b.Forecast == nil || math.Abs(*b.Forecast-want[b.Key]) > 0.011 {
			t.Errorf("budget of %s: actual %v, forecast %v; want the cluster's bill %v and %v", b.Key, b.Actual, b.Forecast, bill[b.Key], want[b.Key])
		}
	}

	// A misspelt key, a bad level: one line, exit 2.
	for doc, want := range map[string]string{
		"budgets:\n  - {by: cluster, key: A, monthly: 10}\n":     "budget by cluster, key A: no group of the ledger's 2026-11 has that key",
		"budgets:\n  - {by: clusters, key: a, monthly: 10}\n":    `by "clusters": choose cluster, namespace`,
		"budgets:\n  - {by: cluster, key: a, monthly: 1e-320}\n": "at least a cent",
	} {
		saveAs(t, budgets, doc)
		for _, cmd := range [][]string{{"check"}, {"report"}} {
			r := run(t, nil, append(append([]string{"ledger"}, cmd...), "--ledger", led, "--budgets", budgets)...)
			if r.code != exit.Usage || !strings.Contains(r.errOut, want) || strings.Count(r.errOut, "\n") != 1 {
				t.Errorf("%s of %q: exit %d %q, want one line with %q", cmd[0], doc, r.code, r.errOut, want)
			}
		}
	}
}

// TestShowbackCSVRows: the showback CSV's group rows carry their energy
// (empty before on every group row), and they and the unallocated row add
// up to the total's; each day row carries its used GPU-hours (0 before,
// on a day with hundreds), and the days add up to the groups' total used.
func TestShowbackCSVRows(t *testing.T) {
	p := simProfile(t, "--interval", "60s", "--duration", "26h", "--sim-nodes", "4")
	led := filepath.Join(t.TempDir(), "l.db")
	if r := run(t, nil, "ledger", "update", "--ledger", led, "-i", p); r.code != 0 {
		t.Fatalf("update: %s", r.errOut)
	}
	r := run(t, nil, "ledger", "report", "--ledger", led, "-f", "csv")
	recs, err := csv.NewReader(strings.NewReader(r.out)).ReadAll()
	if r.code != 0 || err != nil {
		t.Fatalf("report: %v %s", err, r.errOut)
	}
	col := map[string]int{}
	for i, name := range recs[0] {
		col[name] = i
	}
	num := func(row []string, name string) float64 {
		v, err := strconv.ParseFloat(row[col[name]], 64)
		if err != nil {
			t.Fatalf("%v: %s %q: %v", row, name, row[col[name]], err)
		}
		return v
	}
	var energy, used, dayUsed, total, totalUsed float64
	days := 0
	for _, row := range recs[1:] {
		switch key := row[0]; {
		case key == "(total)":
			total, totalUsed = num(row, "energy_kwh"), num(row, "used_gpu_hours")
		case strings.HasPrefix(key, "(day) "):
			dayUsed += num(row, "used_gpu_hours")
			if num(row, "used_gpu_hours") <= 0 {
				t.Errorf("%s: no used GPU-hours", key)
			}
			days++
		default:
			energy += num(row, "energy_kwh")
			used += num(row, "used_gpu_hours")
		}
	}
	if days != 2 || total <= 0 || math.Abs(energy-total) > 1e-6*total || math.Abs(dayUsed-totalUsed) > 1e-6*totalUsed || math.Abs(used-totalUsed) > 1e-6*totalUsed {
		t.Errorf("%d days; energy %v of %v; used %v by the groups, %v by the days, %v in all", days, energy, total, used, dayUsed, totalUsed)
	}
}
