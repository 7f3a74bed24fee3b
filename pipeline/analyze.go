// Package pipeline owns the order of the stages of each command: a typed
// spec in, a result out. Record runs a source into a profile (seedance
// profile); Analyze reads profiles or a source, analyzes, plans, applies
// the rules and evaluates the gates (seedance analyze, one run of its
// loop); Plan makes the migration plan from the same analysis (seedance
// recommend); Loop runs Analyze on a period and serves /metrics. One-shot
// runs, --source and loop mode all go through these, so that the same data
// gives the same numbers and the same plan whichever way it came.
//
// Data flows one way: sources → profile → analyze → recommend → policy →
// report (gates) → render.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"slices"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/internal/exit"
	"github.com/seedance/seedance/internal/exprguard"
	"github.com/seedance/seedance/internal/fsutil"
	"github.com/seedance/seedance/ledger"
	"github.com/seedance/seedance/policy"
	"github.com/seedance/seedance/pricing"
	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/recommend"
	"github.com/seedance/seedance/report"
	"github.com/seedance/seedance/settings"
)

// AnalyzeSpec is one analysis: what it reads and the settings.
type AnalyzeSpec struct {
	Config *settings.Config
	// Inputs are profile files; - is Stdin.
	Inputs []string
	Stdin  io.Reader
	// Source, when set, is read instead of Inputs, as seedance profile
	// would record it (--source).
	Source *RecordSpec
	// Baseline is an earlier JSON report, for the delta.
	Baseline string
	// Rules are the policy rules in force; nil when the user gave none.
	Rules *policy.Set
}

// Outcome is how a run ended when it made a report.
type Outcome struct {
	// GatesFailed counts the gates that did not pass.
	GatesFailed int
	// Interrupted: the source was stopped part-way; what it read was
	// analyzed, and the report says the input is incomplete.
	Interrupted bool
	// Ledger is what counting the same data into the ledger did, when the
	// settings name one (--ledger).
	Ledger *ledger.Updated
}

// Analyze reads the inputs (or runs the source), analyzes them, makes the
// plan and the fragmentation report the settings ask for, applies the
// rules and evaluates the gates.
func Analyze(ctx context.Context, spec AnalyzeSpec) (*report.Result, Outcome, error) {
	cfg, ac := spec.Config, spec.Config.Analyze
	if err := fsutil.CheckOutput(ac.Output, append([]string{spec.Baseline}, spec.Inputs...)...); err != nil {
		return nil, Outcome{}, exit.Usagef("--output: %v", err)
	}
	var base *report.Baseline
	var err error
	if spec.Baseline != "" {
		if base, err = readBaseline(spec.Baseline); err != nil {
			return nil, Outcome{}, err
		}
	}
	sources, rec, out, closeAll, err := spec.open(ctx)
	defer closeAll()
	if err != nil {
		return nil, out, err
	}
	pricer := cfg.Pricing.Pricer()
	params := Params(cfg, pricer)
	params.GPUFigures = spec.Rules != nil && spec.Rules.NeedsGPUFigures()
	r, err := analyzeAll(ctx, sources, params)
	if err != nil {
		return nil, out, err
	}
	if out.Ledger, err = spec.countIntoLedger(ctx, out, rec); err != nil {
		return nil, out, err
	}
	res := report.New(r)
	if out.Ledger != nil && ac.Format == "html" {
		if res.History, err = monthToDate(ctx, cfg, out.Ledger.DataEnd); err != nil {
			return nil, out, err
		}
	}
	recommend.Commands(res.Suggestions, r, ac.Dialect)
	if base != nil {
		res.SetBaseline(base)
	}
	if err := addPlan(ctx, res, cfg, pricer); err != nil {
		return nil, out, err
	}
	if spec.Rules != nil {
		lc := cfg.Limits
		in := policy.Input{Result: res, Dialect: ac.Dialect, Total: lc.RulesTime,
			Limits: exprguard.Limits{Time: lc.ExprTime, Bytes: int64(lc.ExprMemoryMiB) << 20}}
		if err := spec.Rules.Apply(ctx, in); err != nil {
			return nil, out, exit.Interruptedf("interrupted while the rules ran, nothing written: %w", err)
		}
	}
	res.Gates, err = report.Gates(res, ac.Gates)
	switch {
	case errors.Is(err, report.ErrInvalidGate):
		return nil, out, &exit.UsageError{Err: err}
	case err != nil && !errors.Is(err, report.ErrGateFailed):
		return nil, out, err
	}
	for _, g := range res.Gates {
		if !g.Passed {
			out.GatesFailed++
		}
	}
	return res, out, nil
}

// Params are the analysis settings, the same for analyze and for
// recommend, whose plans are made from the same analysis (#26: one plan),
// with the run's one Pricer.
func Params(cfg *settings.Config, pricer *pricing.Pricer) analyze.Params {
	ac := cfg.Analyze
	p := analyze.Params{
		IdleThresholdPct: ac.IdleThresholdPct, IdleWindow: ac.IdleWindow, UnderusedPct: ac.UnderusedPct, IdleNodeShare: ac.IdleNodeShare,
		StaleAfter: ac.StaleAfter, PoolBy: cfg.Scaling.PoolBy, Pricer: pricer, EnergyUSDPerKWh: cfg.Pricing.EnergyUSDPerKWh, SparklineBuckets: 40,
		KeepFleet: ac.Has("migration") || ac.Has("fragmentation"), Fragmentation: ac.Has("fragmentation"),
	}
	if ac.Has("scaling") {
		sc, hpa := cfg.Scaling, analyze.DefaultScaling()
		p.Scaling = &analyze.ScalingParams{Period: sc.Period, Weights: sc.Weights, PreferSMActive: sc.PreferSMActive,
			Alpha: sc.Alpha, TargetPct: sc.TargetPct, LowerPct: sc.LowerPct, UpPeriods: sc.UpPeriods, DownPeriods: sc.DownPeriods,
			MinGPUs: sc.MinGPUs, MaxGPUs: sc.MaxGPUs, HPATolerance: hpa.HPATolerance, HPAStabilization: hpa.HPAStabilization}
	}
	if ac.Has("attribution") || ac.Has("units") {
		// The unit figures split the GPUs' time among their holders as
		// attribution does (docs/units.md).
		rc := cfg.Attribution
		p.Attribution = &analyze.AttributionParams{GroupBy: ac.GroupBy, UnitsOnly: !ac.Has("attribution"), Rules: analyze.HolderRules{
			IdleUtilPct: rc.IdleHolderUtilPct, IdleHours: rc.IdleHolderHours, SmallMemoryPct: rc.SmallMemoryPct, ImbalanceIdlePct: rc.ImbalanceIdlePct}}
	}
	if ac.Has("queues") {
		p.Queues = queueParams(cfg)
	}
	return p
}

// queueParams are the queue figures' settings (docs/queues.md).
func queueParams(cfg *settings.Config) *analyze.QueueParams {
	q := cfg.Queues
	return &analyze.QueueParams{HeldPct: q.HoardHeldPct, UsedPct: q.HoardUsedPct, Percentile: q.Percentile, HeadroomPct: q.HeadroomPct,
		HalfLifeS: q.UsageHalfLife.Seconds(), SamplingS: q.UsageSamplingInterval.Seconds()}
}

// addPlan adds the migration plan and the fragmentation report the
// settings ask for, priced by the run's Pricer; an error only when ctx was
// cancelled meanwhile (a plan that cannot be made is a warning).
func addPlan(ctx context.Context, res *report.Result, cfg *settings.Config, pricer *pricing.Pricer) error {
	ac := cfg.Analyze
	ro := planOptions(cfg.Migration)
	if ac.Has("migration") {
		plan, sugs, err := recommend.PlanReport(ctx, res.Report, pricer.NodePrice, ro)
		if ctx.Err() != nil {
			return interrupted("planning", ctx.Err())
		}
		res.Add("no migration plan", sugs, err)
		res.Migration = plan
	}
	if ac.Has("fragmentation") {
		f, sugs, err := recommend.FragmentReport(ctx, res.Report, pricer.NodePrice, ro, res.Migration, recommend.FragmentOptions{ThresholdRatio: ac.FragmentRatio})
		if ctx.Err() != nil {
			return interrupted("planning", ctx.Err())
		}
		res.Add("no fragmentation report", sugs, err)
		res.Fragmentation = f
	}
	return nil
}

// interrupted is the failure of a stage that ctx stopped: exit 130,
// nothing written.
func interrupted(stage string, err error) error {
	return exit.Interruptedf("interrupted while %s, nothing written: %w", stage, err)
}

// countIntoLedger counts what the analysis read into the ledger the
// settings name (nil when none): the input files, or the source's
// recording itself, so that the source is not read a second time; each
// run of a loop keeps the ledger's history too.
func (spec *AnalyzeSpec) countIntoLedger(ctx context.Context, out Outcome, rec *Recording) (*ledger.Updated, error) {
	if spec.Config.Ledger.DSN == "" || out.Interrupted {
		return nil, nil
	}
	if slices.Contains(spec.Inputs, "-") {
		return nil, exit.Usagef("--ledger reads the inputs again: give files, not - (stdin)")
	}
	up, err := LedgerUpdate(ctx, LedgerUpdateSpec{Config: spec.Config, Inputs: spec.Inputs, Source: spec.Source, Recorded: rec})
	if err != nil {
		return nil, err
	}
	return &up, nil
}

// open opens the inputs, or runs the source, as analysis sources; rec is
// the source's recording (nil for inputs), which the ledger counts.
func (spec *AnalyzeSpec) open(ctx context.Context) (sources []analyze.Source, rec *Recording, out Outcome, closeAll func(), err error) {
	if spec.Source == nil {
		sources, closeAll, err := openInputs(spec.Inputs, spec.Stdin)
		return sources, nil, Outcome{}, closeAll, err
	}
	src := *spec.Source
	if spec.Config.Ledger.DSN != "" {
		// Read in the ledger's buckets, so that the ledger can count it,
		// and the counters of work it keeps.
		src.Work = true
		if src.Align, err = ledgerBucket(ctx, spec.Config); err != nil {
			return nil, nil, Outcome{}, func() {}, err
		}
	}
	recd, err := Record(ctx, src)
	if err != nil {
		return nil, nil, Outcome{}, func() {}, err
	}
	name := "--source " + spec.Source.Config.Profile.Source
	s, closeStream, err := recd.Stream(name)
	// The recording closes with the analysis, also when it is not handed
	// on (rec, a named result, is nil on the error path).
	closeAll = func() { closeStream(); recd.Close() }
	if err != nil && ctx.Err() != nil {
		// Stopped before the first sample: not an empty source.
		return nil, nil, Outcome{}, closeAll, interrupted("the source was read", ctx.Err())
	}
	if err != nil {
		return nil, nil, Outcome{}, closeAll, err
	}
	out = Outcome{Interrupted: !recd.Profile.Complete && ctx.Err() != nil}
	return []analyze.Source{{Name: name, Stream: s}}, recd, out, closeAll, nil
}

func readBaseline(path string) (*report.Baseline, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read baseline: %w: %v", report.ErrInvalidBaseline, err)
	}
	defer f.Close()
	return report.ReadBaseline(f, path)
}

// openInputs opens every input and reads its header; the streams are read
// by the analysis, one GPU at a time.
func openInputs(paths []string, stdin io.Reader) ([]analyze.Source, func(), error) {
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	var out []analyze.Source
	stdinUsed := false
	for _, p := range paths {
		var r io.Reader
		if p == "-" {
			if stdinUsed {
				return nil, closeAll, exit.Usagef("- (stdin) given more than once")
			}
			stdinUsed, r = true, stdin
		} else {
			f, err := openProfile(p)
			if err != nil {
				return nil, closeAll, err
			}
			files = append(files, f)
			r = f
		}
		s, err := profile.OpenStream(r, p)
		if err != nil {
			return nil, closeAll, err
		}
		out = append(out, analyze.Source{Name: p, Stream: s})
	}
	return out, closeAll, nil
}

// openProfile opens a profile file; a directory is an invalid profile.
func openProfile(p string) (*os.File, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("read profile %s: %w: %v", p, profile.ErrInvalid, err)
	}
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		f.Close()
		return nil, fmt.Errorf("read profile %s: %w: it is a directory, not a profile file", p, profile.ErrInvalid)
	}
	return f, nil
}

// analyzeAll analyzes the sources. The analysis' accumulators are garbage
// once it returns: a collection frees them for what follows to reuse,
// which would otherwise allocate beside them. Where a plan follows (the
// fleet is kept), which allocates a fleet's records anew in other shapes,
// their pages also go back to the OS first (peak RSS of --report all on
// 10,000 nodes about 4 MiB lower); where only the report follows, which
// reuses them, handing them back would cost the system calls and then the
// faults that take them again: about 15 % of the analysis' CPU on 10,000
// nodes, for no lower peak (docs/performance.md).
func analyzeAll(ctx context.Context, sources []analyze.Source, params analyze.Params) (*analyze.Report, error) {
	r, err := analyze.Analyze(ctx, sources, params)
	if ctx.Err() != nil {
		return nil, interrupted("analyzing", ctx.Err())
	}
	if params.KeepFleet {
		debug.FreeOSMemory()
	} else {
		runtime.GC()
	}
	return r, err
}
