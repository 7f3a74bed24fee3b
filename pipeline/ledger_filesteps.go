package pipeline

import (
	"context"
	"slices"
	"time"

	"github.com/seedance/seedance/ledger"
	"github.com/seedance/seedance/profile"
)

// Profiles given with -i that reach past the ledger's data end by more
// than a step (ledger.step) are counted as a range read is: in steps of
// it, each the inputs joined over the step (profile.Join, as the ledger
// joins its own inputs past its data end), each one update and one
// transaction. The counting's memory then holds one step's analysis, not
// the whole file's: the profiles themselves stay in memory (about 1.3
// times the JSON parsed). The figures are those of one update, as for
// the pieces of TestLedgerEqualsOneAnalysis. A first update of a cluster
// and a file that reaches before the data end (a backfill) are counted in
// one update: the first keeps its context samples, and a backfill
// compares buckets.

// fileSteps are the windows the inputs are counted in; nil for one
// update.
func (spec LedgerUpdateSpec) fileSteps(ctx context.Context, l *ledger.Ledger, inputs []*profile.Profile) ([]time.Time, error) {
	size := spec.Config.Ledger.Step
	start, end := profile.Span(inputs)
	if end.Sub(start) <= size {
		return nil, nil // one step at most (a gap before it is counted as one update would)
	}
	_, dataEnd, ok, err := l.DataEndOf(ctx)
	if err != nil || !ok || size <= 0 {
		return nil, err
	}
	if start.Before(dataEnd) {
		return nil, nil // a backfill
	}
	at := []time.Time{dataEnd}
	for t := dataEnd.Add(size); t.Before(end); t = t.Add(size) {
		at = append(at, t)
	}
	return append(at, end), nil
}

// countFileSteps counts the inputs window by window.
func (spec LedgerUpdateSpec) countFileSteps(ctx context.Context, l *ledger.Ledger, inputs []*profile.Profile, at []time.Time) (ledger.Updated, error) {
	var notes []string
	for _, p := range inputs {
		notes = append(notes, p.Notes...)
	}
	slices.Sort(notes)
	notes = slices.Compact(notes)
	var all ledger.Updated
	for i := range at[:len(at)-1] {
		piece := profile.Join(inputs, at[i], at[i+1], false)
		piece.Notes = notes
		up, err := spec.countInputs(ctx, l, []*profile.Profile{piece})
		if err != nil {
			return all, err
		}
		all = joinUpdated(all, up, i == 0)
	}
	return all, nil
}
