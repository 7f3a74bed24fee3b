package pipeline

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/seedance/seedance/internal/exit"
	"github.com/seedance/seedance/internal/testkit/ctxtest"
)

// TestCancelledStagesExit130: cancelling the run's context (SIGINT or
// SIGTERM, cmd/root.go) stops the analysis or the plan, whichever is
// running, with exit 130 and nothing written; the checks counted first,
// each point of the run is cut once. analyze --source cut before its first
// sample is interrupted too, not "nothing observed" (and it used to panic
// closing a recording it had dropped: TestLoopReloadsConfig's SIGTERM hit it).
func TestCancelledStagesExit130(t *testing.T) {
	cfg := simConfig(t)
	path := filepath.Join(t.TempDir(), "p.json")
	rec, err := Record(context.Background(), RecordSpec{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Write(nil, path); err != nil {
		t.Fatal(err)
	}
	rec.Close()
	const lots = 1 << 30
	for _, stage := range []struct {
		name string
		run  func(ctx context.Context) error
	}{
		{"analyze", func(ctx context.Context) error {
			_, _, err := Analyze(ctx, AnalyzeSpec{Config: cfg, Inputs: []string{path}})
			return err
		}},
		{"analyze --source", func(ctx context.Context) error {
			_, _, err := Analyze(ctx, AnalyzeSpec{Config: cfg, Source: &RecordSpec{Config: cfg}})
			return err
		}},
		{"plan", func(ctx context.Context) error { _, err := Plan(ctx, PlanSpec{Config: cfg, Input: path}); return err }},
	} {
		ctx := ctxtest.CancelledAfter(lots)
		if err := stage.run(ctx); err != nil {
			t.Fatal(err)
		}
		n := ctxtest.Counted(ctx, lots)
		for _, k := range []int{0, n / 3, 2 * n / 3, n - 1} {
			err := stage.run(ctxtest.CancelledAfter(k))
			var e *exit.Error
			if !errors.As(err, &e) || e.Code != exit.Interrupted || !errors.Is(err, context.Canceled) {
				t.Errorf("%s cancelled at check %d of %d: %v", stage.name, k+1, n, err)
			}
		}
	}
}
