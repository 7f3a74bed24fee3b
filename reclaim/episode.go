package reclaim

import (
	"fmt"
	"time"
)

// Episode states. An episode begins when a target becomes a candidate and
// ends dropped (busy again, out of scope), kept, failed (the action was
// refused) or acted; an acted episode ends restored.
const (
	Noticing = "noticing" // a candidate; its notice is not yet delivered
	Noticed  = "noticed"  // the notice was delivered: the grace runs to Deadline
	Acting   = "acting"   // one replica claimed the action (recorded before it is made)
	Acted    = "acted"
	Failed   = "failed"
	Dropped  = "dropped"
	KeptOut  = "kept" // the owner kept it: no action for this episode
	Restored = "restored"
)

// Open says whether an episode in state s still decides what happens next.
func Open(s string) bool { return s == Noticing || s == Noticed || s == Acting }

// Episode is one idle run of one target, as the ledger keeps it.
type Episode struct {
	ID        int64
	Cluster   string
	Target    Target
	IdleSince time.Time
	State     string
	// Notices counts delivered notices; Attempts the failed deliveries
	// since the last one, LastError the last failure.
	Notices, Attempts int
	LastError         string
	NoticedAt         time.Time
	Deadline          time.Time
	// ActedAt, Action and Previous (the replica count it had, for
	// restore) are set when it acted; RestoredAt when it was restored.
	ActedAt, RestoredAt time.Time
	Action, Previous    string
	// The figures at the last notice.
	GPUs                               int
	Model                              string
	IdleGPUHours, USDSoFar, USDPerHour float64
	Labels                             map[string]string
	Updated                            time.Time
}

// Keep is an owner's answer: no action on Target before Until.
type Keep struct {
	Cluster string
	Target  Target
	Until   time.Time
	Reason  string
	By      string
	At      time.Time
}

// Step kinds: what a pass does for a target.
const (
	StepNone     = "none"
	StepNotice   = "notice"   // begin an episode (or resend its notice)
	StepWait     = "wait"     // grace running, or data unknown
	StepAct      = "act"      // the grace ended on a fresh candidate
	StepDrop     = "drop"     // end the episode: busy again or out of scope
	StepKept     = "keep"     // kept by its owner
	StepNoAction = "noaction" // notice only: seedance cannot act on it
)

// StaleClaim is how long an acting episode stays claimed: a replica killed
// between its claim and its record leaves the claim, which another takes
// over after this (every action is idempotent).
const StaleClaim = 10 * time.Minute

// Step is what a pass does about one target.
type Step struct {
	Kind string
	// Why says it in words, for the pass's line.
	Why string
	// NewEpisode: the assessment is a new idle run; the open episode (if
	// any) is dropped first.
	NewEpisode bool
}

// Decide is the next step of a target's episode from a fresh assessment,
// the open episode (nil for none) and the keep in force (nil for none).
func Decide(a Assessment, ep *Episode, keep *Keep, now time.Time, p Policy) Step {
	if ep == nil {
		if a.Verdict != Candidate {
			return Step{Kind: StepNone, Why: a.Reason}
		}
		if keep != nil && now.Before(keep.Until) {
			return Step{Kind: StepKept, Why: "kept until " + clock(keep.Until) + keptBy(keep)}
		}
		return Step{Kind: StepNotice, NewEpisode: true, Why: "idle for " + idleFor(a)}
	}
	switch a.Verdict {
	case Unknown:
		return Step{Kind: StepWait, Why: "unknown, nothing done: " + a.Reason}
	case Busy, Idle:
		return Step{Kind: StepDrop, Why: "busy again: " + a.Reason}
	case Spared:
		return Step{Kind: StepDrop, Why: a.Reason}
	}
	if !a.AtLeast && a.IdleSince.After(ep.IdleSince) {
		return Step{Kind: StepNotice, NewEpisode: true, Why: "active since its last notice, idle again for " + idleFor(a)}
	}
	if keep != nil && now.Before(keep.Until) {
		return Step{Kind: StepKept, Why: "kept until " + clock(keep.Until) + keptBy(keep)}
	}
	switch ep.State {
	case Noticing:
		if ep.LastError == "" && now.Sub(ep.Updated) < StaleClaim {
			// Begun (or claimed) by a pass that is sending it now, or was
			// killed sending it: sent again once the claim is stale.
			return Step{Kind: StepWait, Why: "another pass is notifying it since " + clock(ep.Updated)}
		}
		return Step{Kind: StepNotice, Why: fmt.Sprintf("the notice is not delivered yet (%d tries)", ep.Attempts)}
	case Acting:
		if now.Sub(ep.Updated) < StaleClaim {
			return Step{Kind: StepWait, Why: "another pass is acting on it since " + clock(ep.Updated)}
		}
	}
	if ep.State == Noticed && now.Before(ep.Deadline) {
		if p.Renotify > 0 && now.Sub(ep.NoticedAt) >= p.Renotify {
			return Step{Kind: StepNotice, Why: "notice resent (renotify " + dur(p.Renotify.Seconds()) + ")"}
		}
		return Step{Kind: StepWait, Why: "grace until " + clock(ep.Deadline)}
	}
	if why := a.Actionable(); why != "" {
		return Step{Kind: StepNoAction, Why: why}
	}
	return Step{Kind: StepAct, Why: "idle for " + idleFor(a) + ", grace ended " + clock(ep.Deadline)}
}

func keptBy(k *Keep) string {
	s := ""
	if k.By != "" {
		s += " by " + k.By
	}
	if k.Reason != "" {
		s += ": " + k.Reason
	}
	return s
}

func idleFor(a Assessment) string {
	if a.AtLeast {
		return "at least " + dur(a.IdleFor.Seconds())
	}
	return dur(a.IdleFor.Seconds())
}

// clock writes a time to the minute, in UTC, with its date.
func clock(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }
