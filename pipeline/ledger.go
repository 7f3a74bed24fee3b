package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/seedance/seedance/chargeback"
	"github.com/seedance/seedance/internal/exit"
	"github.com/seedance/seedance/internal/fsutil"
	"github.com/seedance/seedance/internal/table"
	"github.com/seedance/seedance/ledger"
	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/render"
	"github.com/seedance/seedance/settings"
	"github.com/seedance/seedance/source"
	"github.com/seedance/seedance/source/prometheus"
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
		src.Start, src.End = from, s.end
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

// update is one update: read, then count in one transaction.
func (spec LedgerUpdateSpec) update(ctx context.Context, l *ledger.Ledger) (ledger.Updated, error) {
	cfg := spec.Config
	inputs, err := spec.read(ctx, l)
	if errors.Is(err, source.ErrNothingObserved) && spec.Source != nil {
		// A range with no new sample yet: nothing to count.
		cluster, end, _, derr := l.DataEndOf(ctx)
		return ledger.Updated{Cluster: cluster, Nothing: true, DataEnd: end}, derr
	}
	if err != nil {
		return ledger.Updated{}, err
	}
	return l.Update(ctx, ledger.UpdateSpec{Inputs: inputs, Params: Params(cfg, cfg.Pricing.Pricer()), Bucket: cfg.Ledger.Bucket,
		FillFrom: spec.fill[0], FillTo: spec.fill[1], Origin: origin(spec.Source)})
}

// read reads the profiles, or the source from where the ledger's data
// ends.
func (spec LedgerUpdateSpec) read(ctx context.Context, l *ledger.Ledger) ([]*profile.Profile, error) {
	if spec.Recorded != nil {
		return spec.readRecorded(ctx, l)
	}
	if spec.Source == nil {
		var inputs []*profile.Profile
		for _, name := range spec.Inputs {
			p, err := profile.ReadFile(name, spec.Stdin)
			if err != nil {
				return nil, err
			}
			inputs = append(inputs, p)
		}
		return inputs, nil
	}
	src := *spec.Source
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

// LedgerReportSpec is one `seedance ledger report`.
type LedgerReportSpec struct {
	Config       *settings.Config
	Since, Until time.Time
	// Clusters, when set, are the clusters reported (else every one).
	Clusters       []string
	Format, Output string
	// BaselineSince and BaselineUntil, when set, are a window to compare
	// with; BaselineReport, a report's JSON file to compare with instead.
	BaselineSince, BaselineUntil time.Time
	BaselineReport               string
	// Now, when set, is what a cluster's data end lags (and the latest
	// cluster's).
	Now time.Time
}

// LedgerReport answers from the ledger alone and writes the report.
func LedgerReport(ctx context.Context, spec LedgerReportSpec, stdout io.Writer) error {
	cfg := spec.Config
	if cfg.Ledger.DSN == "" {
		return exit.Usagef("no ledger: give --ledger PATH or --ledger postgres://…")
	}
	if !slices.Contains(render.LedgerFormats, spec.Format) {
		return exit.Usagef("unknown format %q for a ledger report (choose %s)", spec.Format, strings.Join(render.LedgerFormats, ", "))
	}
	if spec.BaselineSince.IsZero() != spec.BaselineUntil.IsZero() {
		return exit.Usagef("a baseline window needs both --baseline-since and --baseline-until")
	}
	if spec.BaselineReport != "" && !spec.BaselineSince.IsZero() {
		return exit.Usagef("give a baseline window (--baseline-since, --baseline-until) or --baseline-report, not both")
	}
	if err := fsutil.CheckOutput(spec.Output, cfg.Ledger.DSN); err != nil {
		return exit.Usagef("--output: %v", err)
	}
	q := ledger.Query{Since: spec.Since, Until: spec.Until, GroupBy: cfg.Analyze.GroupBy, EnergyUSDPerKWh: cfg.Pricing.EnergyUSDPerKWh, Clusters: spec.Clusters,
		Settled:       spec.Format == "prom", // counters only grow
		BaselineSince: spec.BaselineSince, BaselineUntil: spec.BaselineUntil, MaxLag: cfg.Ledger.MaxLag, Now: spec.Now, MinObserved: cfg.Ledger.ForecastMinObserved}
	if err := shareIdle(cfg.Ledger, &q); err != nil {
		return err
	}
	if err := budgets(cfg.Ledger, &q); err != nil {
		return err
	}
	if err := carbon(cfg.Ledger, &q); err != nil {
		return err
	}
	if spec.BaselineReport != "" {
		base, err := readBaselineReport(spec.BaselineReport)
		if err != nil {
			return err
		}
		q.Baseline = base
	}
	l, err := ledger.Open(ctx, cfg.Ledger.DSN, ledger.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer l.Close()
	r, err := l.Report(ctx, q)
	if err != nil {
		return budgetErr(err)
	}
	if spec.Output == "-" || spec.Output == "" {
		return render.Ledger(stdout, r, spec.Format)
	}
	return fsutil.WriteAtomic(spec.Output, func(w io.Writer) error { return render.Ledger(w, r, spec.Format) })
}

// budgetErr is a budgets file that does not fit the ledger as a usage
// error (exit 2): a file mistake, not a failure.
func budgetErr(err error) error {
	if errors.Is(err, chargeback.ErrBudgets) {
		return exit.Usagef("%v", err)
	}
	return err
}

// readBaselineReport reads --baseline-report's file.
func readBaselineReport(path string) (*ledger.Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, exit.Usagef("--baseline-report: %v", err)
	}
	defer f.Close()
	base, err := ledger.ReadBaseline(f)
	if err != nil {
		return nil, exit.Usagef("--baseline-report %s: %v", path, err)
	}
	return base, nil
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

// monthToDate is the ledger's report from the first of end's month (UTC)
// to end, grouped as the analysis' attribution: the HTML report's history.
// Nil when end is the first instant of a month.
func monthToDate(ctx context.Context, cfg *settings.Config, end time.Time) (*ledger.Report, error) {
	end = end.UTC()
	since := time.Date(end.Year(), end.Month(), 1, 0, 0, 0, 0, time.UTC)
	if !end.After(since) {
		return nil, nil
	}
	l, err := ledger.Open(ctx, cfg.Ledger.DSN, ledger.Options{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer l.Close()
	return l.Report(ctx, ledger.Query{Since: since, Until: end, GroupBy: cfg.Analyze.GroupBy, EnergyUSDPerKWh: cfg.Pricing.EnergyUSDPerKWh})
}

// shareIdle sets the query's sharing of unallocated cost from the settings
// (none of it: no charges).
func shareIdle(lc settings.Ledger, q *ledger.Query) error {
	if lc.ShareIdle == "" {
		return nil
	}
	mode, err := chargeback.ParseMode(lc.ShareIdle)
	if err != nil {
		return exit.Usagef("%v", err)
	}
	scope, err := chargeback.ParseScope(lc.ShareIdleBy)
	if err != nil {
		return exit.Usagef("%v", err)
	}
	q.ShareIdle, q.ShareIdleBy = mode, scope
	return nil
}

// LedgerExportSpec is one `seedance ledger export`.
type LedgerExportSpec struct {
	Config       *settings.Config
	Since, Until time.Time
	Clusters     []string
	Format       string
	Output       string
	// Account names the billing account, the invoice's issuer and the
	// provider of the FOCUS rows: the platform that owns the GPUs.
	Account string
	// Now is what each cluster's data end lags (and the latest one's).
	Now time.Time
	// Version is the FOCUS version written: 1.3 (split cost allocation,
	// the default) or 1.2.
	Version string
}

// Exported is what an export wrote: the sum of its BilledCost, each
// cluster's data end, and the warnings of clusters whose data lags.
type Exported struct {
	BilledUSD float64
	DataEnds  map[string]time.Time
	Warnings  []string
}

// LedgerExportFormats are the formats of a ledger export.
var LedgerExportFormats = []string{"focus", "focus-parquet"}

// LedgerExport writes the window's charges as FOCUS rows, a day at a
// time, and returns the sum of their BilledCost.
func LedgerExport(ctx context.Context, spec LedgerExportSpec, stdout io.Writer) (Exported, error) {
	cfg := spec.Config
	var done Exported
	if cfg.Ledger.DSN == "" {
		return done, exit.Usagef("no ledger: give --ledger PATH or --ledger postgres://…")
	}
	if !slices.Contains(LedgerExportFormats, spec.Format) {
		return done, exit.Usagef("unknown format %q for a ledger export (choose %s)", spec.Format, strings.Join(LedgerExportFormats, ", "))
	}
	if err := fsutil.CheckOutput(spec.Output, cfg.Ledger.DSN); err != nil {
		return done, exit.Usagef("--output: %v", err)
	}
	q := ledger.Query{Since: spec.Since, Until: spec.Until, GroupBy: cfg.Analyze.GroupBy, Clusters: spec.Clusters, ShareIdle: chargeback.None, ShareIdleBy: chargeback.ScopeCluster,
		MaxLag: cfg.Ledger.MaxLag, Now: spec.Now}
	if err := shareIdle(cfg.Ledger, &q); err != nil {
		return done, err
	}
	if err := carbon(cfg.Ledger, &q); err != nil {
		return done, err
	}
	l, err := ledger.Open(ctx, cfg.Ledger.DSN, ledger.Options{ReadOnly: true})
	if err != nil {
		return done, err
	}
	defer l.Close()
	if done.DataEnds, done.Warnings, err = l.Lags(ctx, q); err != nil {
		return done, err
	}
	var total int64
	write := func(w io.Writer) error {
		var f *chargeback.Focus
		_, err := l.Charges(ctx, q, func(win ledger.Window) (err error) {
			f, err = chargeback.NewFocus(w, chargeback.FocusOptions{Version: spec.Version, Encoding: focusEncoding(spec.Format), Account: spec.Account,
				From: win.Start, To: win.End, Mode: q.ShareIdle, Scope: q.ShareIdleBy, Carbon: q.Carbon != nil})
			if err != nil {
				return exit.Usagef("%v", err)
			}
			return nil
		}, func(day []chargeback.Line) error { return f.Write(day) })
		if err == nil {
			total, err = f.TotalCents(), f.Close()
		}
		if q.Carbon != nil {
			done.Warnings = append(done.Warnings, q.Carbon.Missing()...)
		}
		return err
	}
	if spec.Output == "-" || spec.Output == "" {
		err = write(stdout)
	} else {
		err = fsutil.WriteAtomic(spec.Output, write)
	}
	done.BilledUSD = chargeback.USD(total)
	return done, err
}

// focusEncoding is the FOCUS encoding of an export format.
func focusEncoding(format string) string {
	if format == "focus-parquet" {
		return "parquet"
	}
	return "csv"
}

// carbon reads the settings' grid intensity into the query (none: no
// emissions).
func carbon(lc settings.Ledger, q *ledger.Query) error {
	if lc.CarbonIntensityFile == "" {
		return nil
	}
	b, err := fsutil.ReadRegular(lc.CarbonIntensityFile, chargeback.MaxIntensityBytes)
	if err != nil {
		return exit.Usagef("--carbon-intensity %s: %v", lc.CarbonIntensityFile, err)
	}
	if q.Carbon, err = chargeback.ReadIntensity(bytes.NewReader(b), lc.CarbonIntensityFile); err != nil {
		return exit.Usagef("%v", err)
	}
	return nil
}

// budgets reads the settings' budgets file into the query (none: no
// budgets).
func budgets(lc settings.Ledger, q *ledger.Query) error {
	if lc.BudgetsFile == "" {
		return nil
	}
	b, err := fsutil.ReadRegular(lc.BudgetsFile, settings.MaxFileBytes)
	if err != nil {
		return exit.Usagef("--budgets %s: %v", lc.BudgetsFile, err)
	}
	if q.Budgets, err = chargeback.ParseBudgets(b, lc.BudgetsFile); err != nil {
		return exit.Usagef("%v", err)
	}
	return nil
}

// LedgerCheckSpec is one `seedance ledger check`.
type LedgerCheckSpec struct {
	Config   *settings.Config
	Clusters []string
	// Now is what each cluster's data end lags; Warn takes the check's
	// warnings (a cluster whose data lags), a line each.
	Now  time.Time
	Warn func(string)
}

// LedgerCheck reads the budgets' month to date and forecast from the
// ledger and writes a line each; a budget whose forecast (or actual)
// reaches the threshold, or has no forecast, fails it with exit status 3.
func LedgerCheck(ctx context.Context, spec LedgerCheckSpec, stdout io.Writer) error {
	cfg := spec.Config
	if cfg.Ledger.DSN == "" {
		return exit.Usagef("no ledger: give --ledger PATH or --ledger postgres://…")
	}
	if cfg.Ledger.BudgetsFile == "" {
		return exit.Usagef("no budgets: give --budgets FILE (docs/chargeback.md, Budgets)")
	}
	r, err := budgetStatus(ctx, cfg, spec.Clusters, spec.Now)
	if err != nil {
		return err
	}
	for _, w := range r.Warnings {
		if spec.Warn != nil && strings.Contains(w, "'s data ends at") {
			spec.Warn(w)
		}
	}
	statuses, over := r.Budgets, 0
	for _, s := range statuses {
		crossed, line := s.Crossed(cfg.Ledger.BudgetThresholdPct, cfg.Ledger.BudgetOn == "actual")
		verdict := "ok    "
		switch {
		case s.NotYet:
			verdict = "later "
		case crossed && s.ForecastPct == nil && cfg.Ledger.BudgetOn != "actual":
			verdict, over = "NULL  ", over+1
		case crossed:
			verdict, over = "OVER  ", over+1
		}
		if _, err := fmt.Fprintln(stdout, verdict+table.Visible(line)); err != nil {
			return err
		}
	}
	if over > 0 {
		return &exit.Error{Code: exit.GateFailed, Err: fmt.Errorf("%d of %d budgets at or over %g%% (%s), or without one", over, len(statuses), cfg.Ledger.BudgetThresholdPct, cfg.Ledger.BudgetOn)}
	}
	return nil
}

// budgetMetrics writes the budgets' gauges (docs/chargeback.md) when the
// settings name a ledger and a budgets file: a loop serves them on
// /metrics for Alertmanager.
func budgetMetrics(ctx context.Context, cfg *settings.Config, w io.Writer) error {
	if cfg.Ledger.DSN == "" || cfg.Ledger.BudgetsFile == "" {
		return nil
	}
	r, err := budgetStatus(ctx, cfg, nil, time.Time{})
	if err != nil {
		return fmt.Errorf("budgets: %w", err)
	}
	return render.BudgetProm(w, r.Budgets)
}

// budgetStatus reads the settings' budgets' status from their ledger, for
// the clusters (nil: every one).
func budgetStatus(ctx context.Context, cfg *settings.Config, clusters []string, now time.Time) (*ledger.Report, error) {
	// The window reaches now, so that a cluster whose data stopped is
	// a warning (Report.Warnings).
	q := ledger.Query{GroupBy: cfg.Analyze.GroupBy, Clusters: clusters, MaxLag: cfg.Ledger.MaxLag, Now: now, Until: now, MinObserved: cfg.Ledger.ForecastMinObserved}
	if err := shareIdle(cfg.Ledger, &q); err != nil {
		return nil, err
	}
	if err := budgets(cfg.Ledger, &q); err != nil {
		return nil, err
	}
	l, err := ledger.Open(ctx, cfg.Ledger.DSN, ledger.Options{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer l.Close()
	r, err := l.Report(ctx, q)
	return r, budgetErr(err)
}
