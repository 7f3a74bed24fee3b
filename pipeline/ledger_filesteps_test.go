package pipeline

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/seedance/seedance/ledger"
	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source/sim"
)

// TestFileCountedInSteps (#56): a file reaching 5 hours past the ledger's
// data end is counted in 5 steps of an hour, and the ledger then holds
// what one update of it gives, row for row in its report; a file of the
// first update, and one within a step, go in one.
func TestFileCountedInSteps(t *testing.T) {
	p, err := sim.Record(sim.Options{Nodes: 4, Scenario: sim.ScenarioMixed, Seed: 2}, time.Minute, 6*time.Hour, profile.Generator{Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	first, rest := filepath.Join(dir, "first.json"), filepath.Join(dir, "rest.json")
	cut := p.StartedAt.Add(time.Hour)
	if err := profile.WriteFile(first, profile.Join([]*profile.Profile{p}, p.StartedAt.Add(-time.Millisecond), cut, false)); err != nil {
		t.Fatal(err)
	}
	if err := profile.WriteFile(rest, profile.Join([]*profile.Profile{p}, cut, p.EndedAt, false)); err != nil {
		t.Fatal(err)
	}
	var reports []string
	for _, step := range []string{"1h", "24h"} {
		cfg := configWith(t, "ledger.dsn", filepath.Join(dir, step+".db"), "ledger.step", step)
		up, err := LedgerUpdate(context.Background(), LedgerUpdateSpec{Config: cfg, Inputs: []string{first}})
		if err != nil || up.Steps > 1 {
			t.Fatalf("the first update: %+v %v", up, err)
		}
		up, err = LedgerUpdate(context.Background(), LedgerUpdateSpec{Config: cfg, Inputs: []string{rest}})
		if want := map[string]int{"1h": 5, "24h": 0}[step]; err != nil || up.Steps != want {
			t.Fatalf("--ledger-step %s: %d steps, want %d (%v)", step, up.Steps, want, err)
		}
		l, err := ledger.Open(context.Background(), cfg.Ledger.DSN, ledger.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		r, err := l.Report(context.Background(), ledger.Query{GroupBy: []string{"namespace"}, EnergyUSDPerKWh: 0.12})
		l.Close()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(r)
		reports = append(reports, string(b))
	}
	if reports[0] != reports[1] {
		t.Fatalf("counted in steps:\n%s\nat once:\n%s", reports[0], reports[1])
	}
}
