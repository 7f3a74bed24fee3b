package analyze

import (
	"strings"
	"testing"
)

// TestNoDrainUnlessIdleNow: a node idle most of the window but busy at its
// end gets advice without a drain command.
func TestNoDrainUnlessIdleNow(t *testing.T) {
	n := NodeReport{Name: "node-gpu-03", GPUs: 8, Models: []string{"H100"}, Verdict: VerdictIdle, PriceUSDPerHour: 40,
		IdleIntervals: []Interval{{0, 1200}, {1500, 2100}, {2200, 2400}, {2500, 2800}}, ObservedS: 3600, IdleShare: ptr(2300.0 / 3600)}
	accs := map[string]*nodeAcc{"node-gpu-03": {}}
	s := suggest([]NodeReport{n}, accs)[0]
	if s.Kind != SuggestScheduleNode || s.Action != nil {
		t.Fatalf("%+v", s)
	}
	if want := "node-gpu-03: idle 64% of 1h00m observed, in 4 stretches (8 × H100) but busy at the end of the window: scale it down on a schedule or consolidate its work; about $25.56/h at stake"; s.Text != want {
		t.Errorf("text %q", s.Text)
	}
	near(t, "saving", s.SavingsUSDPerHour, 40*2300.0/3600)
}

func TestFormatDuration(t *testing.T) {
	for d, want := range map[float64]string{45: "45s", 840: "14m", 7500: "2h05m", 59.6: "1m"} {
		if got := FormatDuration(secs(d)); got != want {
			t.Errorf("%v: %s, want %s", d, got, want)
		}
	}
}

// TestSuggestionsGroupedByOwner (#26, item 7): suggestions of one kind
// about several pods of one controller are one suggestion with a count,
// the pods listed, the savings summed; others stay as they are.
func TestSuggestionsGroupedByOwner(t *testing.T) {
	in := []ownedSuggestion{
		{Suggestion{Kind: SuggestIdleHolder, Node: "a", Text: "ml/web-1 holds 1 GPU", SavingsUSDPerHour: 2}, "ml/web-1", "Deployment/web"},
		{Suggestion{Kind: SuggestIdleHolder, Node: "b", Text: "ml/web-2 holds 1 GPU", SavingsUSDPerHour: 2}, "ml/web-2", "Deployment/web"},
		{Suggestion{Kind: SuggestSmallMemory, Node: "a", Text: "ml/web-1 uses little"}, "ml/web-1", "Deployment/web"},
		{Suggestion{Kind: SuggestIdleHolder, Node: "a", Text: "ml/web-3 holds 1 GPU", SavingsUSDPerHour: 2}, "ml/web-3", "Deployment/web"},
		{Suggestion{Kind: SuggestIdleHolder, Node: "c", Text: "ml/lone holds 1 GPU", SavingsUSDPerHour: 1}, "ml/lone", ""},
	}
	out := groupByOwner(in)
	if len(out) != 3 {
		t.Fatalf("%d suggestions: %+v", len(out), out)
	}
	g := out[0]
	if g.Kind != SuggestIdleHolder || len(g.Workloads) != 3 || g.SavingsUSDPerHour != 6 ||
		!strings.HasPrefix(g.Text, "Deployment/web: 3 of its workloads (on 2 node(s); the list is in the JSON report), for example ml/web-1 holds 1 GPU") {
		t.Errorf("grouped: %+v", g)
	}
	if out[1].Kind != SuggestSmallMemory || len(out[1].Workloads) != 0 || out[2].Text != "ml/lone holds 1 GPU" {
		t.Errorf("others: %+v", out[1:])
	}
}
