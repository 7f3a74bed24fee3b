// Package ctxtest has contexts for tests of cancellation that depend on
// no timing: one that is cancelled after its Err has answered nil a given
// number of times, so that a test stops a stage at an exact point of its
// work, every run alike.
package ctxtest

import (
	"context"
	"sync/atomic"
)

// checks is a context whose Err answers nil n times, then
// context.Canceled (and Done is closed then).
type checks struct {
	context.Context
	left atomic.Int64
	done chan struct{}
	once atomic.Bool
}

// CancelledAfter returns a context whose Err answers nil n times and
// context.Canceled from then on: the stage that checks it stops at its
// (n+1)th check.
func CancelledAfter(n int) context.Context {
	c := &checks{Context: context.Background(), done: make(chan struct{})}
	c.left.Store(int64(n))
	return c
}

func (c *checks) Err() error {
	if c.left.Add(-1) >= 0 {
		return nil
	}
	if c.once.CompareAndSwap(false, true) {
		close(c.done)
	}
	return context.Canceled
}

func (c *checks) Done() <-chan struct{} { return c.done }

// Counted is how many times a context of CancelledAfter was checked,
// for a test that first measures how many checks a stage makes.
func Counted(ctx context.Context, n int) int {
	if c, ok := ctx.(*checks); ok {
		return n - int(c.left.Load())
	}
	return 0
}
