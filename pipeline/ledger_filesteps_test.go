package pipeline

import (
	"context"
	"encoding/json"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/ledger"
	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source/sim"
)

// TestFileCountedInSteps (#56): a file reaching 5 hours past the ledger's
// data end is counted in 5 steps of an hour (a piece each), or 30 of 10
// minutes (two a piece: more steps than maxPieces), and the ledger then
// holds what one update of it gives, row for row in its report; so does a
// first update of 6 hours, its first step keeping the 10 minutes of
// context samples before the file's start; a file within a step goes in
// one.
func TestFileCountedInSteps(t *testing.T) {
	p, err := sim.Record(sim.Options{Nodes: 4, Scenario: sim.ScenarioMixed, Seed: 2}, time.Minute, 6*time.Hour, profile.Generator{Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	whole, first, rest := filepath.Join(dir, "whole.json"), filepath.Join(dir, "first.json"), filepath.Join(dir, "rest.json")
	cut := p.StartedAt.Add(time.Hour)
	files := map[string]*profile.Profile{
		whole: withContext(p, 10*time.Minute),
		first: profile.Join([]*profile.Profile{p}, p.StartedAt.Add(-time.Millisecond), cut, false),
		rest:  profile.Join([]*profile.Profile{p}, cut, p.EndedAt, false),
	}
	for name, p := range files {
		if err := profile.WriteFile(name, p); err != nil {
			t.Fatal(err)
		}
	}
	steps := map[string]map[string]int{ // by file and step
		first: {"1h": 2, "10m": 7}, rest: {"1h": 5, "10m": 30}, whole: {"1h": 6, "10m": 35},
	}
	for _, updates := range [][]string{{first, rest}, {whole}} {
		var reports []string
		for _, step := range []string{"1h", "10m", "24h"} {
			cfg := configWith(t, "ledger.dsn", filepath.Join(dir, step+filepath.Base(updates[0])+".db"), "ledger.step", step)
			for _, in := range updates {
				up, err := LedgerUpdate(context.Background(), LedgerUpdateSpec{Config: cfg, Inputs: []string{in}})
				if want := steps[in][step]; err != nil || up.Steps != want {
					t.Fatalf("%s, --ledger-step %s: %d steps, want %d (%v)", filepath.Base(in), step, up.Steps, steps[in][step], err)
				}
			}
			reports = append(reports, namespaceReport(t, cfg.Ledger.DSN))
		}
		for i := range 2 {
			if reports[i] != reports[2] {
				t.Fatalf("%s counted in steps:\n%s\nat once:\n%s", updates, reports[i], reports[2])
			}
		}
		if !strings.Contains(reports[2], `"unit_workloads":[{`) || strings.Contains(reports[2], `"work":null`) {
			t.Fatalf("%s: no unit figures, or null work: %.300s", updates, reports[2])
		}
	}
}

// namespaceReport is the ledger's report by namespace, as JSON.
func namespaceReport(t *testing.T, dsn string) string {
	l, err := ledger.Open(context.Background(), dsn, ledger.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	r, err := l.Report(context.Background(), ledger.Query{GroupBy: []string{"namespace"}, EnergyUSDPerKWh: 0.12, Units: true})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(r)
	return string(b)
}

// withContext is p starting d later, its samples before that its context
// (context_s), its workloads' tenure from the new start.
func withContext(p *profile.Profile, d time.Duration) *profile.Profile {
	out := profile.Join([]*profile.Profile{p}, p.StartedAt.Add(-time.Millisecond), p.EndedAt, false)
	out.StartedAt, out.ContextS = out.StartedAt.Add(d), d.Seconds()
	for i := range out.Nodes {
		n := &out.Nodes[i]
		for _, t := range n.GPUTimes() {
			for k := range t {
				t[k] -= d.Seconds()
			}
		}
		for wi := range n.Workloads {
			for k := range n.Workloads[wi].Intervals {
				iv := &n.Workloads[wi].Intervals[k]
				iv.StartS, iv.EndS = max(0, iv.StartS-d.Seconds()), iv.EndS-d.Seconds()
			}
		}
	}
	return out
}

// TestFileStepsAcrossAHole (#56): a file with no sample of any GPU for two
// hours, counted in steps of an hour (two steps find nothing), gives the
// ledger one update of it gives, and the same warning of the hole.
func TestFileStepsAcrossAHole(t *testing.T) {
	p, err := sim.Record(sim.Options{Nodes: 4, Scenario: sim.ScenarioMixed, Seed: 2}, time.Minute, 6*time.Hour, profile.Generator{Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	gap := [2]time.Time{p.StartedAt.Add(2 * time.Hour), p.StartedAt.Add(4*time.Hour + 10*time.Minute)}
	dir := t.TempDir()
	first, rest := filepath.Join(dir, "first.json"), filepath.Join(dir, "rest.json")
	cut := p.StartedAt.Add(time.Hour)
	holed := profile.Join([]*profile.Profile{profile.Join([]*profile.Profile{p}, cut, gap[0], false), profile.Join([]*profile.Profile{p}, gap[1], p.EndedAt, false)}, cut, p.EndedAt, false)
	if err := profile.WriteFile(first, profile.Join([]*profile.Profile{p}, p.StartedAt.Add(-time.Millisecond), cut, false)); err != nil {
		t.Fatal(err)
	}
	if err := profile.WriteFile(rest, holed); err != nil {
		t.Fatal(err)
	}
	var reports, warnings []string
	for _, step := range []string{"1h", "24h"} {
		cfg := configWith(t, "ledger.dsn", filepath.Join(dir, step+".db"), "ledger.step", step)
		var up ledger.Updated
		for _, in := range []string{first, rest} {
			if up, err = LedgerUpdate(context.Background(), LedgerUpdateSpec{Config: cfg, Inputs: []string{in}}); err != nil {
				t.Fatal(err)
			}
		}
		reports = append(reports, namespaceReport(t, cfg.Ledger.DSN))
		warnings = append(warnings, strings.Join(up.Warnings, "\n"))
	}
	if reports[0] != reports[1] || warnings[0] != warnings[1] || !strings.Contains(warnings[0], "a hole in its data") {
		t.Fatalf("counted in steps:\n%s\n%s\nat once:\n%s\n%s", reports[0], warnings[0], reports[1], warnings[1])
	}
}

// TestStepGC: the steps' collector target is stepsGOGC and restored
// after; a GOGC the user set is left alone.
func TestStepGC(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	restore := stepGC()
	if got := debug.SetGCPercent(stepsGOGC); got != stepsGOGC {
		t.Errorf("during the steps GOGC is %d, want %d", got, stepsGOGC)
	}
	restore()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("after the steps GOGC is %d, want 100 restored", got)
	}
	t.Setenv("GOGC", "100")
	restore = stepGC()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC set the steps changed it to %d", got)
	}
	restore()
}
