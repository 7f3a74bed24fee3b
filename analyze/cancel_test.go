package analyze

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/testkit/ctxtest"
)

// TestAnalysisStopsWhenCancelled: a cancelled context stops an analysis,
// and the ledger's cut of one, at any of its checks, with the context's
// error and no report; an analysis whose context is never cancelled
// checks it once per item read.
func TestAnalysisStopsWhenCancelled(t *testing.T) {
	t0 := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	var nodes []nodeSpec
	for i := range 3 {
		n := nodeSpec{name: fmt.Sprintf("n%d", i)}
		for g := range 2 {
			n.gpus = append(n.gpus, gpuSpec{uuid: fmt.Sprintf("GPU-%d-%d", i, g), t: steps(0, 120), util: fill(50, 120)})
		}
		nodes = append(nodes, n)
	}
	doc := mkProfile(t, t0, 120, 1, nodes...)
	const lots = 1 << 30
	ctx := ctxtest.CancelledAfter(lots)
	if _, err := Analyze(ctx, sourcesOf(t, doc), DefaultParams()); err != nil {
		t.Fatal(err)
	}
	checks := ctxtest.Counted(ctx, lots)
	if checks < 6 {
		t.Fatalf("an analysis of 6 GPUs checked its context %d times", checks)
	}
	at := []time.Time{t0, t0.Add(time.Minute), t0.Add(2 * time.Minute)}
	for _, k := range []int{0, 1, checks / 2, checks - 1} {
		r, err := Analyze(ctxtest.CancelledAfter(k), sourcesOf(t, doc), DefaultParams())
		if r != nil || !errors.Is(err, context.Canceled) {
			t.Errorf("analysis cancelled at check %d of %d: report %v, err %v", k+1, checks, r != nil, err)
		}
		c, err := Cut(ctxtest.CancelledAfter(k), sourcesOf(t, doc), DefaultParams(), at)
		if c != nil || !errors.Is(err, context.Canceled) {
			t.Errorf("cut cancelled at check %d: cuts %v, err %v", k+1, c != nil, err)
		}
	}
}
