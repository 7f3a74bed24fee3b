package pipeline

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/seedance/seedance/internal/exit"
	"github.com/seedance/seedance/internal/table"
	"github.com/seedance/seedance/ledger"
	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/reclaim"
	"github.com/seedance/seedance/reclaim/act"
	"github.com/seedance/seedance/settings"
)

// ReclaimSpec is one reclaim pass: what it reads, the channels and actors,
// and whether it may act.
type ReclaimSpec struct {
	Config *settings.Config
	Inputs []string
	Stdin  io.Reader
	Source *RecordSpec
	// Execute lets the pass notify and act; without it the pass prints
	// what it would do and changes nothing (the dry run).
	Execute   bool
	Now       func() time.Time
	Notifiers []act.Notifier
	Actors    act.Actors
	// Line is called with each line the pass reports.
	Line func(string)
	// Who names who runs the pass (user@host), for the audit.
	Who string
	// Out, when set, takes the lines instead of Line, escaped for a
	// terminal and written when the pass ends.
	Out io.Writer
}

// By is who the audit names.
func (spec ReclaimSpec) By() string {
	if spec.Who == "" {
		return "seedance reclaim"
	}
	return spec.Who
}

// ReclaimPass is what one pass saw and did.
type ReclaimPass struct {
	Assessments []reclaim.Assessment
	Candidates  int
	Notices     int
	// Actions counts actions by result: acted, refused, failed.
	Actions map[string]int
	// Reclaimed is what the acted episodes in the ledger freed, to now
	// (nil without a ledger).
	Reclaimed *reclaim.Savings
	// Errors are what kept the pass from doing a step (an unreachable
	// API server, Alertmanager or database): the pass goes on with the
	// other targets and ends with exit 1.
	Errors []string
}

// Reclaim runs one pass: read, assess, and for each target the next step
// of its episode (docs/reclaim.md).
func Reclaim(ctx context.Context, spec ReclaimSpec) (*ReclaimPass, error) {
	if spec.Out != nil {
		w := bufio.NewWriter(spec.Out)
		defer w.Flush()
		spec.Line = func(s string) { fmt.Fprintln(w, table.Visible(s)) }
	}
	cfg := spec.Config
	pol, err := cfg.Reclaim.Policy()
	if err != nil {
		return nil, exit.Usagef("%v", err)
	}
	if spec.Execute && len(spec.Notifiers) == 0 {
		return nil, exit.Usagef("reclaim --execute needs a notice channel (--alertmanager-url, --webhook-url or reclaim.command): the grace period starts only when a notice was delivered")
	}
	if spec.Execute && cfg.Ledger.DSN == "" {
		return nil, exit.Usagef("reclaim --execute keeps its episodes in the ledger: give --ledger DSN")
	}
	now := spec.Now().UTC()
	as, err := spec.assess(ctx, pol, now)
	if err != nil {
		return nil, err
	}
	p := &passRun{spec: spec, pol: pol, now: now, out: &ReclaimPass{Assessments: as, Actions: map[string]int{}}}
	if cfg.Ledger.DSN != "" && (spec.Execute || !ledger.Absent(cfg.Ledger.DSN)) {
		l, err := ledger.Open(ctx, cfg.Ledger.DSN, ledger.Options{Cluster: cfg.Ledger.Cluster, ReadOnly: !spec.Execute})
		if err != nil {
			return nil, err
		}
		defer l.Close()
		p.l = l
	}
	if err := p.run(ctx); err != nil {
		return p.out, err
	}
	if len(p.out.Errors) > 0 {
		return p.out, fmt.Errorf("reclaim: %d step(s) could not be taken; the first: %s", len(p.out.Errors), p.out.Errors[0])
	}
	return p.out, nil
}

// assess reads the inputs (or the source) and assesses every target.
func (spec *ReclaimSpec) assess(ctx context.Context, pol reclaim.Policy, now time.Time) ([]reclaim.Assessment, error) {
	as := AnalyzeSpec{Config: spec.Config, Inputs: spec.Inputs, Stdin: spec.Stdin, Source: spec.Source}
	sources, _, _, closeAll, err := as.open(ctx)
	defer closeAll()
	if err != nil {
		return nil, err
	}
	streams := make([]*profile.Stream, len(sources))
	for i, s := range sources {
		streams[i] = s.Stream
	}
	out, err := reclaim.Assess(ctx, reclaim.Input{Streams: streams, Pricer: spec.Config.Pricing.Pricer(), Policy: pol, Now: now})
	if err != nil {
		if ctx.Err() != nil {
			return nil, interrupted("the data was read", ctx.Err())
		}
		return nil, err
	}
	return out, nil
}

// passRun is the state of one pass.
type passRun struct {
	spec ReclaimSpec
	pol  reclaim.Policy
	now  time.Time
	l    *ledger.Ledger
	out  *ReclaimPass
	// eps are the episodes read; open and closed point into it, and a
	// transition writes through.
	eps []reclaim.Episode
	// folded is what the compacted episodes freed (ledger.Folded).
	folded reclaim.Savings
	open   map[reclaim.Target]*reclaim.Episode
	// closed is each target's last episode acted on or refused.
	closed map[reclaim.Target]*reclaim.Episode
	keeps  map[reclaim.Target]reclaim.Keep
	caps   *caps
}

func (p *passRun) run(ctx context.Context) error {
	if err := p.load(ctx); err != nil {
		return err
	}
	var err error
	if p.caps, err = p.newCaps(ctx); err != nil {
		return err
	}
	for _, a := range p.out.Assessments {
		if a.Verdict == reclaim.Candidate {
			p.out.Candidates++
		}
		if err := ctx.Err(); err != nil {
			return exit.Interruptedf("reclaim interrupted; what was done is recorded: %w", err)
		}
		p.target(ctx, a)
	}
	if p.l != nil {
		// The pass's changes are in p.eps: transitions write through.
		saved := p.folded.Plus(reclaim.Saved(p.eps, p.now))
		p.out.Reclaimed = &saved
	}
	if p.l != nil && p.spec.Execute {
		if err := p.l.Compact(ctx, p.now.Add(-p.spec.Config.Reclaim.Retention)); err != nil {
			p.fail(fmt.Sprintf("compact the episodes: %v", err))
		}
	}
	return nil
}

// load reads the episodes and keeps: the episodes closed inside the
// retention too, so that an idle run that was acted on or refused is not
// begun again, and the acted ones are what the pass reports reclaimed.
func (p *passRun) load(ctx context.Context) error {
	p.open = map[reclaim.Target]*reclaim.Episode{}
	if p.l == nil {
		return nil
	}
	var err error
	if p.eps, err = p.l.Episodes(ctx, p.now.Add(-p.spec.Config.Reclaim.Retention)); err != nil {
		return fmt.Errorf("reclaim: read the episodes: %w", err)
	}
	if p.folded, err = p.l.Folded(ctx); err != nil {
		return fmt.Errorf("reclaim: read what compacted episodes freed: %w", err)
	}
	p.closed = map[reclaim.Target]*reclaim.Episode{}
	for i := range p.eps {
		ep := &p.eps[i]
		switch {
		case reclaim.Open(ep.State):
			p.open[ep.Target] = ep
		case ep.State == reclaim.Acted || ep.State == reclaim.Failed:
			if c := p.closed[ep.Target]; c == nil || ep.Updated.After(c.Updated) {
				p.closed[ep.Target] = ep
			}
		}
	}
	if p.keeps, err = p.l.Keeps(ctx, p.now); err != nil {
		return fmt.Errorf("reclaim: read the keeps: %w", err)
	}
	return nil
}

// target takes one target's next step.
func (p *passRun) target(ctx context.Context, a reclaim.Assessment) {
	a, ok := p.scalable(ctx, a)
	if !ok {
		return
	}
	ep := p.open[a.Target]
	var keep *reclaim.Keep
	if k, ok := p.keeps[a.Target]; ok {
		keep = &k
	}
	if c := p.closed[a.Target]; ep == nil && c != nil && a.Verdict == reclaim.Candidate && a.IdleSince.Before(c.Updated) {
		// Its data still shows the idle run that was acted on (or whose
		// action was refused): nothing more is done about that run.
		p.line(a.Target, c.State+" at "+c.Updated.Format(time.RFC3339), "the same idle run: nothing more is done until it is active again")
		return
	}
	st := reclaim.Decide(a, ep, keep, p.now, p.pol)
	switch st.Kind {
	case reclaim.StepNone:
		p.line(a.Target, a.Verdict, st.Why)
	case reclaim.StepNotice:
		p.notice(ctx, a, ep, st)
	case reclaim.StepDrop:
		p.transition(ctx, ep, func(e *reclaim.Episode) { e.State = reclaim.Dropped }, "dropped", a.Target, st.Why)
	case reclaim.StepKept:
		if ep != nil && keep.Until.After(ep.Deadline) {
			p.transition(ctx, ep, func(e *reclaim.Episode) { e.Deadline = keep.Until }, "kept", a.Target, st.Why)
			return
		}
		p.line(a.Target, "kept", st.Why)
	case reclaim.StepAct:
		p.act(ctx, a, ep, st)
	default:
		p.line(a.Target, st.Kind, st.Why)
	}
}

// scalable marks a Kubernetes owner of a kind reclaim does not know as one
// it scales, when the API server serves the kind with /scale
// (act.Scaler); a discovery that fails leaves the target for the next pass
// (false), never notice-only by mistake.
func (p *passRun) scalable(ctx context.Context, a reclaim.Assessment) (reclaim.Assessment, bool) {
	s, ok := p.spec.Actors.Kube.(act.Scaler)
	if !ok || a.Target.Actionable() == "" || a.Target.Slurm() || a.Target.Kind == reclaim.KindProcess {
		return a, true
	}
	var err error
	if a.Scales, a.Unscaled, err = s.Scales(ctx, a.Target.Kind); err != nil {
		p.fail(fmt.Sprintf("%s: %v: nothing done", a.Target, err))
		return a, false
	}
	return a, true
}

// line reports what the pass did (or would do) about a target.
func (p *passRun) line(t reclaim.Target, what, why string) {
	if p.spec.Line == nil {
		return
	}
	s := t.String() + ": " + what
	if why != "" {
		s += " (" + why + ")"
	}
	p.spec.Line(s)
}

func (p *passRun) fail(msg string) {
	p.out.Errors = append(p.out.Errors, msg)
	if p.spec.Line != nil {
		p.spec.Line("error: " + msg)
	}
}

// transition writes a change of an open episode, conditional on what was
// read; another pass's change first is said and left alone.
func (p *passRun) transition(ctx context.Context, ep *reclaim.Episode, change func(*reclaim.Episode), what string, t reclaim.Target, why string) bool {
	if !p.spec.Execute || p.l == nil {
		p.line(t, "would be "+what, why)
		return false
	}
	next := *ep
	change(&next)
	next.Updated = p.now
	if !next.Updated.After(ep.Updated) {
		// A clock that went back: the change still needs a new stamp.
		next.Updated = ep.Updated.Add(time.Millisecond)
	}
	err := p.l.UpdateEpisode(ctx, *ep, next)
	switch {
	case errors.Is(err, ledger.ErrLost):
		p.line(t, "left alone", err.Error())
		return false
	case err != nil:
		p.fail(fmt.Sprintf("%s: record %s: %v", t, what, err))
		return false
	}
	*ep = next
	if err := p.l.Audit(ctx, p.now, t, what, why); err != nil {
		p.fail(fmt.Sprintf("%s: audit: %v", t, err))
	}
	p.line(t, what, why)
	return true
}
