package analyze

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/seedance/seedance/profile"
)

// suggest makes a suggestion for every idle and stalled node, the largest
// saving first. Analysis writes no command: the dialect that writes them
// is the plan's side's (recommend.Commands), from each suggestion's kind,
// node and Action.
func suggest(nodes []NodeReport, accs map[string]*nodeAcc) []Suggestion {
	out := []Suggestion{}
	for _, n := range nodes {
		if n.Stale && (n.Verdict == VerdictIdle || n.Verdict == VerdictStalled) {
			out = append(out, staleNode(n))
			continue
		}
		switch n.Verdict {
		case VerdictIdle:
			if n.IdleNow {
				out = append(out, releaseNode(n))
			} else {
				out = append(out, scheduleNode(n))
			}
		case VerdictStalled:
			if len(n.WaitingFor) > 0 {
				out = append(out, waitingFor(n))
				continue
			}
			out = append(out, rebindPending(n, accs[n.Name].pending()))
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

// IdleFor is how long the node sat idle in all, as people say it: 14m.
func (n NodeReport) IdleFor() string {
	return FormatDuration(seconds(length(n.IdleIntervals)))
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// share is the node's idle share, 0 when unknown.
func share(n NodeReport) float64 {
	if n.IdleShare == nil {
		return 0
	}
	return *n.IdleShare
}

// savingsPerHour is what releasing the node saves on average: its price for
// the share of the time it sat idle, not the full price.
func savingsPerHour(n NodeReport) float64 { return sig(n.PriceUSDPerHour * share(n)) }

// idleSummary is "idle 93% of 2h00m observed, in 2 stretches".
func idleSummary(n NodeReport) string {
	s := fmt.Sprintf("idle %.0f%% of %s observed", 100*share(n), FormatDuration(seconds(n.ObservedS)))
	if k := len(n.IdleIntervals); k > 1 {
		s += fmt.Sprintf(", in %d stretches", k)
	}
	return s
}

// idleNowFor is how long the node has been idle at the end of the window.
func idleNowFor(n NodeReport) string {
	last := n.IdleIntervals[len(n.IdleIntervals)-1]
	return FormatDuration(seconds(last.EndS - last.StartS))
}

// scheduleNode advises on a node that is mostly idle but was busy at the
// end of the window: draining it now would evict live work, so there is no
// command, only the pattern to act on.
func scheduleNode(n NodeReport) Suggestion {
	return Suggestion{Kind: SuggestScheduleNode, Node: n.Name, SavingsUSDPerHour: savingsPerHour(n),
		Text: fmt.Sprintf("%s: %s (%s) but busy at the end of the window: scale it down on a schedule or consolidate its work; about $%.2f/h at stake",
			n.Name, idleSummary(n), gpusText(n), savingsPerHour(n))}
}

// SuggestStaleData is the kind of the suggestion on a node whose data ends
// too long before the window does.
const SuggestStaleData = "stale-data"

// staleNode advises on a node that looked idle but whose data stopped:
// what it does now is unknown, so there is no command, only the age.
func staleNode(n NodeReport) Suggestion {
	return Suggestion{Kind: SuggestStaleData, Node: n.Name,
		Text: fmt.Sprintf("%s: %s, but its newest sample is %s old at the end of the window: what it does now is unknown; check its exporter before acting on it (no command)",
			n.Name, idleSummary(n), FormatDuration(seconds(n.DataAgeS)))}
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

// releaseNode advises releasing a node idle now; its command (a drain)
// is the dialect's, which says when there is none.
func releaseNode(n NodeReport) Suggestion {
	return Suggestion{Kind: SuggestReleaseNode, Node: n.Name, SavingsUSDPerHour: savingsPerHour(n),
		Text: fmt.Sprintf("%s: %s and idle now for %s (%s), release it: saves about $%.2f/h (%.0f%% of its $%.2f/h)",
			n.Name, idleSummary(n), idleNowFor(n), gpusText(n), savingsPerHour(n), 100*share(n), n.PriceUSDPerHour)}
}

// waitingFor advises on an idle node that unscheduled work could run: it
// is not released, and the question is why the scheduler does not use it.
func waitingFor(n NodeReport) Suggestion {
	return Suggestion{Kind: SuggestRebindPending, Node: n.Name, SavingsUSDPerHour: savingsPerHour(n),
		Text: fmt.Sprintf("%s: idle now (%s) while unscheduled work waits for GPUs it could run: %s; do not release it: look at why it is not scheduled here (taints, selectors, quotas)",
			n.Name, gpusText(n), strings.Join(n.WaitingFor, ", "))}
}

// rebindPending advises looking at why the work pending on a node is not
// scheduled while its GPUs sit idle; Action.Pending are the workloads to
// look at.
func rebindPending(n NodeReport, pending []profile.Workload) Suggestion {
	ids := make([]string, 0, len(pending))
	for _, w := range pending {
		ids = append(ids, w.ID)
	}
	return Suggestion{Kind: SuggestRebindPending, Node: n.Name, SavingsUSDPerHour: savingsPerHour(n), Action: &Action{Pending: pending},
		Text: fmt.Sprintf("%s: %d pending workload(s) (%s) while its %s sat idle for %s (%.0f%% of %s observed): look at why they are not scheduled here",
			n.Name, len(pending), strings.Join(ids, ", "), gpusText(n), n.IdleFor(), 100*share(n), FormatDuration(seconds(n.ObservedS)))}
}
