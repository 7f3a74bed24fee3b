package reclaim

import (
	"testing"
	"time"
)

func TestDecide(t *testing.T) {
	now := t0.Add(5 * time.Hour)
	tg := Target{Kind: KindDeployment, Namespace: "ml", Name: "eval"}
	cand := Assessment{Target: tg, Verdict: Candidate, IdleSince: t0, IdleFor: 5 * time.Hour}
	noticed := &Episode{Target: tg, IdleSince: t0, State: Noticed, NoticedAt: now.Add(-30 * time.Minute), Deadline: now.Add(30 * time.Minute), Updated: now.Add(-30 * time.Minute)}
	due := &Episode{Target: tg, IdleSince: t0, State: Noticed, NoticedAt: now.Add(-2 * time.Hour), Deadline: now.Add(-time.Minute), Updated: now.Add(-2 * time.Hour)}
	pol := DefaultPolicy()
	with := func(a Assessment, f func(*Assessment)) Assessment { f(&a); return a }
	cases := []struct {
		name string
		a    Assessment
		ep   *Episode
		keep *Keep
		pol  func(*Policy)
		want string
		new  bool
	}{
		{"a new candidate is notified", cand, nil, nil, nil, StepNotice, true},
		{"a busy workload: nothing", with(cand, func(a *Assessment) { a.Verdict = Busy }), nil, nil, nil, StepNone, false},
		{"kept before any notice", cand, nil, &Keep{Until: now.Add(time.Hour)}, nil, StepKept, false},
		{"an expired keep does not keep", cand, nil, &Keep{Until: now.Add(-time.Second)}, nil, StepNotice, true},
		{"inside the grace: wait", cand, noticed, nil, nil, StepWait, false},
		{"the deadline exactly: act", cand, &Episode{Target: tg, IdleSince: t0, State: Noticed, Deadline: now, Updated: now.Add(-time.Hour)}, nil, nil, StepAct, false},
		{"grace ended: act", cand, due, nil, nil, StepAct, false},
		{"grace ended, kept: keep", cand, due, &Keep{Until: now.Add(time.Hour)}, nil, StepKept, false},
		{"grace ended, busy again: drop", with(cand, func(a *Assessment) { a.Verdict = Idle }), due, nil, nil, StepDrop, false},
		{"grace ended, unknown data: wait", with(cand, func(a *Assessment) { a.Verdict = Unknown }), due, nil, nil, StepWait, false},
		{"grace ended, now out of scope: drop", with(cand, func(a *Assessment) { a.Verdict = Spared }), due, nil, nil, StepDrop, false},
		{"active and idle again since the notice: a new episode", with(cand, func(a *Assessment) { a.IdleSince = t0.Add(time.Hour) }), due, nil, nil, StepNotice, true},
		{"a sliding window's later start is the same episode", with(cand, func(a *Assessment) { a.IdleSince = t0.Add(time.Hour); a.AtLeast = true }), due, nil, nil, StepAct, false},
		{"an undelivered notice is retried", cand, &Episode{Target: tg, IdleSince: t0, State: Noticing, Attempts: 2}, nil, nil, StepNotice, false},
		{"a notice another pass is sending: wait", cand, &Episode{Target: tg, IdleSince: t0, State: Noticing, Updated: now.Add(-time.Minute)}, nil, nil, StepWait, false},
		{"a notice that failed is retried at once", cand, &Episode{Target: tg, IdleSince: t0, State: Noticing, Attempts: 1, LastError: "refused", Updated: now.Add(-time.Minute)}, nil, nil, StepNotice, false},
		{"a notice whose pass was killed: sent once its claim is stale", cand, &Episode{Target: tg, IdleSince: t0, State: Noticing, Updated: now.Add(-StaleClaim)}, nil, nil, StepNotice, false},
		{"a custom kind with /scale: act", with(cand, func(a *Assessment) { a.Target.Kind, a.Scales = "Rollout", true }), due, nil, nil, StepAct, false},
		{"a custom kind without it: notice only", with(cand, func(a *Assessment) { a.Target.Kind, a.Unscaled = "Notebook", "no /scale" }), due, nil, nil, StepNoAction, false},
		{"a fresh claim is left to its pass", cand, &Episode{Target: tg, IdleSince: t0, State: Acting, Updated: now.Add(-time.Minute)}, nil, nil, StepWait, false},
		{"a stale claim is taken over", cand, &Episode{Target: tg, IdleSince: t0, State: Acting, Updated: now.Add(-StaleClaim)}, nil, nil, StepAct, false},
		{"renotify", cand, noticed, nil, func(p *Policy) { p.Renotify = 20 * time.Minute }, StepNotice, false},
		{"a process: notice only", with(cand, func(a *Assessment) { a.Target = Target{Kind: KindProcess, Name: "1234"} }), due, nil, nil, StepNoAction, false},
		{"a clock gone back before the deadline: wait", cand, &Episode{Target: tg, IdleSince: t0, State: Noticed, Deadline: now.Add(time.Hour), Updated: now.Add(2 * time.Hour)}, nil, nil, StepWait, false},
	}
	for _, c := range cases {
		p := pol
		if c.pol != nil {
			c.pol(&p)
		}
		st := Decide(c.a, c.ep, c.keep, now, p)
		if st.Kind != c.want || st.NewEpisode != c.new {
			t.Errorf("%s: %s (new %v: %s), want %s (new %v)", c.name, st.Kind, st.NewEpisode, st.Why, c.want, c.new)
		}
	}
}

func TestTargets(t *testing.T) {
	for _, s := range []string{"ml/Deployment/llama-eval", "ml/Job/train", "ml/Pod/nb-0", "ml/Rollout/llm", "4242", "4242_3"} {
		tg, err := ParseTarget(s)
		if err != nil || tg.String() != s {
			t.Errorf("%s: %v %v", s, tg, err)
		}
		if back, err := ParseStored(tg.Stored()); err != nil || back != tg {
			t.Errorf("%s stored: %v %v", s, back, err)
		}
	}
	for _, s := range []string{"ml/rollout/x", "ml/Roll-out/x", "ml/SlurmJob/1", "ml/Process/x", "ml/Deployment", "ML/Deployment/x", "ml/Deployment/$(id)", "4242;rm", ""} {
		if _, err := ParseTarget(s); err == nil {
			t.Errorf("%q parsed", s)
		}
	}
}
