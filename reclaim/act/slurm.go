package act

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/seedance/seedance/internal/extcmd"
	"github.com/seedance/seedance/reclaim"
)

// Slurm acts on Slurm jobs with scontrol and scancel, each within the
// limits of external commands. Run, when set, replaces extcmd.Run (tests
// give the rig's environment).
type Slurm struct {
	Limits extcmd.Limits
	Run    func(ctx context.Context, l extcmd.Limits, name string, args ...string) ([]byte, error)
}

func (s *Slurm) run(ctx context.Context, name string, args ...string) ([]byte, error) {
	if s.Run != nil {
		return s.Run(ctx, s.Limits, name, args...)
	}
	return extcmd.Run(ctx, s.Limits, name, args...)
}

// job is what reclaim reads of scontrol show job -o.
func (s *Slurm) job(ctx context.Context, id string) (map[string]string, error) {
	out, err := s.run(ctx, "scontrol", "show", "job", "-o", id)
	if err != nil {
		return nil, err
	}
	f := map[string]string{}
	for _, w := range strings.Fields(string(out)) {
		if k, v, ok := strings.Cut(w, "="); ok {
			if _, seen := f[k]; !seen {
				f[k] = v
			}
		}
	}
	if f["JobId"] == "" {
		return nil, fmt.Errorf("scontrol show job %s: no such job", id)
	}
	return f, nil
}

// Check says why the job must not be acted on: it is no longer running
// (finished, already held), or its comment says seedance.io/reclaim=never.
func (s *Slurm) Check(ctx context.Context, t reclaim.Target, _ time.Time) (string, error) {
	f, err := s.job(ctx, t.Name)
	if err != nil {
		return "", err
	}
	if st := f["JobState"]; st != "RUNNING" {
		return "its state is " + st + ", not RUNNING", nil
	}
	if strings.Contains(f["Comment"], reclaim.NeverLabel+"=never") {
		return reclaim.NeverLabel + "=never in its comment", nil
	}
	return "", nil
}

// Act requeues a requeueable job held (scontrol requeuehold), else cancels
// it (scancel); the action names the job's owner.
func (s *Slurm) Act(ctx context.Context, t reclaim.Target, _ time.Time) (string, string, error) {
	f, err := s.job(ctx, t.Name)
	if err != nil {
		return "", "", err
	}
	owner := f["UserId"]
	if f["Requeue"] == "1" {
		if _, err := s.run(ctx, "scontrol", "requeuehold", t.Name); err != nil {
			return "", "", err
		}
		return "requeued held (owner " + owner + ")", "held", nil
	}
	if _, err := s.run(ctx, "scancel", t.Name); err != nil {
		return "", "", err
	}
	return "cancelled (owner " + owner + ", not requeueable)", "", nil
}

// Done says whether the job is held or cancelled already: what an action
// claimed by a pass that was stopped left behind.
func (s *Slurm) Done(ctx context.Context, t reclaim.Target) (string, string, bool, error) {
	f, err := s.job(ctx, t.Name)
	if err != nil {
		return "", "", false, err
	}
	owner := f["UserId"]
	switch {
	case f["JobState"] == "PENDING" && (strings.Contains(strings.ToLower(f["Reason"]), "held") || f["Priority"] == "0"):
		return "requeued held (owner " + owner + "), found so after a stopped pass", "held", true, nil
	case f["JobState"] == "CANCELLED":
		return "cancelled (owner " + owner + "), found so after a stopped pass", "", true, nil
	}
	return "", "", false, nil
}

// Restore releases a job reclaim requeued held; a cancelled job cannot be
// restored.
func (s *Slurm) Restore(ctx context.Context, t reclaim.Target) (string, error) {
	f, err := s.job(ctx, t.Name)
	if err != nil {
		return "", err
	}
	if !strings.Contains(strings.ToLower(f["Reason"]), "held") && f["Priority"] != "0" {
		return "", fmt.Errorf("%w: job %s is not held (state %s): nothing to release", ErrRefused, t.Name, f["JobState"])
	}
	if _, err := s.run(ctx, "scontrol", "release", t.Name); err != nil {
		return "", err
	}
	return "released", nil
}
