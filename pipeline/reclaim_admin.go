package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/seedance/seedance/internal/exit"
	"github.com/seedance/seedance/internal/table"
	"github.com/seedance/seedance/ledger"
	"github.com/seedance/seedance/reclaim"
	"github.com/seedance/seedance/settings"
)

// ReclaimKeep records an owner's answer: no action on the target (as
// the commands take it) for keepFor from now.
func ReclaimKeep(ctx context.Context, cfg *settings.Config, w io.Writer, target string, keepFor time.Duration, reason string, now time.Time) error {
	line, err := reclaimKeep(ctx, cfg, target, keepFor, reason, Who(), now)
	if line != "" {
		fmt.Fprintln(w, table.Visible(line))
	}
	return err
}

func reclaimKeep(ctx context.Context, cfg *settings.Config, target string, keepFor time.Duration, reason, by string, now time.Time) (string, error) {
	t, err := reclaim.ParseTarget(target)
	if err != nil {
		return "", exit.Usagef("%v", err)
	}
	if keepFor <= 0 || keepFor > 366*24*time.Hour {
		return "", exit.Usagef("--for %s: give a duration from 1s to 366 days", keepFor)
	}
	if cfg.Ledger.DSN == "" {
		return "", exit.Usagef("reclaim keep records the keep in the ledger: give --ledger DSN")
	}
	now = now.UTC()
	k := reclaim.Keep{Target: t, Until: now.Add(keepFor), Reason: reason, By: by, At: now}
	l, err := ledger.Open(ctx, cfg.Ledger.DSN, ledger.Options{Cluster: cfg.Ledger.Cluster})
	if err != nil {
		return "", err
	}
	defer l.Close()
	if err := l.SetKeep(ctx, k); err != nil {
		return "", fmt.Errorf("reclaim keep: %w", err)
	}
	line := fmt.Sprintf("%s: kept until %s by %s", t, k.Until.Format(time.RFC3339), by)
	return line, l.Audit(ctx, now, t, "keep", line+": "+reason)
}

// ReclaimState is what reclaim list shows: the episodes open, acted or
// changed since a time, and the keeps in force.
type ReclaimState struct {
	Episodes []reclaim.Episode
	Keeps    []reclaim.Keep
	// Reclaimed sums what the acted episodes freed, to now.
	Reclaimed reclaim.Savings
}

// ReclaimList writes reclaim's state: the episodes open, acted or changed
// in the last since, the keeps, what was reclaimed.
func ReclaimList(ctx context.Context, cfg *settings.Config, w io.Writer, since time.Duration, now time.Time) error {
	now = now.UTC()
	st, err := ReadReclaimState(ctx, cfg, now.Add(-since), now)
	if err == nil {
		WriteReclaimState(w, st, now)
	}
	return err
}

// ReadReclaimState reads reclaim's state from the ledger.
func ReadReclaimState(ctx context.Context, cfg *settings.Config, since, now time.Time) (*ReclaimState, error) {
	if cfg.Ledger.DSN == "" {
		return nil, exit.Usagef("reclaim list reads the ledger: give --ledger DSN")
	}
	l, err := ledger.Open(ctx, cfg.Ledger.DSN, ledger.Options{Cluster: cfg.Ledger.Cluster, ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer l.Close()
	st := &ReclaimState{}
	if st.Episodes, err = l.Episodes(ctx, since); err != nil {
		return nil, err
	}
	keeps, err := l.Keeps(ctx, now)
	if err != nil {
		return nil, err
	}
	for _, k := range keeps {
		st.Keeps = append(st.Keeps, k)
	}
	folded, err := l.Folded(ctx)
	if err != nil {
		return nil, err
	}
	st.Reclaimed = folded.Plus(reclaim.Saved(st.Episodes, now))
	return st, nil
}

// ReclaimRestore puts a target back (the replicas recorded on it, a Job
// resumed, a Slurm job released) and closes its acted episode.
func ReclaimRestore(ctx context.Context, cfg *settings.Config, w io.Writer, target string, execute bool, now time.Time) error {
	line, err := reclaimRestore(ctx, cfg, target, execute, now)
	if line != "" {
		fmt.Fprintln(w, table.Visible(line))
	}
	return err
}

func reclaimRestore(ctx context.Context, cfg *settings.Config, target string, execute bool, now time.Time) (string, error) {
	t, err := reclaim.ParseTarget(target)
	if err != nil {
		return "", exit.Usagef("%v", err)
	}
	if !execute {
		return "would restore " + t.String() + " (dry run: add --execute)", nil
	}
	actors, err := ReclaimActors(cfg)
	if err != nil {
		return "", err
	}
	actor, err := actors.For(t)
	if err != nil {
		return "", exit.Usagef("%v", err)
	}
	did, err := actor.Restore(ctx, t)
	if err != nil {
		return "", err
	}
	line := t.String() + ": " + did
	if cfg.Ledger.DSN == "" {
		return line, nil
	}
	freed, err := closeActed(ctx, cfg, t, did, now.UTC())
	return line + freed, err
}

// closeActed ends the target's acted episode as restored at now, audits
// the restore, and says what the episode freed.
func closeActed(ctx context.Context, cfg *settings.Config, t reclaim.Target, did string, now time.Time) (string, error) {
	l, err := ledger.Open(ctx, cfg.Ledger.DSN, ledger.Options{Cluster: cfg.Ledger.Cluster})
	if err != nil {
		return "", err
	}
	defer l.Close()
	eps, err := l.Episodes(ctx, now)
	if err != nil {
		return "", err
	}
	freed := ""
	for _, ep := range eps {
		if ep.Target != t || ep.State != reclaim.Acted {
			continue
		}
		next := ep
		next.State, next.RestoredAt, next.Updated = reclaim.Restored, now, now
		if err := l.UpdateEpisode(ctx, ep, next); err != nil && !errors.Is(err, ledger.ErrLost) {
			return freed, err
		}
		s := reclaim.Saved([]reclaim.Episode{next}, now)
		freed += fmt.Sprintf("; it had freed %.2f GPU-hours ($%.2f)", s.GPUHours, reclaim.Cents(s.USD))
	}
	return freed, l.Audit(ctx, now, t, "restored", did+" by "+Who())
}
