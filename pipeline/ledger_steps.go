package pipeline

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/seedance/seedance/internal/exit"
	"github.com/seedance/seedance/ledger"
	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source/prometheus"
)

// A range longer than the ledger's step (ledger.step, --ledger-step), a
// first update over a month, is counted in steps of it, each step one
// update and one transaction, so that memory holds one step's samples
// whatever the range; an interrupted run keeps the steps it finished, and
// the next run goes on from there.
//
// A range that starts before the ledger's data end is a backfill: its
// steps are read, like a file, from their own start, and the ledger's
// bucket comparison decides what of them is new (docs/ledger.md,
// Backfill). Such a step ends on a bucket's edge and also reads a bucket
// and the analysis' reach on each side (within the range): every bucket it
// counts, and the held buckets next to them that it counts again, have the
// data around them, so that a step's edges count as one read of the whole
// range would.

// step is the range one update of a stepped run reads.
type step struct {
	start, end time.Time
	// back: the step starts before the ledger's data end (a backfill).
	back bool
}

// steps cuts the range a Prometheus read would cover into steps: from
// --start (or where the ledger's data ends) to --end (or now); nil when
// the range is not known before reading (a new ledger without --start).
func (spec LedgerUpdateSpec) steps(ctx context.Context, l *ledger.Ledger) ([]step, error) {
	src := spec.Source
	if src == nil || src.Config == nil || src.Config.Profile.Source != profile.SourcePrometheus {
		return nil, nil
	}
	_, dataEnd, ok, err := l.DataEndOf(ctx)
	if err != nil {
		return nil, err
	}
	start, end := src.Start, src.End
	if start.IsZero() {
		if !ok {
			return nil, nil
		}
		start = dataEnd
	}
	if end.IsZero() && src.Now != nil {
		end = src.Now()
	}
	size := spec.Config.Ledger.Step
	if size <= 0 {
		return nil, nil
	}
	bucket, err := l.Bucket(ctx, spec.Config.Ledger.Bucket)
	if err != nil {
		return nil, err
	}
	var out []step
	for from := start; from.Before(end) || len(out) == 0; {
		s := step{start: from, end: from.Add(size), back: ok && from.Before(dataEnd)}
		if s.back && s.end.Truncate(bucket).After(from) {
			s.end = s.end.Truncate(bucket) // a backfill's steps end on the buckets' edges
		}
		if !s.end.Before(end) {
			s.end = end
		}
		out = append(out, s)
		from = s.end
	}
	return out, nil
}

// stepped runs one update per step. A step after the ledger's data end
// starts where the step before left the ledger's data or, when that step
// found nothing, at its end: a run of empty steps (a month the source does
// not hold) reads each instant once, not from the data's end every time.
// A backfill step reads from its own start, with the reach around it.
func (spec LedgerUpdateSpec) stepped(ctx context.Context, l *ledger.Ledger, steps []step, err error) (ledger.Updated, error) {
	var all ledger.Updated
	var from time.Time // the next forward step's start; zero: where the data ends
	first, last := time.Time{}, time.Time{}
	if len(steps) > 0 {
		first, last = spec.Source.Start, steps[len(steps)-1].end
	}
	bucket, berr := l.Bucket(ctx, spec.Config.Ledger.Bucket)
	reach := ContextReach(spec.Source.Config) + bucket
	if err == nil {
		err = berr
	}
	for i, s := range steps {
		if err != nil {
			return all, err
		}
		src := *spec.Source
		src.Start, src.End, src.Work = from, s.end, true
		switch {
		case s.back:
			src.Start, src.End = around(s, reach, first, last)
		case i == 0:
			src.Start = spec.Source.Start
		}
		one := spec
		one.Source = &src
		if s.back {
			one.fill = [2]time.Time{s.start, s.end}
		}
		var up ledger.Updated
		if up, err = one.update(ctx, l); err == nil {
			all = joinUpdated(all, up, i == 0)
		}
		from = time.Time{}
		if up.Nothing && !s.back {
			from = s.end
		}
	}
	return all, err
}

// around is the range a backfill step reads: the step and reach on each
// side, within the whole range [first, last] (a zero first: no bound).
func around(s step, reach time.Duration, first, last time.Time) (from, to time.Time) {
	from, to = s.start.Add(-reach), s.end.Add(reach)
	if !first.IsZero() && from.Before(first) {
		from = first
	}
	if to.After(last) {
		to = last
	}
	return from, to
}

// origin names what a source read is of, for the ledger's check of a
// cluster's identity (ledger.UpdateSpec.Origin): a Prometheus server's
// address, without credentials or query, and its selector; "" for others.
func origin(src *RecordSpec) string {
	if src == nil || src.Config == nil || src.Config.Profile.Source != profile.SourcePrometheus {
		return ""
	}
	var s prometheus.Settings
	if err := src.Config.SourceSettings(profile.SourcePrometheus, &s); err != nil {
		return ""
	}
	u, err := url.Parse(s.URL)
	if err != nil || u.Host == "" {
		return ""
	}
	o := "prometheus " + u.Host + strings.TrimSuffix(u.Path, "/")
	if s.Selector != "" {
		o += " {" + s.Selector + "}"
	}
	return o
}

// noHole refuses a --start past the cluster's data end: going on from it
// would leave the hours between uncounted, and every later update would go
// on from past them.
func (spec LedgerUpdateSpec) noHole(ctx context.Context, l *ledger.Ledger) error {
	if spec.Source == nil || spec.Source.Start.IsZero() {
		return nil
	}
	cluster, end, ok, err := l.DataEndOf(ctx)
	if err != nil || !ok || !spec.Source.Start.After(end) {
		return err
	}
	return exit.Usagef("cluster %s: the ledger's data ends at %s, and --start %s would leave a hole after it: start at or before its data end (or leave --start out to go on from it)",
		cluster, end.UTC().Format(time.RFC3339), spec.Source.Start.UTC().Format(time.RFC3339))
}

// joinUpdated is what two updates in a row did.
func joinUpdated(a, b ledger.Updated, first bool) ledger.Updated {
	b.Steps = 1
	if !first {
		b.Added, b.Recounted = append(a.Added, b.Added...), append(a.Recounted, b.Recounted...)
		b.Already += a.Already
		b.Warnings = append(a.Warnings, b.Warnings...)
		slices.Sort(b.Warnings)
		b.Warnings = slices.Compact(b.Warnings)
		a.Added, a.Recounted, a.Already, a.Warnings = b.Added, b.Recounted, b.Already, b.Warnings
	}
	switch {
	case first:
		return b
	case b.Nothing:
		a.Steps++
		return a
	case a.Nothing:
		b.Rows, b.Steps = b.Rows+a.Rows, a.Steps+1
		return b
	}
	a.Watermark, a.DataEnd, a.Rows, a.Steps = b.Watermark, b.DataEnd, a.Rows+b.Rows, a.Steps+1
	return a
}
