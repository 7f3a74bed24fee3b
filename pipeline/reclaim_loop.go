package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/seedance/seedance/reclaim"
	"github.com/seedance/seedance/source"
)

// ReclaimLoopSpec runs reclaim passes on a period (reclaim.every), serving
// /metrics and /healthz on reclaim.listen.
type ReclaimLoopSpec struct {
	// Build makes each pass's spec, reading the settings again: a change
	// is taken at the next pass, a change that cannot be read keeps the
	// last good settings (said in the log and on /metrics).
	Build func() (ReclaimSpec, error)
	Log   io.Writer
}

// ReclaimRun runs one pass of the spec build makes, and says what it did
// on log; with reclaim.every, a pass every period, reread reading the
// config file again before each.
func ReclaimRun(ctx context.Context, build func() (ReclaimSpec, error), reread func() error, log io.Writer) error {
	spec, err := build()
	if err != nil {
		return err
	}
	if spec.Config.Reclaim.Every > 0 {
		again := func() (ReclaimSpec, error) {
			if err := reread(); err != nil {
				return ReclaimSpec{}, err
			}
			return build()
		}
		return ReclaimLoop(ctx, ReclaimLoopSpec{Build: again, Log: log})
	}
	pass, err := Reclaim(ctx, spec)
	if pass != nil {
		fmt.Fprintln(log, ReclaimLine(pass, spec.Execute))
	}
	return err
}

// reclaimCounts are what this process's passes did, for /metrics.
type reclaimCounts struct {
	candidates int
	notices    int
	actions    map[string]int
}

// ReclaimLoop runs a pass every reclaim.every until ctx ends (a signal):
// a pass that fails is reported and the next one tries again; only bad
// settings at the first pass end it.
func ReclaimLoop(ctx context.Context, l ReclaimLoopSpec) error {
	spec, err := l.Build()
	if err != nil {
		return err
	}
	st := &loopState{log: l.Log}
	stopServe, err := st.serve(spec.Config.Reclaim.Listen, spec.Config)
	if err != nil {
		return err
	}
	defer stopServe()
	counts := &reclaimCounts{actions: map[string]int{}}
	sched := period{next: time.Now()}
	for run := 1; ; run++ {
		if run > 1 {
			next, err := l.Build()
			if err != nil {
				fmt.Fprintf(l.Log, "the settings could not be read, the last good ones are kept: %v\n", err)
			} else {
				spec = next
			}
			if err != nil || st.reloadTried {
				st.reloaded(err == nil)
			}
		}
		sched.started(spec.Config.Reclaim.Every)
		pass, err := Reclaim(ctx, spec)
		if err != nil && run == 1 && isUsage(err) {
			return err
		}
		var saved *reclaim.Savings
		if pass != nil {
			saved = pass.Reclaimed
		}
		st.record(counts.add(pass), saved, err)
		if pass != nil {
			fmt.Fprintln(l.Log, ReclaimLine(pass, spec.Execute))
		}
		if (source.RealClock{}).WaitUntil(ctx, sched.next) != nil {
			fmt.Fprintln(l.Log, "stopped")
			return nil
		}
	}
}

// add counts a pass in.
func (c *reclaimCounts) add(p *ReclaimPass) *reclaimCounts {
	if p == nil {
		return c
	}
	c.candidates = p.Candidates
	c.notices += p.Notices
	for k, v := range p.Actions {
		c.actions[k] += v
	}
	return c
}

// record keeps a pass's outcome and series for /healthz and /metrics.
func (st *loopState) record(c *reclaimCounts, saved *reclaim.Savings, err error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# HELP seedance_reclaim_candidates Targets idle for reclaim.idle_for at the latest pass.\n# TYPE seedance_reclaim_candidates gauge\nseedance_reclaim_candidates %d\n", c.candidates)
	fmt.Fprintf(&b, "# HELP seedance_reclaim_notices_total Notices delivered by this process.\n# TYPE seedance_reclaim_notices_total counter\nseedance_reclaim_notices_total %d\n", c.notices)
	fmt.Fprintf(&b, "# HELP seedance_reclaim_actions_total Actions taken by this process, by result.\n# TYPE seedance_reclaim_actions_total counter\n")
	for _, r := range []string{"acted", "refused", "failed"} {
		fmt.Fprintf(&b, "seedance_reclaim_actions_total{result=%q} %d\n", r, c.actions[r])
	}
	if saved != nil {
		writeSaved(&b, *saved)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.metrics = b.Bytes()
	if err != nil {
		st.runsFailed++
		st.lastErr = err.Error()
		return
	}
	st.runsOK++
	st.lastOK, st.lastErr = time.Now(), ""
}

// writeSaved writes what the acted episodes freed, per team, as the
// ledger holds them (finished episodes leave it after reclaim.retention).
func writeSaved(b *bytes.Buffer, s reclaim.Savings) {
	teams := make([]string, 0, len(s.ByTeam))
	for t := range s.ByTeam {
		teams = append(teams, t)
	}
	sort.Strings(teams)
	fmt.Fprintf(b, "# HELP seedance_reclaimed_gpu_hours_total GPU-hours freed by reclaim's actions, from each action to its restore or now, per team.\n# TYPE seedance_reclaimed_gpu_hours_total counter\n")
	for _, t := range teams {
		fmt.Fprintf(b, "seedance_reclaimed_gpu_hours_total{team=%q} %g\n", t, s.ByTeam[t].GPUHours)
	}
	fmt.Fprintf(b, "# HELP seedance_reclaimed_usd_total What the freed GPU-hours would have cost, per team.\n# TYPE seedance_reclaimed_usd_total counter\n")
	for _, t := range teams {
		fmt.Fprintf(b, "seedance_reclaimed_usd_total{team=%q} %g\n", t, s.ByTeam[t].USD)
	}
}
