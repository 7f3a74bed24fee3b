package cmd

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seedance/seedance/internal/exit"
)

// TestLedgerCheckBudgets: `ledger check` writes a line per budget and
// exits 3 when a forecast crosses the threshold, 0 when none does; a bad
// budgets file is one line and exit 2; the ledger report shows and exports
// the budgets, and a loop serves their gauges on /metrics.
func TestLedgerCheckBudgets(t *testing.T) {
	dir := t.TempDir()
	// Seven hours to 2026-11-30 07:00, an hour before the tests' now: a
	// forecast rests on six hours at least, and the data does not lag.
	p := simProfile(t, "--interval", "60s", "--duration", "7h", "--sim-nodes", "3", "--sim-start", "2026-11-30T00:00:00Z")
	led := filepath.Join(dir, "ledger.db")
	if r := run(t, nil, "ledger", "update", "--ledger", led, "-i", p); r.code != 0 {
		t.Fatalf("update: %s", r.errOut)
	}
	budgets := filepath.Join(dir, "budgets.yaml")
	saveAs(t, budgets, "budgets:\n  - {by: namespace, key: training, monthly: 1e9}\n  - {by: namespace, key: eval, monthly: 10, currency: USD, from: 2026-11-01}\n")
	r := run(t, nil, "ledger", "check", "--ledger", led, "--budgets", budgets)
	lines := strings.Split(strings.TrimSpace(r.out), "\n")
	if r.code != exit.GateFailed || len(lines) != 2 || !strings.HasPrefix(lines[0], "ok ") || !strings.HasPrefix(lines[1], "OVER ") ||
		r.errOut != "seedance: 1 of 2 budgets at or over 100% (forecast), or without one\n" {
		t.Errorf("check: exit %d\n%s%s", r.code, r.out, r.errOut)
	}
	if r := run(t, nil, "ledger", "check", "--ledger", led, "--budgets", budgets, "--fail-at", "1000000"); r.code != 0 {
		t.Errorf("check at 1e6 %%: exit %d\n%s%s", r.code, r.out, r.errOut)
	}
	bad := filepath.Join(dir, "bad.yaml")
	saveAs(t, bad, "budgets:\n  - {by: namespace, key: x, monthly: 5, cap: 3}\n")
	if r := run(t, nil, "ledger", "check", "--ledger", led, "--budgets", bad); r.code != exit.Usage || strings.Count(r.errOut, "\n") != 1 {
		t.Errorf("a bad budgets file: exit %d %q", r.code, r.errOut)
	}
	prom := run(t, nil, "ledger", "report", "--ledger", led, "--budgets", budgets, "-f", "prom")
	if prom.code != 0 || !strings.Contains(prom.out, `seedance_budget_forecast_ratio{by="namespace",key="eval",month="2026-11"}`) {
		t.Errorf("report -f prom: exit %d\n%s%s", prom.code, prom.out, prom.errOut)
	}
	page := run(t, nil, "ledger", "report", "--ledger", led, "--budgets", budgets, "--share-idle", "even", "-f", "html")
	if page.code != 0 || !strings.Contains(page.out, `<table class="sortable" id="charges">`) || !strings.Contains(page.out, "Budget namespace=eval") {
		t.Errorf("report -f html: exit %d, no charges or budgets: %s", page.code, page.errOut)
	}
	if promtool, err := exec.LookPath("promtool"); err == nil {
		c := exec.Command(promtool, "check", "metrics")
		c.Stdin = strings.NewReader(prom.out)
		if out, err := c.CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) != 0 {
			t.Errorf("promtool check metrics: %v\n%s", err, out)
		}
	}
	l := startLoop(t, "analyze", "-i", p, "-f", "json", "--output", filepath.Join(dir, "r.json"), "--ledger", filepath.Join(dir, "loop.db"), "--budgets", budgets)
	l.waitFor("the budgets' gauges", func(m string) bool {
		return strings.Contains(m, `seedance_budget_actual_usd{by="namespace",key="training",month="2026-11"}`)
	})
	l.stop()
}
