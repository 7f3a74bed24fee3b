package recommend

import (
	"context"
	"strings"
	"testing"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/profile"
)

// TestSuggestions: moves of one application from one node to one target
// become one line; the NVLink remark comes from the move's flag, never from
// its reason text.
func TestSuggestions(t *testing.T) {
	fleet := &analyze.Fleet{Nodes: []analyze.FleetNode{
		{Name: "node-gpu-04", Workloads: []*profile.Workload{
			{ID: "ml/llama-7b-infer-7d9f8b6c4-abcde", Name: "llama-7b-infer-7d9f8b6c4-abcde", State: profile.StatePending},
			{ID: "ml/llama-7b-infer-7d9f8b6c4-fghij", Name: "llama-7b-infer-7d9f8b6c4-fghij", State: profile.StatePending},
			{ID: "ml/train-0", Name: "train-0", Labels: map[string]string{"app": "trainer"}, State: profile.StateRunning},
		}},
	}}
	from := "node-gpu-04"
	plan := &Plan{Moves: []Move{
		{Workload: "ml/llama-7b-infer-7d9f8b6c4-abcde", To: "node-gpu-06", HigherNVLink: true},
		{Workload: "ml/llama-7b-infer-7d9f8b6c4-fghij", To: "node-gpu-06", Reason: "says higher NVLink bandwidth but is not flagged"},
		{Workload: "ml/train-0", From: &from, To: "node-gpu-01", SavingsUSDPerHour: 12.345678},
	}}
	got := migrationSuggestions(plan, fleet)
	if len(got) != 2 {
		t.Fatalf("%d suggestions: %+v", len(got), got)
	}
	if want := "node-gpu-04: migrate 2 pending llama-7b-infer pods to node-gpu-06 (higher NVLink bandwidth); seedance recommend writes the commands"; got[0].Text != want {
		t.Errorf("got  %q\nwant %q", got[0].Text, want)
	}
	if want := "node-gpu-04: migrate 1 trainer pod to node-gpu-01: frees node-gpu-04, saves $12.35/h; seedance recommend writes the commands"; got[1].Text != want || got[1].SavingsUSDPerHour != 12.3457 || got[1].Kind != suggestMigrate {
		t.Errorf("got %+v", got[1])
	}
}

// TestPlanReportWithoutFleet: a report analyzed without KeepFleet gets an
// error, never a plan made from nothing; the analysis is not written to.
func TestPlanReportWithoutFleet(t *testing.T) {
	r := &analyze.Report{}
	p, sugs, err := PlanReport(context.Background(), r, func(string, map[string]string, string) float64 { return 1 }, Options{})
	if p != nil || sugs != nil || err == nil || !strings.Contains(err.Error(), "kept no fleet") {
		t.Fatalf("plan %+v suggestions %+v err %v", p, sugs, err)
	}
	if len(r.Warnings) != 0 || len(r.Suggestions) != 0 {
		t.Fatalf("the analysis was written to: %q %+v", r.Warnings, r.Suggestions)
	}
}

func TestForDialects(t *testing.T) {
	for _, d := range Dialects {
		if w, err := For(d); err != nil || w == nil {
			t.Errorf("%s: %v", d, err)
		}
	}
	if _, err := For("ansible"); err == nil || !strings.Contains(err.Error(), `unknown --dialect "ansible"`) {
		t.Errorf("err = %v", err)
	}
}
