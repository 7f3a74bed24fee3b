package analyze

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/seedance/seedance/profile"
)

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"node-gpu-07": "node-gpu-07",
		"":            "''",
		"a b":         "'a b'",
		"it's":        `'it'\''s'`,
		"$(reboot)":   "'$(reboot)'",
		"x;rm -rf /":  "'x;rm -rf /'",
		"`id`":        "'`id`'",
		"line\nbreak": "'line\nbreak'",
		"nœud-ü":      "'nœud-ü'",
	} {
		if got := ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestQuotedWordsSurviveTheShell runs each quoted string through sh and
// checks that it comes back as one word, unchanged, with nothing executed.
func TestQuotedWordsSurviveTheShell(t *testing.T) {
	hostile := []string{"$(touch /tmp/seedance-pwned)", "a;b", "it's", "`id`", "x\ny", "naïve", `"dq"`, "$HOME", "a b  c", "-rf"}
	for _, s := range hostile {
		out, err := exec.Command("sh", "-c", "printf '%s' "+ShellQuote(s)).Output()
		if err != nil || string(out) != s {
			t.Errorf("%q came back as %q (%v)", s, out, err)
		}
	}
}

func TestSuggestionsRefuseInvalidNames(t *testing.T) {
	names := []string{"node;reboot", "$(id)", "Node-Upper", "node\nx", "nœud", "a'b"}
	for _, dialect := range []string{DialectKubectl, DialectSlurm} {
		for _, name := range names {
			idle := NodeReport{Name: name, GPUs: 8, Models: []string{"H100"}, Verdict: VerdictIdle, PriceUSDPerHour: 39.3, IdleIntervals: []Interval{{0, 600}},
				ObservedS: 600, IdleShare: ptr(1), IdleNow: true}
			acc := &nodeAcc{name: name}
			s := suggest([]NodeReport{idle}, map[string]*nodeAcc{name: acc}, dialect, "")[0]
			valid := ValidNodeName(dialect, name)
			if valid != (s.Command != "") {
				t.Errorf("%s %q: valid=%v command=%q", dialect, name, valid, s.Command)
			}
			if !valid && !strings.Contains(s.Text, "no command") {
				t.Errorf("%s %q: the text does not say why there is no command: %s", dialect, name, s.Text)
			}
		}
	}
	// Slurm accepts upper case; Kubernetes does not.
	if !ValidNodeName(DialectSlurm, "Node-Upper") || ValidNodeName(DialectKubectl, "Node-Upper") {
		t.Error("case rules")
	}
}

func TestSuggestionCommands(t *testing.T) {
	idle := NodeReport{Name: "node-gpu-08", GPUs: 8, Models: []string{"A100-SXM4-80GB"}, Verdict: VerdictIdle, PriceUSDPerHour: 18.44, IdleIntervals: []Interval{{60, 900}},
		ObservedS: 900, IdleShare: ptr(840.0 / 900), IdleNow: true}
	stalled := NodeReport{Name: "node-gpu-04", GPUs: 8, Models: []string{"H200"}, Verdict: VerdictStalled, PriceUSDPerHour: 43.26, IdleIntervals: []Interval{{0, 300}}, PendingWorkloads: 2,
		ObservedS: 600, IdleShare: ptr(0.5)}
	accs := map[string]*nodeAcc{
		"node-gpu-08": {},
		"node-gpu-04": {workloads: workloadSet{list: []profile.Workload{
			{ID: "ml/a", Name: "a", Kind: "pod", State: "pending", Labels: map[string]string{"namespace": "ml"}},
			{ID: "x/$(id)", Name: "$(id)", Kind: "pod", State: "pending", Labels: map[string]string{"namespace": "x"}},
		}}},
	}
	got := suggest([]NodeReport{idle, stalled}, accs, DialectKubectl, "")
	if got[0].Kind != SuggestRebindPending || got[1].Kind != SuggestReleaseNode {
		t.Fatalf("order: %+v", got)
	}
	// 18.44 $/h × 840/900 = 17.2107 $/h; 43.26 × 0.5 = 21.63 $/h.
	if want := "node-gpu-08: idle 93% of 15m observed and idle now for 14m (8 × A100-SXM4-80GB), release it: saves about $17.21/h (93% of its $18.44/h)"; got[1].Text != want {
		t.Errorf("text %q", got[1].Text)
	}
	near(t, "release saving", got[1].SavingsUSDPerHour, 17.2106667)
	near(t, "stalled saving", got[0].SavingsUSDPerHour, 21.63)
	if want := "kubectl drain node-gpu-08 --ignore-daemonsets --timeout=300s || { kubectl uncordon node-gpu-08; false; }"; got[1].Command != want {
		t.Errorf("command %q", got[1].Command)
	}
	// A node still running a workload gets no drain: its pods move with a
	// plan's mechanics first (#26).
	held := idle
	held.RunningWorkloads = 1
	busy := suggest([]NodeReport{held}, accs, DialectKubectl, "")[0]
	if busy.Command != "" || !strings.Contains(busy.Text, "no command: its 1 running workload(s) must move first; seedance recommend") {
		t.Errorf("a node with a running pod: %q / %s", busy.Command, busy.Text)
	}

	if c := got[0].Command; c != "kubectl describe pod -n ml a && kubectl describe node node-gpu-04" || !strings.Contains(got[0].Text, `no command for "x/$(id)"`) {
		t.Errorf("stalled: %q / %q", c, got[0].Text)
	}
	slurm := suggest([]NodeReport{idle}, accs, DialectSlurm, "")[0]
	if want := "scontrol update NodeName=node-gpu-08 State=DRAIN Reason='seedance: idle for 14m'"; slurm.Command != want {
		t.Errorf("slurm %q", slurm.Command)
	}
	if !strings.Contains(slurm.Text, "DRAIN stops new jobs from starting there; running jobs finish first") || strings.Contains(slurm.Text, "evicted") {
		t.Errorf("slurm text misdescribes DRAIN: %s", slurm.Text)
	}
	if none := suggest([]NodeReport{idle}, accs, DialectNone, "")[0]; none.Command != "" {
		t.Errorf("dialect none made %q", none.Command)
	}
}

// TestNoDrainUnlessIdleNow: a node idle most of the window but busy at its
// end gets advice without a drain command.
func TestNoDrainUnlessIdleNow(t *testing.T) {
	n := NodeReport{Name: "node-gpu-03", GPUs: 8, Models: []string{"H100"}, Verdict: VerdictIdle, PriceUSDPerHour: 40,
		IdleIntervals: []Interval{{0, 1200}, {1500, 2100}, {2200, 2400}, {2500, 2800}}, ObservedS: 3600, IdleShare: ptr(2300.0 / 3600)}
	accs := map[string]*nodeAcc{"node-gpu-03": {}}
	for _, d := range []string{DialectKubectl, DialectSlurm} {
		s := suggest([]NodeReport{n}, accs, d, "")[0]
		if s.Kind != SuggestScheduleNode || s.Command != "" {
			t.Fatalf("%s: %+v", d, s)
		}
		if want := "node-gpu-03: idle 64% of 1h00m observed, in 4 stretches (8 × H100) but busy at the end of the window: scale it down on a schedule or consolidate its work; about $25.56/h at stake"; s.Text != want {
			t.Errorf("text %q", s.Text)
		}
		near(t, "saving", s.SavingsUSDPerHour, 40*2300.0/3600)
	}
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
