package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/seedance/seedance/ledger"
	"github.com/seedance/seedance/reclaim"
	"github.com/seedance/seedance/reclaim/act"
)

// notice begins an episode (or resends its notice) and delivers it; the
// grace starts only when one channel took it.
func (p *passRun) notice(ctx context.Context, a reclaim.Assessment, ep *reclaim.Episode, st reclaim.Step) {
	deadline := p.now.Add(p.pol.Grace)
	if ep != nil && !st.NewEpisode && !ep.Deadline.IsZero() {
		deadline = ep.Deadline
	}
	n := p.noticeOf(a, deadline)
	if !p.spec.Execute || p.l == nil {
		p.line(a.Target, "would notify", n.Text)
		return
	}
	if st.NewEpisode {
		if ep != nil && !p.transition(ctx, ep, func(e *reclaim.Episode) { e.State = reclaim.Dropped }, "dropped", a.Target, "active since its notice") {
			return
		}
		ep = &reclaim.Episode{Cluster: p.l.Cluster(), Target: a.Target, IdleSince: a.IdleSince, State: reclaim.Noticing,
			Labels: a.Labels, Updated: p.now}
		if err := p.l.BeginEpisode(ctx, *ep); errors.Is(err, ledger.ErrLost) {
			p.line(a.Target, "left alone", err.Error())
			return
		} else if err != nil {
			p.fail(fmt.Sprintf("%s: record its episode: %v", a.Target, err))
			return
		}
	}
	if !st.NewEpisode && !p.claimNotice(ctx, a, ep, st) {
		return
	}
	delivered, lastErr := p.deliver(ctx, n)
	if delivered == 0 {
		p.transition(ctx, ep, func(e *reclaim.Episode) { e.Attempts++; e.LastError = lastErr }, "notice not delivered", a.Target, lastErr)
		return
	}
	if p.transition(ctx, ep, func(e *reclaim.Episode) {
		e.State, e.Notices, e.Attempts, e.LastError = reclaim.Noticed, e.Notices+1, 0, ""
		e.NoticedAt, e.Deadline = p.now, deadline
		e.GPUs, e.Model, e.IdleGPUHours, e.USDSoFar, e.USDPerHour = a.GPUs, a.Model, a.IdleGPUHours, a.USDSoFar, a.USDPerHour
	}, "notified", a.Target, n.Text) {
		p.out.Notices++
	}
}

// claimNotice records, before a notice is sent again, that this pass
// sends it (conditional on the episode as read): of two passes that read
// it, one sends. A resent notice (renotify) is recorded as sent at the
// claim, so that it is not resent twice; a retried one clears its error,
// so that another pass waits for this one (reclaim.Decide).
func (p *passRun) claimNotice(ctx context.Context, a reclaim.Assessment, ep *reclaim.Episode, st reclaim.Step) bool {
	claim := func(e *reclaim.Episode) { e.LastError = "" }
	if ep.State == reclaim.Noticed {
		claim = func(e *reclaim.Episode) { e.NoticedAt = p.now }
	}
	return p.transition(ctx, ep, claim, "notifying", a.Target, st.Why)
}

// deliver sends the notice through every channel; a failure is reported
// (exit 1) and retried by the next pass while no channel took it.
func (p *passRun) deliver(ctx context.Context, n act.Notice) (int, string) {
	delivered, last := 0, ""
	for _, c := range p.spec.Notifiers {
		if err := c.Notify(ctx, n, p.now); err != nil {
			last = c.Name() + ": " + err.Error()
			p.fail(fmt.Sprintf("%s: notice through %s", n.Target, last))
			continue
		}
		delivered++
	}
	return delivered, last
}

func (p *passRun) noticeOf(a reclaim.Assessment, deadline time.Time) act.Notice {
	return act.Notice{Cluster: p.spec.Config.Ledger.Cluster, Target: a.Target.String(), Text: reclaim.Notice(a, deadline),
		Labels: a.Labels, GPUs: a.GPUs, Model: a.Model, IdleSince: a.IdleSince, IdleFor: a.IdleFor.String(),
		IdleGPUHours: a.IdleGPUHours, USDSoFar: reclaim.Cents(a.USDSoFar), USDPerHour: reclaim.Cents(a.USDPerHour),
		Deadline: deadline, Action: a.Verb()}
}

// act acts on a target whose grace ended, after its owner's answers, the
// caps and the target itself (its exemptions, re-read) allow it. The
// claim is recorded before the action, the result after it.
func (p *passRun) act(ctx context.Context, a reclaim.Assessment, ep *reclaim.Episode, st reclaim.Step) {
	if why, err := p.answered(ctx, a, ep); err != nil || why != "" {
		if err == nil {
			p.line(a.Target, "kept", why)
		}
		return
	}
	if why := p.caps.allow(a); why != "" {
		p.line(a.Target, "capped", why)
		return
	}
	if !p.spec.Execute {
		p.line(a.Target, "would be "+a.Verb()+" now", st.Why)
		return
	}
	actor, err := p.spec.Actors.For(a.Target)
	if err != nil {
		p.fail(err.Error())
		return
	}
	if why, err := actor.Check(ctx, a.Target, p.now); err != nil {
		p.fail(fmt.Sprintf("%s: read it before acting: %v", a.Target, err))
		return
	} else if why != "" {
		if ep.State != reclaim.Acting || !p.foundDone(ctx, a, ep, actor) {
			p.line(a.Target, "kept", why)
		}
		return
	}
	claim := fmt.Sprintf("%s by %s: %d GPUs idle for %s, $%.2f so far, $%.2f an hour", a.Verb(), p.spec.By(),
		a.GPUs, a.IdleFor.Round(time.Minute), reclaim.Cents(a.USDSoFar), reclaim.Cents(a.USDPerHour))
	if !p.transition(ctx, ep, func(e *reclaim.Episode) { e.State = reclaim.Acting }, "acting", a.Target, claim) {
		return
	}
	p.caps.took(a)
	action, prev, err := actor.Act(ctx, a.Target, p.now)
	switch {
	case errors.Is(err, act.ErrRefused):
		p.out.Actions["refused"]++
		p.transition(ctx, ep, func(e *reclaim.Episode) { e.State, e.LastError = reclaim.Failed, err.Error() }, "refused", a.Target, err.Error())
	case err != nil:
		p.out.Actions["failed"]++
		p.fail(fmt.Sprintf("%s: %v (the next pass tries again after %s)", a.Target, err, reclaim.StaleClaim))
	default:
		p.acted(ctx, a, ep, action, prev, action+"; "+claim)
	}
}

// acted records the target's action.
func (p *passRun) acted(ctx context.Context, a reclaim.Assessment, ep *reclaim.Episode, action, prev, why string) {
	p.out.Actions["acted"]++
	p.transition(ctx, ep, func(e *reclaim.Episode) {
		e.State, e.ActedAt, e.Action, e.Previous = reclaim.Acted, p.now, action, prev
		e.IdleGPUHours, e.USDSoFar, e.USDPerHour = a.IdleGPUHours, a.USDSoFar, a.USDPerHour
	}, "acted", a.Target, why)
}

// foundDone records as acted a target whose stale claim's action was made
// after all (its pass stopped while its command ran on): the actor finds
// the job held or cancelled.
func (p *passRun) foundDone(ctx context.Context, a reclaim.Assessment, ep *reclaim.Episode, actor act.Actor) bool {
	d, ok := actor.(act.Doner)
	if !ok {
		return false
	}
	action, prev, done, err := d.Done(ctx, a.Target)
	if err != nil {
		p.fail(fmt.Sprintf("%s: read it before acting: %v", a.Target, err))
		return true
	}
	if done {
		p.acted(ctx, a, ep, action, prev, action)
	}
	return done
}

// answered asks each channel whether the owner answered the notice.
func (p *passRun) answered(ctx context.Context, a reclaim.Assessment, ep *reclaim.Episode) (string, error) {
	n := p.noticeOf(a, ep.Deadline)
	for _, c := range p.spec.Notifiers {
		why, err := c.Answered(ctx, n, p.now)
		if err != nil {
			p.fail(fmt.Sprintf("%s: ask %s for an answer before acting: %v", a.Target, c.Name(), err))
			return "", err
		}
		if why != "" {
			return why, nil
		}
	}
	return "", nil
}

// caps counts the actions a pass may still take: in the pass, in the
// hour, and in each namespace (or Slurm account).
type caps struct {
	run, hour int
	group     map[string]int // actions left per namespace or account
}

func (p *passRun) newCaps(ctx context.Context) (*caps, error) {
	c := &caps{run: p.pol.MaxActionsPerRun, hour: p.pol.MaxActionsPerHour, group: map[string]int{}}
	if p.l != nil {
		n, err := p.l.AuditCount(ctx, "acting", p.now.Add(-time.Hour))
		if err != nil {
			return nil, fmt.Errorf("reclaim: count the last hour's actions: %w", err)
		}
		c.hour -= n
	}
	count := map[string]int{}
	for _, a := range p.out.Assessments {
		count[groupOf(a)]++
	}
	for g, n := range count {
		c.group[g] = max(1, int(math.Floor(p.pol.MaxNamespaceShare*float64(n))))
	}
	return c, nil
}

// groupOf is the group a target's share cap counts in: its namespace, or
// its Slurm account.
func groupOf(a reclaim.Assessment) string {
	if a.Target.Slurm() {
		return "account " + a.Labels["account"]
	}
	return "namespace " + a.Target.Namespace
}

func (c *caps) allow(a reclaim.Assessment) string {
	switch g := groupOf(a); {
	case c.run <= 0:
		return "reclaim.max_actions_per_run reached"
	case c.hour <= 0:
		return "reclaim.max_actions_per_hour reached"
	case c.group[g] <= 0:
		return "reclaim.max_namespace_share of " + g + " reached"
	}
	return ""
}

func (c *caps) took(a reclaim.Assessment) {
	c.run--
	c.hour--
	c.group[groupOf(a)]--
}
