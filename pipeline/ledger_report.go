package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/seedance/seedance/chargeback"
	"github.com/seedance/seedance/internal/exit"
	"github.com/seedance/seedance/internal/fsutil"
	"github.com/seedance/seedance/internal/table"
	"github.com/seedance/seedance/ledger"
	"github.com/seedance/seedance/ledger/history"
	"github.com/seedance/seedance/reclaim"
	"github.com/seedance/seedance/render"
	"github.com/seedance/seedance/settings"
)

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
		BaselineSince: spec.BaselineSince, BaselineUntil: spec.BaselineUntil, MaxLag: cfg.Ledger.MaxLag, Now: spec.Now, MinObserved: cfg.Ledger.ForecastMinObserved,
		Units: cfg.Ledger.Units}
	if cfg.Ledger.Queues {
		q.Queues = queueParams(cfg)
	}
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
	if r.Reclaimed, err = reclaimedIn(ctx, l, r); err != nil {
		return err
	}
	if spec.Output == "-" || spec.Output == "" {
		return render.Ledger(stdout, r, spec.Format)
	}
	return fsutil.WriteAtomic(spec.Output, func(w io.Writer) error { return render.Ledger(w, r, spec.Format) })
}

// reclaimedIn is what reclaim freed within the report's window and
// clusters; nil when it acted on nothing there.
func reclaimedIn(ctx context.Context, l *ledger.Ledger, r *ledger.Report) (*history.Reclaimed, error) {
	eps, err := l.ActedBetween(ctx, r.Clusters, r.Window.Start, r.Window.End)
	if err != nil || len(eps) == 0 {
		return nil, err
	}
	s := reclaim.SavedBetween(eps, r.Window.Start, r.Window.End)
	out := &history.Reclaimed{Actions: len(eps), GPUHours: s.GPUHours, USD: s.USD}
	if out.Capacity, err = l.FreedCapacity(ctx, eps, r.Window.Start, r.Window.End); err != nil {
		return nil, err
	}
	for _, team := range slices.Sorted(maps.Keys(s.ByTeam)) {
		t := s.ByTeam[team]
		out.ByTeam = append(out.ByTeam, history.ReclaimedTeam{Team: team, GPUHours: t.GPUHours, USD: t.USD})
	}
	return out, nil
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
	if cfg.Ledger.CheckIntegrity {
		if err := ledgerIntegrity(ctx, cfg.Ledger.DSN, stdout); err != nil || cfg.Ledger.BudgetsFile == "" {
			return err
		}
	}
	if cfg.Ledger.BudgetsFile == "" {
		return exit.Usagef("no budgets: give --budgets FILE (docs/chargeback.md, Budgets), or --integrity")
	}
	statuses, lags, err := budgetStatus(ctx, cfg, spec.Clusters, spec.Now)
	if err != nil {
		return err
	}
	for _, w := range lags {
		if spec.Warn != nil {
			spec.Warn(w)
		}
	}
	over := 0
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

// ledgerIntegrity runs the database's full check of the ledger and writes
// what it found, a line each; any problem fails the check.
func ledgerIntegrity(ctx context.Context, dsn string, stdout io.Writer) error {
	l, err := ledger.Open(ctx, dsn, ledger.Options{ReadOnly: true, Unchecked: true})
	if err != nil {
		return err
	}
	defer l.Close()
	problems, how, err := l.Integrity(ctx)
	if err != nil {
		return fmt.Errorf("%w: integrity check: %v", ledger.ErrLedger, err)
	}
	for _, p := range problems {
		if _, err := fmt.Fprintln(stdout, "CORRUPT "+table.Visible(p)); err != nil {
			return err
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %d problem(s) found by %s: restore the ledger from a backup", ledger.ErrCorrupt, len(problems), how)
	}
	_, err = fmt.Fprintln(stdout, "ok     integrity: "+how)
	return err
}

// budgetMetrics writes the budgets' gauges (docs/chargeback.md) when the
// settings name a ledger and a budgets file: a loop serves them on
// /metrics for Alertmanager. A cluster whose data lags now leaves its
// budgets without a forecast gauge, as ledger check fails them.
func budgetMetrics(ctx context.Context, cfg *settings.Config, w io.Writer, now time.Time) error {
	if cfg.Ledger.DSN == "" || cfg.Ledger.BudgetsFile == "" {
		return nil
	}
	statuses, _, err := budgetStatus(ctx, cfg, nil, now)
	if err != nil {
		return fmt.Errorf("budgets: %w", err)
	}
	return render.BudgetProm(w, statuses)
}

// budgetStatus reads the settings' budgets' status from their ledger, for
// the clusters (nil: every one), and a warning for each cluster whose data
// lags the others or now.
func budgetStatus(ctx context.Context, cfg *settings.Config, clusters []string, now time.Time) ([]chargeback.Status, []string, error) {
	q := ledger.Query{GroupBy: cfg.Analyze.GroupBy, Clusters: clusters, MaxLag: cfg.Ledger.MaxLag, Now: now, MinObserved: cfg.Ledger.ForecastMinObserved}
	if err := shareIdle(cfg.Ledger, &q); err != nil {
		return nil, nil, err
	}
	if err := budgets(cfg.Ledger, &q); err != nil {
		return nil, nil, err
	}
	l, err := ledger.Open(ctx, cfg.Ledger.DSN, ledger.Options{ReadOnly: true})
	if err != nil {
		return nil, nil, err
	}
	defer l.Close()
	statuses, lags, err := l.Budgets(ctx, q)
	return statuses, lags, budgetErr(err)
}
