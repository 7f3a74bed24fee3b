package act

import (
	"context"
	"fmt"
	"time"

	"github.com/seedance/seedance/reclaim"
)

// Actor acts on one scheduler's targets.
type Actor interface {
	// Check reads the target and says why it must not be acted on now
	// ("" when it may).
	Check(ctx context.Context, t reclaim.Target, now time.Time) (string, error)
	// Act acts; it returns what it did and what restore needs.
	Act(ctx context.Context, t reclaim.Target, now time.Time) (action, previous string, err error)
	// Restore undoes an action.
	Restore(ctx context.Context, t reclaim.Target) (string, error)
}

// Scaler is an actor that finds out whether a kind reclaim does not know
// scales (Kube: discovery), and if not, why.
type Scaler interface {
	Scales(ctx context.Context, kind string) (bool, string, error)
}

// Doner is an actor that can tell that the action a pass claimed and was
// stopped in (killed, its command left running) was made after all, and
// what it was.
type Doner interface {
	Done(ctx context.Context, t reclaim.Target) (action, previous string, done bool, err error)
}

// Actors picks the actor of a target's scheduler.
type Actors struct {
	Kube  Actor
	Slurm Actor
}

// For is the actor of t, or an error saying which is not configured.
func (a Actors) For(t reclaim.Target) (Actor, error) {
	if t.Slurm() {
		if a.Slurm == nil {
			return nil, fmt.Errorf("%s is a Slurm job and no Slurm actor is configured", t)
		}
		return a.Slurm, nil
	}
	if a.Kube == nil {
		return nil, fmt.Errorf("%s is a Kubernetes target and no kubeconfig is given (--kubeconfig)", t)
	}
	return a.Kube, nil
}
