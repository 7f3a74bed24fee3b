package prometheus

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// TestRunOrderedHoldsAWindow: while the first job's answer is slow, the
// other workers start no job past the window, so that the answers waiting
// for it are a few, not the rest of the range; every result is consumed
// once, in order.
func TestRunOrderedHoldsAWindow(t *testing.T) {
	const n, workers, window = 40, 3, 5
	var started, consumed, ahead atomic.Int64
	release := make(chan struct{})
	var order []int
	done := make(chan error, 1)
	go func() {
		done <- runWindow(context.Background(), n, workers, window, func(_ context.Context, i int) (any, error) {
			started.Add(1)
			if d := int64(i) - consumed.Load(); d >= window && d > ahead.Load() {
				ahead.Store(d)
			}
			if i == 0 {
				<-release
			}
			return i, nil
		}, func(i int, res any) error {
			if res.(int) != i {
				t.Errorf("job %d got the result of job %v", i, res)
			}
			order = append(order, i)
			consumed.Add(1)
			return nil
		})
	}()
	deadline := time.Now().Add(10 * time.Second)
	for started.Load() < window && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := started.Load(); got != window {
		t.Fatalf("%d jobs started while the first waited, want the window's %d", got, window)
	}
	// The workers are free: give them time to (wrongly) run ahead.
	for k := 0; k < 20; k++ {
		time.Sleep(time.Millisecond)
		if got := started.Load(); got > window {
			t.Fatalf("%d jobs started while the first waited, past the window of %d", got, window)
		}
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(order) != n {
		t.Fatalf("consumed %d results, want %d", len(order), n)
	}
	for i, v := range order {
		if v != i {
			t.Fatalf("consumed %v, want 0…%d in order", order, n-1)
		}
	}
	if d := ahead.Load(); d != 0 {
		t.Errorf("a job started %d ahead of the consumer, past the window of %d", d, window)
	}
}

// TestRunOrderedStopsOnError: a job's error stops the run and is returned;
// no later result is consumed after it.
func TestRunOrderedStopsOnError(t *testing.T) {
	boom := errors.New("boom")
	var last atomic.Int64
	err := runOrdered(context.Background(), 100, 4, func(_ context.Context, i int) (any, error) {
		if i == 7 {
			return nil, boom
		}
		return i, nil
	}, func(i int, _ any) error {
		last.Store(int64(i))
		return nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	if l := last.Load(); l >= 7 {
		t.Errorf("consumed job %d, after the failed job 7", l)
	}
	stop := errors.New("stop")
	err = runOrdered(context.Background(), 100, 4, func(_ context.Context, i int) (any, error) { return i, nil },
		func(i int, _ any) error {
			if i == 3 {
				return stop
			}
			return nil
		})
	if !errors.Is(err, stop) {
		t.Fatalf("err = %v, want the consumer's", err)
	}
}
