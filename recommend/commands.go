package recommend

import (
	"fmt"
	"strings"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/internal/shell"
	"github.com/seedance/seedance/profile"
)

// Dialects of the commands in an analysis' suggestions (analyze.dialect).
const (
	DialectKubectl = shell.Kubectl
	DialectSlurm   = shell.Slurm
	DialectNone    = shell.None
)

// Commands writes the command of each of the analysis' suggestions in a
// dialect, and adds to a suggestion's text what the dialect changes: why
// there is no command, what Slurm's DRAIN does. Every name in a command is
// checked for the dialect and quoted for the shell. Analysis writes no
// command: this is where the dialects of suggestions live, beside the
// plan's scripts.
//
// It writes into sugs, the report's copy of the analysis' suggestions
// (report.New); r is the analysis they came from.
func Commands(sugs []analyze.Suggestion, r *analyze.Report, dialect string) {
	nodes := make(map[string]*analyze.NodeReport, len(r.Nodes))
	for i := range r.Nodes {
		nodes[r.Nodes[i].Name] = &r.Nodes[i]
	}
	for i := range sugs {
		s := &sugs[i]
		n := nodes[s.Node]
		switch {
		case s.Kind == analyze.SuggestReleaseNode && n != nil:
			releaseCommand(s, n, dialect, r.PendingUnknown)
		case s.Kind == analyze.SuggestRebindPending && n != nil && len(n.WaitingFor) > 0:
			waitingCommand(s, n, dialect)
		case s.Kind == analyze.SuggestRebindPending && s.Action != nil:
			pendingCommand(s, s.Action.Pending, dialect)
		case s.Kind == analyze.SuggestRebindNUMA && s.Action != nil:
			s.Command = tasksetCommand(s.Action.CPUs, s.Action.PIDs)
		case s.Kind == analyze.SuggestIdleHolder && s.Action != nil && s.Action.Cancel != "":
			s.Command = "scancel " + shell.Quote(s.Action.Cancel)
		}
	}
}

// releaseCommand drains a node idle now: a node no GPU workload runs on,
// whose name is valid, while the pending work is known.
func releaseCommand(s *analyze.Suggestion, n *analyze.NodeReport, dialect, pendingUnknown string) {
	switch {
	case dialect == DialectSlurm:
		// Slurm's DRAIN stops new jobs from starting; running ones finish.
		s.Text += " (DRAIN stops new jobs from starting there; running jobs finish first)"
	case n.RunningWorkloads > 0 && dialect == DialectKubectl:
		// Its pods must move first, with the mechanics of a plan (docs/recommend.md).
		s.Text += fmt.Sprintf(" (no command: its %d running workload(s) must move first; seedance recommend writes the plan that moves them and then drains it)", n.RunningWorkloads)
		return
	}
	if pendingUnknown != "" && dialect != DialectNone {
		s.Text += " (no command: the work waiting for GPUs is unknown, and may wait for this node; see pending_unknown)"
		return
	}
	if !shell.ValidNodeName(dialect, n.Name) {
		s.Text += fmt.Sprintf(" (no command: %q is not a valid %s node name)", n.Name, dialect)
		return
	}
	q := shell.Quote(n.Name)
	switch dialect {
	case DialectKubectl:
		// No GPU workload runs there: the drain moves what else runs, within
		// disruption budgets, and undoes its cordon if it cannot (a pod
		// without a controller, local data): the node is left as it was.
		s.Command = fmt.Sprintf("kubectl drain %s --ignore-daemonsets --timeout=300s || { kubectl uncordon %s; false; }", q, q)
	case DialectSlurm:
		s.Command = fmt.Sprintf("scontrol update NodeName=%s State=DRAIN Reason=%s", q, shell.Quote("seedance: idle for "+n.IdleFor()))
	}
}

// waitingCommand shows the unscheduled work an idle node could run, and
// the node.
func waitingCommand(s *analyze.Suggestion, n *analyze.NodeReport, dialect string) {
	if !shell.ValidNodeName(dialect, n.Name) || dialect == DialectNone {
		return
	}
	switch dialect {
	case DialectKubectl:
		var cmds []string
		for _, id := range n.WaitingFor {
			if ns, name, ok := strings.Cut(id, "/"); ok && shell.ValidPod(ns, name) {
				cmds = append(cmds, describePod(ns, name))
			}
		}
		s.Command = strings.Join(append(cmds, "kubectl describe node "+shell.Quote(n.Name)), " && ")
	case DialectSlurm:
		s.Command = squeuePending(n.Name)
	}
}

// pendingCommand shows the work pending on a node, and the node.
func pendingCommand(s *analyze.Suggestion, pending []profile.Workload, dialect string) {
	if !shell.ValidNodeName(dialect, s.Node) {
		s.Text += fmt.Sprintf(" (no command: %q is not a valid %s node name)", s.Node, dialect)
		return
	}
	switch dialect {
	case DialectKubectl:
		var cmds []string
		for _, w := range pending {
			ns, name := w.Labels["namespace"], w.Name
			if w.Kind != profile.KindPod || !shell.ValidPod(ns, name) {
				s.Text += fmt.Sprintf(" (no command for %q: not a valid pod reference)", w.ID)
				continue
			}
			cmds = append(cmds, describePod(ns, name))
		}
		cmds = append(cmds, "kubectl describe node "+shell.Quote(s.Node))
		s.Command = strings.Join(cmds, " && ")
	case DialectSlurm:
		s.Command = squeuePending(s.Node)
	}
}

func describePod(ns, name string) string {
	return fmt.Sprintf("kubectl describe pod -n %s %s", shell.Quote(ns), shell.Quote(name))
}

// squeuePending lists Slurm's pending jobs with their reasons, and shows
// the node.
func squeuePending(node string) string {
	return fmt.Sprintf("squeue --states=PENDING --format=%s && scontrol show node %s", shell.Quote("%i %j %r"), shell.Quote(node))
}

// tasksetCommand binds every process to the CPUs.
func tasksetCommand(cpus string, pids []int) string {
	var cmds []string
	for _, pid := range pids {
		if pid > 0 {
			cmds = append(cmds, fmt.Sprintf("taskset -a -cp %s %d", shell.Quote(cpus), pid))
		}
	}
	return strings.Join(cmds, " && ")
}
