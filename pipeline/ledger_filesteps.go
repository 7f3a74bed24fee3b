package pipeline

import (
	"context"
	"os"
	"runtime/debug"
	"slices"
	"time"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/ledger"
	"github.com/seedance/seedance/profile"
)

// Profiles given with -i that reach past the ledger's data end by more
// than a step (ledger.step) are counted as a range read is: in steps of
// it, each the inputs joined over the step (profile.Join, as the ledger
// joins its own inputs past its data end), each one update and one
// transaction. The files are streamed once, node by node, and cut by time
// into at most maxPieces pieces kept on disk (profile.Cut: zstd, in the
// system's temporary directory); the steps of a piece are counted from
// it, so that memory holds one piece of the inputs and one step's
// analysis, never the whole file. The figures are those of one update, as
// for the pieces of TestLedgerEqualsOneAnalysis. A cluster's first update
// is stepped from the files' start, its first step keeping their context
// samples; a file that reaches before the data end (a backfill) is read
// whole and counted in one update, which compares buckets.

// maxPieces bounds the pieces a file is cut into: each holds a spill's
// encoder (about 0.4 MiB) while the file is read. A day in steps of an
// hour is 24 pieces of a step each; a longer file's pieces hold several
// steps.
const maxPieces = 24

// updateFiles is one update of the -i files: cut and counted in steps
// past the data end, else read whole and counted at once.
func (spec LedgerUpdateSpec) updateFiles(ctx context.Context, l *ledger.Ledger) (ledger.Updated, error) {
	keep := analyze.CutReads(Params(spec.Config, spec.Config.Pricing.Pricer())) // the rest is checked, not kept
	var streams []*profile.Stream
	defer func() {
		for _, s := range streams {
			s.Close()
		}
	}()
	var heads []*profile.Profile
	for _, name := range spec.Inputs {
		s, err := profile.OpenFileOnly(name, spec.Stdin, &keep)
		if err != nil {
			return ledger.Updated{}, err
		}
		streams = append(streams, s)
		h := s.Profile()
		heads = append(heads, &h)
	}
	start, end := profile.Span(heads)
	at, first, err := spec.fileSteps(ctx, l, start, end)
	if err != nil {
		return ledger.Updated{}, err
	}
	if len(at) > 2 {
		return spec.countFileSteps(ctx, l, streams, at, first)
	}
	var inputs []*profile.Profile
	for _, s := range streams {
		p, err := s.Collect()
		if err != nil {
			return ledger.Updated{}, err
		}
		inputs = append(inputs, p)
	}
	return spec.countInputs(ctx, l, inputs)
}

// fileSteps are the windows the inputs, spanning [start, end], are
// counted in; nil for one update. first: the ledger holds nothing of the
// cluster yet, and the first window is its first update.
func (spec LedgerUpdateSpec) fileSteps(ctx context.Context, l *ledger.Ledger, start, end time.Time) (at []time.Time, first bool, err error) {
	size := spec.Config.Ledger.Step
	if end.Sub(start) <= size || size <= 0 {
		return nil, false, nil // one step at most (a gap before it is counted as one update would)
	}
	_, dataEnd, ok, err := l.DataEndOf(ctx)
	switch {
	case err != nil:
		return nil, false, err
	case !ok:
		dataEnd, first = start, true
	case start.Before(dataEnd):
		return nil, false, nil // a backfill
	}
	at = []time.Time{dataEnd}
	for t := dataEnd.Add(size); t.Before(end); t = t.Add(size) {
		at = append(at, t)
	}
	return append(at, end), first, nil
}

// countFileSteps cuts the streams into pieces of whole steps, then counts
// the steps piece by piece. The first piece holds the samples before its
// window too: a first update's first step is its pieces as they are, cut
// at the step's end (profile.Trim), context samples kept.
func (spec LedgerUpdateSpec) countFileSteps(ctx context.Context, l *ledger.Ledger, streams []*profile.Stream, at []time.Time, first bool) (ledger.Updated, error) {
	defer stepGC()()
	bounds, times := pieceBounds(at)
	cut := make([]*profile.Pieces, 0, len(streams))
	defer func() {
		for _, p := range cut {
			p.Close()
		}
	}()
	for _, s := range streams {
		p, err := profile.Cut(s, times, "")
		if err != nil {
			return ledger.Updated{}, err
		}
		cut = append(cut, p)
	}
	fs := fileStepper{spec: spec, l: l, at: at, first: first, notes: notesOf(streams), final: finalStep(cut, at)}
	for c := range bounds[:len(bounds)-1] {
		var pieces []*profile.Profile
		for _, p := range cut {
			piece, err := p.Piece(c)
			if err != nil {
				return fs.all, err
			}
			pieces = append(pieces, piece)
		}
		if err := fs.count(ctx, pieces, bounds[c], bounds[c+1]); err != nil {
			return fs.all, err
		}
	}
	return fs.all, nil
}

// stepsGOGC is the garbage collector's target while files are counted in
// steps, unless GOGC is set: a step's heap is mostly what lives through it
// (its piece, its analysis), so Go's default of 100 % peaks at twice that;
// 50 % peaks at 1.5 times it for about 7 % more CPU (docs/performance.md).
const stepsGOGC = 50

// stepGC sets the collector's target for the steps; the func restores it.
func stepGC() (restore func()) {
	if _, set := os.LookupEnv("GOGC"); set {
		return func() {}
	}
	old := debug.SetGCPercent(stepsGOGC)
	return func() { debug.SetGCPercent(old) }
}

// pieceBounds groups the steps at into at most maxPieces pieces: the
// index into at where each piece begins, and the end; and the times the
// files are cut at (the first piece reaching back to the files' start).
func pieceBounds(at []time.Time) (bounds []int, times []time.Time) {
	per := (len(at) - 1 + maxPieces - 1) / maxPieces // steps a piece
	for k := 0; k < len(at)-1; k += per {
		bounds = append(bounds, k)
	}
	bounds = append(bounds, len(at)-1)
	times = make([]time.Time, len(bounds))
	for i, k := range bounds[1:] {
		times[i+1] = at[k]
	}
	return bounds, times
}

// notesOf are the streams' notes, sorted, each once.
func notesOf(streams []*profile.Stream) []string {
	var notes []string
	for _, s := range streams {
		notes = append(notes, s.Header.Notes...)
	}
	slices.Sort(notes)
	return slices.Compact(notes)
}

// fileStepper counts the steps of cut files, joining their figures.
type fileStepper struct {
	spec  LedgerUpdateSpec
	l     *ledger.Ledger
	at    []time.Time
	first bool // the first step is the cluster's first update
	notes []string
	final int // the step that holds the last sample: counted to the end
	all   ledger.Updated
}

// count counts the steps [from, to) of at from their piece.
func (fs *fileStepper) count(ctx context.Context, pieces []*profile.Profile, from, to int) error {
	for k := from; k < to && k <= fs.final; k++ {
		end := fs.at[k+1]
		if k == fs.final {
			end = fs.at[len(fs.at)-1]
		}
		step := []*profile.Profile{profile.Join(pieces, fs.at[k], end, false)}
		step[0].Notes = fs.notes
		if k == 0 && fs.first {
			step = trimmed(pieces, end)
		}
		up, err := fs.spec.countInputs(ctx, fs.l, step)
		if err != nil {
			return err
		}
		fs.all = joinUpdated(fs.all, up, k == 0)
	}
	return nil
}

// trimmed are the pieces that start before to, ending there.
func trimmed(pieces []*profile.Profile, to time.Time) []*profile.Profile {
	var out []*profile.Profile
	for _, p := range pieces {
		if p.StartedAt.Before(to) {
			out = append(out, profile.Trim(p, to))
		}
	}
	return out
}

// finalStep is the step that holds the inputs' latest sample: it is
// counted to the inputs' end, as one update would count them (a step
// after it, with no samples, would leave the data end short of the end).
func finalStep(cut []*profile.Pieces, at []time.Time) int {
	var last time.Time
	for _, p := range cut {
		if t, ok := p.Last(); ok && t.After(last) {
			last = t
		}
	}
	for k := len(at) - 2; k > 0; k-- {
		if at[k].Before(last) {
			return k
		}
	}
	return 0
}
