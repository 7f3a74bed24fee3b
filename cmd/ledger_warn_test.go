package cmd

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

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
