package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seedance/seedance/internal/exit"
	"github.com/seedance/seedance/profile"
)

// TestLedgerUpdateWarns: ledger update warns on stderr of what analyze
// warns about (a source's notes: owner labels unknown; a price key that
// matches no model, naming the model it could have meant), and a report of
// the window repeats the warnings.
func TestLedgerUpdateWarns(t *testing.T) {
	p, err := profile.ReadFile(simProfile(t, "--duration", "5m", "--sim-nodes", "4"), nil)
	if err != nil {
		t.Fatal(err)
	}
	const note = "no kube-state-metrics series (kube_pod_info) in the range, so pending pods, pod labels and owners are unknown"
	p.Notes = append(p.Notes, note)
	in := filepath.Join(t.TempDir(), "p.json")
	if err := profile.WriteFile(in, p); err != nil {
		t.Fatal(err)
	}
	led := filepath.Join(t.TempDir(), "ledger.db")
	up := run(t, nil, "ledger", "update", "--ledger", led, "-i", in, "--gpu-price", "A100 80GB=1.60")
	if up.code != 0 {
		t.Fatal(up.errOut)
	}
	for _, want := range []string{"warning: " + note, `warning: the price key "A100 80GB" matches no GPU model priced`, `did you mean "NVIDIA A100-SXM4-80GB"`} {
		if !strings.Contains(up.errOut, want) {
			t.Errorf("ledger update's stderr lacks %q:\n%s", want, up.errOut)
		}
	}
	rep := run(t, nil, "ledger", "report", "--ledger", led, "-f", "json")
	var r struct{ Warnings []string }
	if err := json.Unmarshal([]byte(rep.out), &r); err != nil || rep.code != 0 {
		t.Fatalf("report: %v %s", err, rep.errOut)
	}
	if len(r.Warnings) != 2 || r.Warnings[0] != note || !strings.Contains(r.Warnings[1], `"A100 80GB"`) {
		t.Fatalf("the report's warnings: %q", r.Warnings)
	}
	if txt := run(t, nil, "ledger", "report", "--ledger", led); !strings.Contains(txt.out, "Warning: "+note) {
		t.Fatalf("the table lacks the warning:\n%s", txt.out)
	}
	if typo := run(t, nil, "ledger", "report", "--ledger", led+"x"); typo.code == 0 || !strings.Contains(typo.errOut, led+"x") {
		t.Fatalf("a report of a ledger that does not exist: %d %s", typo.code, typo.errOut)
	}
}

// TestLedgerExportFocus: `ledger export --format focus` writes the FOCUS
// rows atomically and says what their BilledCost sums to: the charges'
// total of `ledger report` for the same window and rule. A bad rule is a
// one-line usage error that writes nothing.
func TestLedgerExportFocus(t *testing.T) {
	led := filepath.Join(t.TempDir(), "ledger.db")
	if r := run(t, nil, "ledger", "update", "--ledger", led, "-i", simProfile(t, "--interval", "30s", "--duration", "1h", "--sim-nodes", "3")); r.code != 0 {
		t.Fatalf("update: %s", r.errOut)
	}
	out := filepath.Join(t.TempDir(), "focus.csv")
	exp := run(t, nil, "ledger", "export", "--ledger", led, "--format", "focus", "--share-idle", "weighted", "-o", out)
	rep := run(t, nil, "ledger", "report", "--ledger", led, "--share-idle", "weighted", "-f", "json")
	if exp.code != 0 || rep.code != 0 {
		t.Fatalf("export: %s; report: %s", exp.errOut, rep.errOut)
	}
	var r struct {
		Chargeback struct {
			Total struct {
				CostUSD float64 `json:"cost_usd"`
			}
		}
	}
	if err := json.Unmarshal([]byte(rep.out), &r); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("export: BilledCost sums to %.2f USD; data through default 2026-01-05T10:00:00Z\n", r.Chargeback.Total.CostUSD); exp.errOut != want || r.Chargeback.Total.CostUSD == 0 {
		t.Errorf("export said %q, want %q", exp.errOut, want)
	}
	if b, err := os.ReadFile(out); err != nil || !strings.HasPrefix(string(b), "AllocatedMethodDetails,AllocatedMethodId,") ||
		!strings.Contains(string(b), "seedance/gpu-time-held+idle-weighted-by-cluster") {
		t.Fatalf("%s: not FOCUS 1.3 split by the rule: %v %.80q", out, err, b)
	}
	old := filepath.Join(t.TempDir(), "focus12.csv")
	if r := run(t, nil, "ledger", "export", "--ledger", led, "--share-idle", "weighted", "--focus-version", "1.2", "-o", old); r.code != 0 || r.errOut != exp.errOut {
		t.Errorf("--focus-version 1.2: exit %d %s", r.code, r.errOut)
	}
	if b, err := os.ReadFile(old); err != nil || !strings.HasPrefix(string(b), "BilledCost,BillingAccountId,") {
		t.Fatalf("%s: not FOCUS 1.2: %v %.80q", old, err, b)
	}
	if r := run(t, nil, "ledger", "export", "--ledger", led, "--focus-version", "1.1", "-o", filepath.Join(t.TempDir(), "x.csv")); r.code != 2 || !strings.Contains(r.errOut, `FOCUS version "1.1": choose 1.3 or 1.2`) {
		t.Errorf("--focus-version 1.1: exit %d %s", r.code, r.errOut)
	}
	bad := filepath.Join(t.TempDir(), "bad.csv")
	r2 := run(t, nil, "ledger", "export", "--ledger", led, "--share-idle", "fair", "-o", bad)
	if _, err := os.Stat(bad); r2.code != 2 || strings.Count(r2.errOut, "\n") != 1 || !strings.Contains(r2.errOut, "none, weighted or even") || err == nil {
		t.Errorf("a bad rule: exit %d, %q, output written: %v", r2.code, r2.errOut, err == nil)
	}
}

// TestFailedFirstUpdateLeavesNoLedger: a first update that fails (an
// input that is not there, a Prometheus that does not answer) leaves no
// empty ledger file behind; one that fails on a ledger with data keeps it.
func TestFailedFirstUpdateLeavesNoLedger(t *testing.T) {
	t.Parallel() // its settings are its own (testFactory)
	dir := t.TempDir()
	led := filepath.Join(dir, "new.db")
	for _, args := range [][]string{{"-i", filepath.Join(dir, "missing.json")}, {"--source", "prometheus", "--prometheus-url", "http://127.0.0.1:1", "--start", "2026-01-05T09:00:00Z", "--end", "2026-01-05T09:10:00Z"}} {
		r := run(t, nil, append([]string{"ledger", "update", "--ledger", led}, args...)...)
		entries, _ := os.ReadDir(dir)
		if r.code == 0 || len(entries) != 0 {
			t.Errorf("%v: exit %d, left %d files: %s", args, r.code, len(entries), r.errOut)
		}
	}
	if r := run(t, nil, "ledger", "update", "--ledger", led, "-i", simProfile(t, "--duration", "60", "--sim-nodes", "1")); r.code != 0 {
		t.Fatal(r.errOut)
	}
	if r := run(t, nil, "ledger", "update", "--ledger", led, "-i", filepath.Join(dir, "missing.json")); r.code == 0 {
		t.Fatal("a missing input counted")
	}
	if _, err := os.Stat(led); err != nil {
		t.Errorf("a failed update removed a ledger with data: %v", err)
	}
	// A window from 1970 reads only the days from the data's first (it
	// walked 20,000 days before); a span back past 100 years, or a year
	// past 2199, is refused.
	r := run(t, nil, "ledger", "report", "--ledger", led, "--since", "1970-01-01", "-f", "json")
	whole := run(t, nil, "ledger", "report", "--ledger", led, "-f", "json")
	if r.code != 0 || !strings.Contains(r.out, `"start": "1970-01-01T00:00:00Z"`) || !strings.Contains(r.out, strings.SplitN(whole.out, `"summary"`, 2)[1][:200]) {
		t.Errorf("--since 1970-01-01: exit %d %.300s %s", r.code, r.out, r.errOut)
	}
	for _, since := range []string{"99999999d", "900000h", "1969-12-31", "2200-01-01"} {
		if r := run(t, nil, "ledger", "report", "--ledger", led, "--since", since); r.code != exit.Usage || strings.Count(r.errOut, "\n") != 1 {
			t.Errorf("--since %s: exit %d %q", since, r.code, r.errOut)
		}
	}
}
