package profile

import (
	"context"
	"time"
)

// Source yields one reading of every GPU of a fixed set of nodes per call.
// One file per source implements it (nvml, sim, …); the Recorder turns the
// readings into a Profile.
type Source interface {
	// Name is the value of the profile's "source" field.
	Name() string
	// Inventory returns the nodes and their GPUs, without series. It is fixed
	// for the life of the source; Sample's rows follow its order.
	Inventory() []Node
	// Sample reads every GPU once and returns rows[node][gpu] and the
	// workloads seen on each node at this sample.
	Sample(ctx context.Context) (rows [][]Row, workloads [][]Workload)
	// Close releases the source.
	Close() error
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
