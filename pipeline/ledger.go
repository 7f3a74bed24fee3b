package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/seedance/seedance/internal/exit"
	"github.com/seedance/seedance/ledger"
	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/settings"
	"github.com/seedance/seedance/source"
)

// LedgerUpdateSpec is one `seedance ledger update`: the profiles to count,
// in time order, or a source to read.
type LedgerUpdateSpec struct {
	Config *settings.Config
	Inputs []string
	Stdin  io.Reader
	// Source, when set, is read instead of Inputs; a range read
	// (Prometheus) starts where the ledger's data ends, unless Start is
	// set.
	Source *RecordSpec
	// Recorded, when set, is Source's recording an analysis read already
	// (analyze --source --ledger): counted instead of reading the source
	// again; only a gap between the ledger's data and it is read.
	Recorded *Recording
	// fill bounds the buckets a backfill step adds or counts again
	// (ledger.UpdateSpec.FillFrom, FillTo).
	fill [2]time.Time
}

// ledgerBucket is the length of the ledger's buckets (the configured one
// for a new ledger), which a source read for it aligns its chunks to.
func ledgerBucket(ctx context.Context, cfg *settings.Config) (time.Duration, error) {
	l, err := ledger.Open(ctx, cfg.Ledger.DSN, ledger.Options{Cluster: cfg.Ledger.Cluster})
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Bucket(ctx, cfg.Ledger.Bucket)
}

// LedgerUpdate counts the inputs' new data into the ledger
// (docs/ledger.md).
func LedgerUpdate(ctx context.Context, spec LedgerUpdateSpec) (ledger.Updated, error) {
	cfg := spec.Config
	if cfg.Ledger.DSN == "" {
		return ledger.Updated{}, exit.Usagef("no ledger: give --ledger PATH (an embedded database) or --ledger postgres://…")
	}
	switch {
	case spec.Source != nil && len(spec.Inputs) > 0:
		return ledger.Updated{}, exit.Usagef("--source reads from a source instead of profile files: give one or the other")
	case spec.Source == nil && len(spec.Inputs) == 0:
		return ledger.Updated{}, exit.Usagef("no input: give the profiles to count with --input FILE (repeatable, in time order), or read a source with --source")
	}
	created := ledger.Absent(cfg.Ledger.DSN)
	l, err := ledger.Open(ctx, cfg.Ledger.DSN, ledger.Options{Cluster: cfg.Ledger.Cluster})
	if err != nil {
		return ledger.Updated{}, err
	}
	up, err := spec.count(ctx, l)
	if err != nil && created {
		// A first update that failed leaves no empty ledger behind.
		return up, errors.Join(err, l.DiscardIfEmpty(context.WithoutCancel(ctx)))
	}
	return up, errors.Join(err, l.Close())
}

// count is the update's reading and counting into the open ledger.
func (spec LedgerUpdateSpec) count(ctx context.Context, l *ledger.Ledger) (ledger.Updated, error) {
	if spec.Recorded != nil {
		return spec.update(ctx, l)
	}
	if err := spec.noHole(ctx, l); err != nil {
		return ledger.Updated{}, err
	}
	if steps, err := spec.steps(ctx, l); err != nil || len(steps) > 1 {
		return spec.stepped(ctx, l, steps, err)
	}
	return spec.update(ctx, l)
}

// update is one update: read, then count in one transaction.
func (spec LedgerUpdateSpec) update(ctx context.Context, l *ledger.Ledger) (ledger.Updated, error) {
	if spec.Source == nil && spec.Recorded == nil {
		return spec.updateFiles(ctx, l)
	}
	inputs, err := spec.read(ctx, l)
	if errors.Is(err, source.ErrNothingObserved) && spec.Source != nil {
		// A range with no new sample yet: nothing to count.
		cluster, end, _, derr := l.DataEndOf(ctx)
		return ledger.Updated{Cluster: cluster, Nothing: true, DataEnd: end}, derr
	}
	if err != nil {
		return ledger.Updated{}, err
	}
	return spec.countInputs(ctx, l, inputs)
}

// countInputs counts the profiles in one update.
func (spec LedgerUpdateSpec) countInputs(ctx context.Context, l *ledger.Ledger, inputs []*profile.Profile) (ledger.Updated, error) {
	cfg := spec.Config
	return l.Update(ctx, ledger.UpdateSpec{Inputs: inputs, Params: Params(cfg, cfg.Pricing.Pricer()), Bucket: cfg.Ledger.Bucket,
		FillFrom: spec.fill[0], FillTo: spec.fill[1], Origin: origin(spec.Source)})
}

// read reads the source from where the ledger's data ends, or the
// recording.
func (spec LedgerUpdateSpec) read(ctx context.Context, l *ledger.Ledger) ([]*profile.Profile, error) {
	if spec.Recorded != nil {
		return spec.readRecorded(ctx, l)
	}
	src := *spec.Source
	src.Work = true // the ledger keeps the work its counters count (docs/units.md)
	_, end, ok, err := l.DataEndOf(ctx)
	switch {
	case err != nil:
		return nil, err
	case ok && src.Start.IsZero() && !src.End.IsZero() && !src.End.After(end):
		return nil, fmt.Errorf("%w: the ledger's data reaches --end already", source.ErrNothingObserved)
	case ok && src.Start.IsZero():
		src.Start = end
	}
	src.InMemory = true
	if src.Align, err = l.Bucket(ctx, spec.Config.Ledger.Bucket); err != nil {
		return nil, err
	}
	if ok {
		src.Reach = 0 // the ledger's tail is its context
	}
	rec, err := Record(ctx, src)
	if err != nil {
		return nil, err
	}
	defer rec.Close()
	if !rec.Profile.Complete && ctx.Err() != nil {
		return nil, exit.Interruptedf("interrupted: the ledger is unchanged")
	}
	if rec.samples == 0 {
		return nil, rec.nothingObserved("")
	}
	rec.attachTopologies()
	return []*profile.Profile{rec.Profile}, nil
}

// readRecorded is the analysis's recording, after what a range read
// (Prometheus) finds between the ledger's data and the recording's start,
// if anything: each sample is read once.
func (spec LedgerUpdateSpec) readRecorded(ctx context.Context, l *ledger.Ledger) ([]*profile.Profile, error) {
	rec := spec.Recorded
	if rec.samples == 0 {
		return nil, rec.nothingObserved("")
	}
	p := rec.Profile
	if rec.Spill != nil {
		r, err := rec.Spill.Reader(rec.Profile)
		if err != nil {
			return nil, err
		}
		if p, err = profile.Read(r); err != nil {
			return nil, err
		}
	}
	_, end, ok, err := l.DataEndOf(ctx)
	if err != nil || !ok || !end.Before(p.StartedAt) || spec.Source == nil || spec.Source.Config.Profile.Source != profile.SourcePrometheus {
		return []*profile.Profile{p}, err
	}
	gap := spec
	gap.Recorded, gap.Source = nil, new(RecordSpec)
	*gap.Source = *spec.Source
	gap.Source.Start, gap.Source.End = end, p.StartedAt
	before, err := gap.read(ctx, l)
	if errors.Is(err, source.ErrNothingObserved) {
		return []*profile.Profile{p}, nil
	}
	if err != nil {
		return nil, err
	}
	return append(before, p), nil
}

// LedgerRenameCluster gives a cluster of the ledger another name: the
// remedy for a ledger migrated without --cluster whose history should
// carry the cluster's own name.
func LedgerRenameCluster(ctx context.Context, cfg *settings.Config, from, to string) error {
	if cfg.Ledger.DSN == "" {
		return exit.Usagef("no ledger: give --ledger PATH or --ledger postgres://…")
	}
	l, err := ledger.Open(ctx, cfg.Ledger.DSN, ledger.Options{Cluster: to})
	if err != nil {
		return err
	}
	defer l.Close()
	return l.RenameCluster(ctx, from, to)
}

// LedgerLine is the one line an update prints: what it counted forward,
// the gaps it filled, and what of its data the ledger held already.
func LedgerLine(u ledger.Updated) string {
	cluster := ""
	if u.Cluster != "" {
		cluster = "cluster " + u.Cluster + ": "
	}
	already := ""
	if u.Already > 0 {
		already = fmt.Sprintf("; %d bucket(s) of the input were counted already", u.Already)
	}
	switch {
	case u.Nothing && u.DataEnd.IsZero():
		return fmt.Sprintf("ledger: %snothing in the range%s: the ledger is unchanged (it holds no data yet)", cluster, already)
	case u.Nothing:
		return fmt.Sprintf("ledger: %snothing after %s%s: the ledger is unchanged", cluster, u.DataEnd.UTC().Format(time.RFC3339Nano), already)
	}
	steps := ""
	if u.Steps > 1 {
		steps = fmt.Sprintf(", in %d steps", u.Steps)
	}
	added := ""
	if n := len(u.Added); n > 0 {
		added = fmt.Sprintf("; added %d bucket(s) it lacked, %s to %s", n, u.Added[0].Format(time.RFC3339), u.Added[n-1].Format(time.RFC3339))
		if len(u.Recounted) > 0 {
			added += fmt.Sprintf(" (and recounted %d next to them)", len(u.Recounted))
		}
	}
	return fmt.Sprintf("ledger: %ssettled %s → %s; provisional to %s (%d rows%s)%s%s", cluster, u.From.UTC().Format(time.RFC3339), u.Watermark.UTC().Format(time.RFC3339),
		u.DataEnd.UTC().Format(time.RFC3339Nano), u.Rows, steps, added, already)
}
