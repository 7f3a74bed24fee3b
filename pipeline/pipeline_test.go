package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/seedance/seedance/settings"
)

// simConfig is the default configuration with a simulated cluster of 16
// nodes, its report all sections.
func simConfig(t *testing.T) *settings.Config {
	t.Helper()
	return configWith(t, "profile.source", "sim", "sim.nodes", 16, "analyze.report", "all")
}

// configWith is the default configuration with the settings given as
// key, value pairs.
func configWith(t testing.TB, kv ...any) *settings.Config {
	t.Helper()
	v := settings.NewViper()
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i].(string), kv[i+1])
	}
	c, err := settings.Decode(v)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestOnePipeline: the same data gives the same report whether the
// analysis reads the source (--source) or the profile Record wrote, and
// Plan's plan is the report's migration plan.
func TestOnePipeline(t *testing.T) {
	ctx := context.Background()
	cfg := simConfig(t)
	path := filepath.Join(t.TempDir(), "p.json")
	rec, err := Record(ctx, RecordSpec{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Write(nil, path); err != nil {
		t.Fatal(err)
	}
	rec.Close()
	fromFile, out, err := Analyze(ctx, AnalyzeSpec{Config: cfg, Inputs: []string{path}})
	if err != nil || out != (Outcome{}) {
		t.Fatalf("%v %+v", err, out)
	}
	fromSource, _, err := Analyze(ctx, AnalyzeSpec{Config: cfg, Source: &RecordSpec{Config: cfg}})
	if err != nil {
		t.Fatal(err)
	}
	// The inputs' names differ (the file, --source sim); nothing else.
	fromSource.Inputs[0].Name = path
	if !bytes.Equal(jsonOf(t, fromFile), jsonOf(t, fromSource)) {
		t.Error("the report of --source differs from that of its profile")
	}
	// The later stages write into the Result, never into the analysis.
	for _, sg := range fromFile.Report.Suggestions {
		if sg.Command != "" || sg.Kind == "migrate" {
			t.Errorf("the analysis was written to: %+v", sg)
		}
	}
	if len(fromFile.Suggestions) <= len(fromFile.Report.Suggestions) {
		t.Errorf("the plan added no suggestion to the report")
	}
	plan, err := Plan(ctx, PlanSpec{Config: cfg, Input: path})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(jsonOf(t, plan), jsonOf(t, fromFile.Migration)) || len(plan.Moves) == 0 {
		t.Errorf("Plan's plan is not the report's (%d moves)", len(plan.Moves))
	}
}

// TestGatesInTheOutcome: a failed gate is counted in the outcome, not an
// error; a gate naming no field is a usage error.
func TestGatesInTheOutcome(t *testing.T) {
	cfg := simConfig(t)
	cfg.Analyze.Gates = []string{"summary.idle_ratio < 0", "summary.gpus > 0"}
	res, out, err := Analyze(context.Background(), AnalyzeSpec{Config: cfg, Source: &RecordSpec{Config: cfg}})
	if err != nil || out.GatesFailed != 1 || len(res.Gates) != 2 {
		t.Fatalf("%v %+v", err, out)
	}
	cfg.Analyze.Gates = []string{"summary.idel_ratio < 0"}
	if _, _, err := Analyze(context.Background(), AnalyzeSpec{Config: cfg, Source: &RecordSpec{Config: cfg}}); err == nil {
		t.Fatal("a misspelt gate passed")
	}
}

func jsonOf(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
