package reclaim

import (
	"fmt"
	"math"
	"time"

	"github.com/seedance/seedance/internal/shell"
)

// Verb is what the action does to the target, for a notice.
func Verb(t Target) string {
	switch t.Kind {
	case KindDeployment, KindStatefulSet, KindReplicaSet:
		return "scaled to 0"
	case KindJob:
		return "suspended"
	case KindPod:
		return "evicted"
	case KindSlurmJob:
		return "requeued and held (cancelled if it cannot be requeued)"
	}
	return "left as it is (seedance cannot act on it)"
}

// Cents rounds dollars to cents, half away from zero, as every figure of
// a notice is shown.
func Cents(usd float64) float64 { return math.Round(usd*100) / 100 }

// Notice is the text of a target's notice: what it held idle, for how
// long, what that cost and costs an hour, and what happens when.
func Notice(a Assessment, deadline time.Time) string {
	what := fmt.Sprintf("%d × %s", a.GPUs, a.Model)
	if a.Model == "" {
		what = fmt.Sprintf("%d GPUs", a.GPUs)
	}
	s := fmt.Sprintf("%s has held %s idle for %s: $%.2f so far, $%.2f an hour", a.Target, what, idleFor(a), Cents(a.USDSoFar), Cents(a.USDPerHour))
	if why := a.Actionable(); why != "" {
		return s + "; " + why
	}
	return s + fmt.Sprintf("; it will be %s at %s unless kept (seedance reclaim keep %s --for 8h)",
		a.Verb(), clock(deadline), shell.Quote(a.Target.String()))
}
