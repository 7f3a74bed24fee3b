package source

import (
	"context"
	"errors"
	"time"

	"github.com/seedance/seedance/profile"
)

// Source yields one reading of every GPU of a fixed set of nodes per call.
// The samplers implement it (source/gpu for nvml and sim); Record turns the
// readings into a Profile.
type Source interface {
	// Name is the value of the profile's "source" field.
	Name() string
	// Inventory returns the nodes and their GPUs, without series. It is fixed
	// for the life of the source; Sample's rows follow its order.
	Inventory() []profile.Node
	// Sample reads every GPU once and returns rows[node][gpu] and the
	// workloads seen on each node at this sample.
	Sample(ctx context.Context) (rows [][]Row, workloads [][]profile.Workload)
	// Close releases the source.
	Close() error
}

// Queuer is a Source that knows the queues its workloads were admitted
// through (the simulator's ClusterQueues): Record gives the profile
// Queues(p) once its workloads are merged (docs/queues.md).
type Queuer interface {
	Queues(p *profile.Profile) []profile.Queue
}

// Clock tells the time and waits; the simulator's clock jumps instead of
// sleeping, so a simulated hour takes no wall time.
type Clock interface {
	Now() time.Time
	// WaitUntil returns when the clock reaches t or ctx is done.
	WaitUntil(ctx context.Context, t time.Time) error
}

// RealClock is the wall clock.
type RealClock struct{}

// Now returns the current time.
func (RealClock) Now() time.Time { return time.Now() }

// WaitUntil sleeps until t or until ctx is done.
func (RealClock) WaitUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// ErrInterrupted is returned by a source stopped (SIGINT, SIGTERM) before
// it read anything.
var ErrInterrupted = errors.New("interrupted")

// ErrSettings marks a source's settings that cannot work (a URL that is
// not http(s), a bad selector): a usage error, not a bad profile.
var ErrSettings = errors.New("invalid setting")

// ErrNothingObserved is returned by a source that collected no GPU sample
// at all: a run that observed nothing is a failure, not an empty success.
var ErrNothingObserved = errors.New("nothing observed")
