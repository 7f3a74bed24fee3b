package analyze

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/seedance/seedance/internal/shell"
	"github.com/seedance/seedance/profile"
)

// Dialects of the commands in suggestions.
const (
	DialectKubectl = shell.Kubectl
	DialectSlurm   = shell.Slurm
	DialectNone    = shell.None
)

// ValidNodeName reports whether name is a valid node name in the dialect.
func ValidNodeName(dialect, name string) bool { return shell.ValidNodeName(dialect, name) }

// ShellQuote quotes s for a POSIX shell.
func ShellQuote(s string) string { return shell.Quote(s) }

// suggest makes a suggestion for every idle and stalled node, the largest
// saving first.
func suggest(nodes []NodeReport, accs map[string]*nodeAcc, dialect string) []Suggestion {
	out := []Suggestion{}
	for _, n := range nodes {
		switch n.Verdict {
		case VerdictIdle:
			out = append(out, releaseNode(n, accs[n.Name].running(), dialect))
		case VerdictStalled:
			out = append(out, rebindPending(n, accs[n.Name].pending(), dialect))
		}
	}
	for _, n := range nodes {
		if acc := accs[n.Name]; acc != nil {
			out = append(out, numaSuggestions(acc)...)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].SavingsUSDPerHour > out[j].SavingsUSDPerHour })
	return out
}

func idleFor(n NodeReport) string {
	total := 0.0
	for _, iv := range n.IdleIntervals {
		total += iv.EndS - iv.StartS
	}
	return FormatDuration(time.Duration(total * float64(time.Second)))
}

// FormatDuration writes a duration the way people say it: 45s, 14m, 2h05m.
func FormatDuration(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

func gpusText(n NodeReport) string {
	return fmt.Sprintf("%d × %s", n.GPUs, strings.Join(n.Models, "+"))
}

func releaseNode(n NodeReport, running int, dialect string) Suggestion {
	s := Suggestion{Kind: SuggestReleaseNode, Node: n.Name, SavingsUSDPerHour: n.PriceUSDPerHour,
		Text: fmt.Sprintf("%s: idle for %s (%s), release it: saves $%.2f/h", n.Name, idleFor(n), gpusText(n), n.PriceUSDPerHour)}
	if running > 0 {
		// Draining evicts them; they ran in bursts between the idle spans.
		s.Text += fmt.Sprintf(" (its %d running workload(s) are evicted by the drain and must fit elsewhere)", running)
	}
	if !ValidNodeName(dialect, n.Name) {
		s.Text += fmt.Sprintf(" (no command: %q is not a valid %s node name)", n.Name, dialect)
		return s
	}
	q := ShellQuote(n.Name)
	switch dialect {
	case DialectKubectl:
		s.Command = fmt.Sprintf("kubectl cordon %s && kubectl drain %s --ignore-daemonsets --delete-emptydir-data", q, q)
	case DialectSlurm:
		s.Command = fmt.Sprintf("scontrol update NodeName=%s State=DRAIN Reason=%s", q, ShellQuote("seedance: idle for "+idleFor(n)))
	}
	return s
}

func rebindPending(n NodeReport, pending []profile.Workload, dialect string) Suggestion {
	ids := make([]string, 0, len(pending))
	for _, w := range pending {
		ids = append(ids, w.ID)
	}
	s := Suggestion{Kind: SuggestRebindPending, Node: n.Name, SavingsUSDPerHour: n.PriceUSDPerHour,
		Text: fmt.Sprintf("%s: %d pending workload(s) (%s) while its %s sat idle for %s: look at why they are not scheduled here",
			n.Name, len(pending), strings.Join(ids, ", "), gpusText(n), idleFor(n))}
	if !ValidNodeName(dialect, n.Name) {
		s.Text += fmt.Sprintf(" (no command: %q is not a valid %s node name)", n.Name, dialect)
		return s
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
			cmds = append(cmds, fmt.Sprintf("kubectl describe pod -n %s %s", ShellQuote(ns), ShellQuote(name)))
		}
		cmds = append(cmds, "kubectl describe node "+ShellQuote(n.Name))
		s.Command = strings.Join(cmds, " && ")
	case DialectSlurm:
		s.Command = fmt.Sprintf("squeue --states=PENDING --format=%s && scontrol show node %s", ShellQuote("%i %j %r"), ShellQuote(n.Name))
	}
	return s
}
