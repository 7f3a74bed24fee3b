package recommend

import (
	"strings"
	"testing"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/internal/shell"
	"github.com/seedance/seedance/profile"
)

func ptr(v float64) *float64 { return &v }

// withCommands is a report of the nodes, one suggestion each of the kind
// given, with the commands of the dialect.
func withCommands(dialect, pendingUnknown string, nodes []analyze.NodeReport, kinds ...string) []analyze.Suggestion {
	r := &analyze.Report{Nodes: nodes, PendingUnknown: pendingUnknown}
	for i, n := range nodes {
		r.Suggestions = append(r.Suggestions, analyze.Suggestion{Kind: kinds[i], Node: n.Name, Text: n.Name})
	}
	Commands(r.Suggestions, r, dialect)
	return r.Suggestions
}

// idleNode is node-gpu-08, idle now for 14m of 15m.
func idleNode(name string) analyze.NodeReport {
	return analyze.NodeReport{Name: name, GPUs: 8, Models: []string{"A100-SXM4-80GB"}, Verdict: analyze.VerdictIdle, PriceUSDPerHour: 18.44,
		IdleIntervals: []analyze.Interval{{StartS: 60, EndS: 900}}, ObservedS: 900, IdleShare: ptr(840.0 / 900), IdleNow: true}
}

// TestSuggestionsRefuseInvalidNames: a name that is not a valid node name
// in the dialect gets no command, and the text says why.
func TestSuggestionsRefuseInvalidNames(t *testing.T) {
	for _, dialect := range []string{DialectKubectl, DialectSlurm} {
		for _, name := range []string{"node;reboot", "$(id)", "Node-Upper", "node\nx", "nœud", "a'b"} {
			s := withCommands(dialect, "", []analyze.NodeReport{idleNode(name)}, analyze.SuggestReleaseNode)[0]
			valid := shell.ValidNodeName(dialect, name)
			if valid != (s.Command != "") {
				t.Errorf("%s %q: valid=%v command=%q", dialect, name, valid, s.Command)
			}
			if !valid && !strings.Contains(s.Text, "no command") {
				t.Errorf("%s %q: the text does not say why there is no command: %s", dialect, name, s.Text)
			}
		}
	}
	// Slurm accepts upper case; Kubernetes does not.
	if !shell.ValidNodeName(DialectSlurm, "Node-Upper") || shell.ValidNodeName(DialectKubectl, "Node-Upper") {
		t.Error("case rules")
	}
}

// TestReleaseCommands: a drain in each dialect; none where a running
// workload must move first or the pending work is unknown.
func TestReleaseCommands(t *testing.T) {
	idle := idleNode("node-gpu-08")
	s := withCommands(DialectKubectl, "", []analyze.NodeReport{idle}, analyze.SuggestReleaseNode)[0]
	if want := "kubectl drain node-gpu-08 --ignore-daemonsets --timeout=300s || { kubectl uncordon node-gpu-08; false; }"; s.Command != want || s.Text != "node-gpu-08" {
		t.Errorf("command %q, text %q", s.Command, s.Text)
	}
	// A node still running a workload gets no drain: its pods move with a
	// plan's mechanics first (#26).
	held := idle
	held.RunningWorkloads = 1
	s = withCommands(DialectKubectl, "", []analyze.NodeReport{held}, analyze.SuggestReleaseNode)[0]
	if s.Command != "" || !strings.Contains(s.Text, "no command: its 1 running workload(s) must move first; seedance recommend") {
		t.Errorf("a node with a running pod: %q / %s", s.Command, s.Text)
	}
	s = withCommands(DialectSlurm, "", []analyze.NodeReport{idle}, analyze.SuggestReleaseNode)[0]
	if want := "scontrol update NodeName=node-gpu-08 State=DRAIN Reason='seedance: idle for 14m'"; s.Command != want {
		t.Errorf("slurm %q", s.Command)
	}
	if !strings.Contains(s.Text, "DRAIN stops new jobs from starting there; running jobs finish first") || strings.Contains(s.Text, "evicted") {
		t.Errorf("slurm text misdescribes DRAIN: %s", s.Text)
	}
	if s := withCommands(DialectNone, "", []analyze.NodeReport{idle}, analyze.SuggestReleaseNode)[0]; s.Command != "" || s.Text != "node-gpu-08" {
		t.Errorf("dialect none made %q / %q", s.Command, s.Text)
	}
	s = withCommands(DialectKubectl, "kube-state-metrics is not scraped", []analyze.NodeReport{idle}, analyze.SuggestReleaseNode)[0]
	if s.Command != "" || !strings.Contains(s.Text, "no command: the work waiting for GPUs is unknown") {
		t.Errorf("pending unknown: %q / %s", s.Command, s.Text)
	}
}

// TestPendingCommands: the pending pods are described, an invalid pod
// reference is named and left out; unscheduled work a node could run is
// described too.
func TestPendingCommands(t *testing.T) {
	stalled := analyze.NodeReport{Name: "node-gpu-04", Verdict: analyze.VerdictStalled}
	r := &analyze.Report{Nodes: []analyze.NodeReport{stalled}, Suggestions: []analyze.Suggestion{{Kind: analyze.SuggestRebindPending, Node: "node-gpu-04",
		Action: &analyze.Action{Pending: []profile.Workload{
			{ID: "ml/a", Name: "a", Kind: "pod", State: "pending", Labels: map[string]string{"namespace": "ml"}},
			{ID: "x/$(id)", Name: "$(id)", Kind: "pod", State: "pending", Labels: map[string]string{"namespace": "x"}},
		}}}}}
	Commands(r.Suggestions, r, DialectKubectl)
	if s := r.Suggestions[0]; s.Command != "kubectl describe pod -n ml a && kubectl describe node node-gpu-04" || !strings.Contains(s.Text, `no command for "x/$(id)"`) {
		t.Errorf("stalled: %q / %q", s.Command, s.Text)
	}
	waiting := stalled
	waiting.WaitingFor = []string{"ml/train-1"}
	s := withCommands(DialectKubectl, "", []analyze.NodeReport{waiting}, analyze.SuggestRebindPending)[0]
	if s.Command != "kubectl describe pod -n ml train-1 && kubectl describe node node-gpu-04" {
		t.Errorf("waiting: %q", s.Command)
	}
	s = withCommands(DialectSlurm, "", []analyze.NodeReport{waiting}, analyze.SuggestRebindPending)[0]
	if s.Command != "squeue --states=PENDING --format='%i %j %r' && scontrol show node node-gpu-04" {
		t.Errorf("waiting, slurm: %q", s.Command)
	}
}

// TestActionCommands: a NUMA rebind binds every process with taskset; an
// idle Slurm job is cancelled; nothing else gets a command.
func TestActionCommands(t *testing.T) {
	r := &analyze.Report{Suggestions: []analyze.Suggestion{
		{Kind: analyze.SuggestRebindNUMA, Node: "n", Action: &analyze.Action{CPUs: "0-15,32-47", PIDs: []int{0, 4242, 4243}}},
		{Kind: analyze.SuggestIdleHolder, Node: "n", Action: &analyze.Action{Cancel: "4242"}},
		{Kind: analyze.SuggestIdleHolder, Node: "n"},
		{Kind: analyze.SuggestStaleData, Node: "n"},
	}}
	Commands(r.Suggestions, r, DialectNone)
	want := []string{"taskset -a -cp 0-15,32-47 4242 && taskset -a -cp 0-15,32-47 4243", "scancel 4242", "", ""}
	for i, s := range r.Suggestions {
		if s.Command != want[i] {
			t.Errorf("%s: %q, want %q", s.Kind, s.Command, want[i])
		}
	}
}
