package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/seedance/seedance/internal/exit"
	"github.com/seedance/seedance/settings"

	"github.com/spf13/cobra"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/internal/exprguard"
	"github.com/seedance/seedance/internal/fsutil"
	"github.com/seedance/seedance/internal/iostreams"
	"github.com/seedance/seedance/internal/table"
	"github.com/seedance/seedance/policy"
	"github.com/seedance/seedance/pricing"
	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/recommend"
	"github.com/seedance/seedance/render"
	"github.com/seedance/seedance/report"
	"github.com/seedance/seedance/source"
)

// AnalyzeOptions are the inputs of `seedance analyze`.
type AnalyzeOptions struct {
	IO       *iostreams.IOStreams
	Config   *settings.Config
	Inputs   []string
	Baseline string
	// Prices from --gpu-price, over the config file's pricing.gpu_hour_usd.
	Prices map[string]float64
	// Source reads straight from a source (--source) instead of Inputs,
	// with what seedance profile would be given.
	Source *ProfileOptions
	// Rules are the policy rules in force (--rules FILE, else the config
	// file's rules:); nil when the user gave none.
	Rules *policy.Set
	// Ctx ends with the command (SIGINT, SIGTERM): it stops a run's rules.
	Ctx context.Context
}

func newAnalyzeCmd(f *Factory, runF func(*AnalyzeOptions) error) *cobra.Command {
	opts := &AnalyzeOptions{IO: f.IO}
	src := &ProfileOptions{IO: f.IO, NVML: f.NVML, Now: f.Now, Build: f.Build, viper: f.viper}
	var inputs, gpuPrices []string
	var rulesFile string
	c := &cobra.Command{
		Use:   "analyze [--input FILE ...] [FILE ...]",
		Short: "Find idle GPUs and nodes in profiles and price them",
		Long: `Read one or more profiles (format v1, from any source; - is stdin; gzip is
detected) and report which GPUs and nodes sat idle, what that cost in money
and energy, and what to do about it. The rules are in docs/analysis.md.

Profiles of different nodes, or of consecutive time ranges, are merged.
--source NAME analyzes straight from a source (nvml, prometheus, scrape or
sim) with the settings of seedance profile, without a profile file.
--gate evaluates expressions over the JSON report (expr-lang syntax) for CI,
and --baseline adds the change from an earlier JSON report.

Exit statuses: 0 ok (finding nothing idle is a result, not a failure);
1 runtime failure; 2 usage error or bad input; 3 a gate failed.`,
		Example: `  seedance analyze --input profile.json
  seedance analyze --input day1.json.gz --input day2.json.gz --report all --format json --output report.json
  seedance analyze profile.json --format markdown --baseline main-report.json \
      --gate 'summary.idle_ratio <= 0.2' --gate 'delta.avg_gpu_util_pct >= -5'
  seedance analyze profile.json --format prom --output /var/lib/node_exporter/textfile/seedance.prom
  seedance analyze --source prometheus --prometheus-url http://prometheus:9090 --duration 24h --report all`,
		RunE: func(c *cobra.Command, args []string) error {
			opts.Inputs = append(append([]string(nil), inputs...), args...)
			src.Ctx, opts.Ctx = c.Context(), c.Context()
			o, err := configure(f, opts, src, gpuPrices, rulesFile)
			if err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			switch {
			case o.Config.Analyze.Every > 0:
				var watch []string
				for _, p := range []string{f.configFile, rulesFile} {
					if p != "" {
						watch = append(watch, p)
					}
				}
				// The config file (when there is one) read again, then the
				// options built anew, with the same flags.
				reload := func() (*AnalyzeOptions, error) {
					if f.configFile != "" {
						b, err := fsutil.ReadRegular(f.configFile, settings.MaxFileBytes)
						if err != nil {
							return nil, exit.Usagef("config %s: %v", f.configFile, err)
						}
						if err := settings.Read(f.viper, f.configFile, b); err != nil {
							return nil, err
						}
					}
					return configure(f, opts, src, gpuPrices, rulesFile)
				}
				return analyzeLoop(c.Context(), o, reload, watch)
			case o.Config.Analyze.Listen != "":
				return exit.Usagef("--listen serves the reports of a loop: give --every too (e.g. --every 5m)")
			}
			return analyzeRun(o)
		},
	}
	fl := c.Flags()
	fl.StringArrayVarP(&inputs, "input", "i", nil, "profile to read (repeatable); - reads stdin")
	addSettingFlags(c, "analyze")
	fl.StringVar(&src.Start, "start", "", "with --source prometheus: start of the range (RFC 3339)")
	fl.StringVar(&src.End, "end", "", "with --source prometheus: end of the range (RFC 3339; default now)")
	fl.StringArrayVar(&src.TopologyFiles, "topology-file", nil, "with --source: an nvidia-smi topo -m capture, FILE for every node or NODE=FILE (repeatable)")
	fl.StringArrayVar(&gpuPrices, "gpu-price", nil, "USD per GPU-hour for models whose name contains MODEL, as MODEL=USD (repeatable)")
	fl.StringVar(&opts.Baseline, "baseline", "", "earlier JSON report: adds delta (current − baseline) for every summary field")
	fl.StringVar(&rulesFile, "rules", "", "policy rules file (a rules: list, docs/rules.md), instead of the config file's rules:")
	return c
}

// configure builds the options of one analysis from the effective
// configuration (f.Config): the inputs or the source (a copy of src, with
// the configuration), the prices and the rules. A loop calls it again when
// the config or rules file changes.
func configure(f *Factory, base *AnalyzeOptions, src *ProfileOptions, gpuPrices []string, rulesFile string) (*AnalyzeOptions, error) {
	cfg, err := f.Config()
	if err != nil {
		return nil, err
	}
	o := *base
	o.Config = cfg
	switch {
	case cfg.Analyze.Source != "" && len(o.Inputs) > 0:
		return nil, exit.Usagef("--source reads from a source instead of profile files: give one or the other")
	case cfg.Analyze.Source != "":
		s := *src
		s.Config = cfg
		s.Config.Profile.Source = cfg.Analyze.Source
		o.Source = &s
	case len(o.Inputs) == 0:
		return nil, exit.Usagef("no input: give a profile with --input FILE (or - for stdin), or read a source with --source")
	}
	if o.Prices, err = mergePrices(cfg.Pricing.GPUHourUSD, gpuPrices); err != nil {
		return nil, err
	}
	if o.Rules, err = loadRules(rulesFile, f.configFile); err != nil {
		return nil, err
	}
	return &o, nil
}

// loadRules reads and compiles the policy rules: a --rules file, else the
// config file's rules: list. It returns nil when there are none (the
// default rules only restate the built-in suggestions).
func loadRules(file, configFile string) (*policy.Set, error) {
	path, only := file, true
	if path == "" {
		path, only = configFile, false
	}
	if path == "" {
		return nil, nil
	}
	b, err := fsutil.ReadRegular(path, settings.MaxFileBytes)
	if err != nil {
		return nil, exit.Usagef("--rules %s: %v", path, err)
	}
	rules, err := policy.Load(b, path, only)
	if err == nil && len(rules) == 0 && only {
		err = fmt.Errorf("%s: no rules: list", path)
	}
	if err != nil {
		return nil, &exit.UsageError{Err: err}
	}
	if len(rules) == 0 {
		return nil, nil
	}
	set, err := policy.Compile(rules, path)
	if err != nil {
		return nil, &exit.UsageError{Err: err}
	}
	return set, nil
}

// mergePrices overlays --gpu-price MODEL=USD entries on the config's map.
func mergePrices(cfg map[string]float64, flags []string) (map[string]float64, error) {
	out := map[string]float64{}
	for k, v := range cfg {
		out[k] = v
	}
	for _, f := range flags {
		model, price, ok := strings.Cut(f, "=")
		v, err := strconv.ParseFloat(strings.TrimSpace(price), 64)
		if !ok || strings.TrimSpace(model) == "" || err != nil || !(v >= 0 && v <= 1e6) {
			return nil, exit.Usagef("--gpu-price %q: want MODEL=USD_PER_HOUR, e.g. H100=2.49", f)
		}
		out[strings.TrimSpace(model)] = v
	}
	return out, nil
}

func analyzeRun(o *AnalyzeOptions) error {
	res, gateErr, interrupted, err := analyzeOnce(o)
	if err != nil {
		return err
	}
	if err := writeReport(o, res); err != nil {
		return err
	}
	r := res.Report
	for _, n := range r.Summary.Notes {
		fmt.Fprintln(o.IO.ErrOut, "note: "+table.Visible(n))
	}
	for _, g := range res.Gates {
		fmt.Fprintln(o.IO.ErrOut, "gate "+table.Visible(report.GateLine(g)))
	}
	if gateErr != nil {
		failed := 0
		for _, g := range res.Gates {
			if !g.Passed {
				failed++
			}
		}
		return &exit.Error{Code: exit.GateFailed, Err: fmt.Errorf("%d of %d gates failed", failed, len(res.Gates))}
	}
	return interrupted
}

// analyzeOnce checks the settings, reads the inputs (or runs the source),
// analyzes, plans, applies the rules and evaluates the gates. gateErr is
// set when a gate failed; interrupted when the source was stopped part-way.
// analysisParams are the analysis settings of the configuration, the same
// for analyze and for recommend, whose plans are made from the same
// analysis (#26: one plan).
func analysisParams(cfg *settings.Config, prices map[string]float64) analyze.Params {
	ac := cfg.Analyze
	return analyze.Params{
		IdleThresholdPct: ac.IdleThresholdPct, IdleWindow: ac.IdleWindow, UnderusedPct: ac.UnderusedPct, IdleNodeShare: ac.IdleNodeShare,
		StaleAfter: ac.StaleAfter, Prices: prices, DefaultGPUHourUSD: cfg.Pricing.DefaultGPUHourUSD,
		EnergyUSDPerKWh: cfg.Pricing.EnergyUSDPerKWh, Dialect: analyze.DialectNone, SparklineBuckets: 40,
	}
}

// planOptions are the migration settings: what may move. They are
// settings, never the output dialect's, so that the plan of the same data
// is the same however it is written.
func planOptions(cfg *settings.Config) recommend.Options {
	m := cfg.Migration
	return recommend.Options{AllowModelChange: m.AllowModelChange, AllowSharing: m.AllowSharing, MaxMovesPerNode: m.MaxMovesPerNode,
		MoveJobs: m.MoveJobs, MovePending: m.MovePending, MoveBlockers: m.MoveBlockers}
}

// context is the command's, or the background for a caller that set none.
func (o *AnalyzeOptions) context() context.Context {
	if o.Ctx != nil {
		return o.Ctx
	}
	return context.Background()
}

func analyzeOnce(o *AnalyzeOptions) (res *report.Result, gateErr, interrupted, err error) {
	ac := o.Config.Analyze
	if !render.ValidReport(ac.Report) {
		return nil, nil, nil, exit.Usagef("unknown --report %q (choose %s)", ac.Report, strings.Join(render.Reports, ", "))
	}
	if _, err := render.For(ac.Format); err != nil {
		return nil, nil, nil, &exit.UsageError{Err: fmt.Errorf("--format: %w", err)}
	}
	switch ac.Dialect {
	case analyze.DialectKubectl, analyze.DialectSlurm, analyze.DialectNone:
	default:
		return nil, nil, nil, exit.Usagef("unknown --dialect %q (choose kubectl, slurm or none)", ac.Dialect)
	}
	if ac.IdleThresholdPct < 0 || ac.IdleThresholdPct > 100 || ac.IdleWindow <= 0 {
		return nil, nil, nil, exit.Usagef("--idle-threshold must be 0–100 and --idle-window positive")
	}
	if !(ac.IdleNodeShare > 0 && ac.IdleNodeShare <= 1) {
		return nil, nil, nil, exit.Usagef("--idle-node-share must be in (0, 1], e.g. 0.5 for half the observed time")
	}
	if err := settings.CheckOutputName("--output", ac.Output); err != nil {
		return nil, nil, nil, err
	}
	if err := fsutil.CheckOutput(ac.Output, append([]string{o.Baseline}, o.Inputs...)...); err != nil {
		return nil, nil, nil, exit.Usagef("--output: %v", err)
	}
	var base *analyze.Summary
	if o.Baseline != "" {
		if base, err = readBaseline(o.Baseline, o.IO.In); err != nil {
			return nil, nil, nil, err
		}
	}
	var sources []analyze.Source
	var closeAll func()
	if o.Source != nil {
		sources, closeAll, interrupted, err = sourceInput(o.Source)
	} else {
		sources, closeAll, err = openInputs(o.Inputs, o.IO.In)
	}
	defer closeAll()
	if err != nil {
		return nil, nil, nil, err
	}
	params := analysisParams(o.Config, o.Prices)
	params.Dialect = ac.Dialect
	if ac.Report == "scaling" || ac.Report == "all" {
		sc := o.Config.Scaling
		if sc.Period <= 0 || sc.Alpha <= 0 || sc.Alpha > 1 || sc.TargetPct <= 0 || sc.UpPeriods < 1 || sc.DownPeriods < 1 {
			return nil, nil, nil, exit.Usagef("scaling settings: period, alpha (0–1], target_pct, up_periods and down_periods must be positive")
		}
		params.Scaling = &analyze.ScalingParams{Period: sc.Period, Weights: sc.Weights, PreferSMActive: sc.PreferSMActive,
			Alpha: sc.Alpha, TargetPct: sc.TargetPct, LowerPct: sc.LowerPct, UpPeriods: sc.UpPeriods, DownPeriods: sc.DownPeriods,
			MinGPUs: sc.MinGPUs, MaxGPUs: sc.MaxGPUs, PoolBy: sc.PoolBy}
		hpa := analyze.DefaultScaling()
		params.Scaling.HPATolerance, params.Scaling.HPAStabilization = hpa.HPATolerance, hpa.HPAStabilization
	}
	params.KeepFleet = ac.Report == "migration" || ac.Report == "fragmentation" || ac.Report == "all"
	params.GPUFigures = o.Rules != nil && o.Rules.NeedsGPUFigures()
	params.Fragmentation = ac.Report == "fragmentation" || ac.Report == "all"
	if ac.Report == "attribution" || ac.Report == "all" {
		if err := analyze.CheckGroupBy(ac.GroupBy); err != nil {
			return nil, nil, nil, &exit.UsageError{Err: err}
		}
		rc := o.Config.Attribution
		params.Attribution = &analyze.AttributionParams{GroupBy: ac.GroupBy, Rules: analyze.HolderRules{
			IdleUtilPct: rc.IdleHolderUtilPct, IdleHours: rc.IdleHolderHours, SmallMemoryPct: rc.SmallMemoryPct, ImbalanceIdlePct: rc.ImbalanceIdlePct}}
	}
	r, err := analyze.Analyze(sources, params)
	if err != nil {
		return nil, nil, nil, err
	}
	res = &report.Result{Report: r}
	if base != nil {
		res.SetBaseline(base)
	}
	if params.KeepFleet {
		price := pricing.New(o.Prices, o.Config.Pricing.DefaultGPUHourUSD).Price
		ro := planOptions(o.Config)
		if ac.Report != "fragmentation" {
			res.Migration = recommend.AddToReport(r, price, ro)
		}
		if params.Fragmentation {
			res.Fragmentation = recommend.AddFragmentation(r, price, ro, res.Migration, recommend.FragmentOptions{ThresholdRatio: ac.FragmentRatio})
		}
	}
	if o.Rules != nil {
		lc := o.Config.Limits
		in := policy.Input{Result: res, Dialect: ac.Dialect, Total: lc.RulesTime,
			Limits: exprguard.Limits{Time: lc.ExprTime, Bytes: int64(lc.ExprMemoryMiB) << 20}}
		if err := o.Rules.Apply(o.context(), in); err != nil {
			return nil, nil, nil, &exit.Error{Code: exit.Interrupted, Err: fmt.Errorf("interrupted while the rules ran, nothing written: %w", err)}
		}
	}
	res.Gates, gateErr = report.Gates(res, ac.Gates)
	if errors.Is(gateErr, report.ErrInvalidGate) {
		return nil, nil, nil, &exit.UsageError{Err: gateErr}
	}
	if gateErr != nil && !errors.Is(gateErr, report.ErrGateFailed) {
		return nil, nil, nil, gateErr
	}
	return res, gateErr, interrupted, nil
}

// writeReport writes the report in the chosen format: to stdout, or
// atomically to the --output file.
func writeReport(o *AnalyzeOptions, res *report.Result) error {
	ac := o.Config.Analyze
	write, err := render.For(ac.Format)
	if err != nil {
		return &exit.UsageError{Err: fmt.Errorf("--format: %w", err)}
	}
	ropts := render.Options{Report: ac.Report, Terminal: ac.Output == "-" && o.IO.IsStdoutTTY()}
	if ac.Output == "-" {
		var buf bytes.Buffer
		if err := write(&buf, res, ropts); err != nil {
			return err
		}
		_, err := o.IO.Out.Write(buf.Bytes())
		return err
	}
	return fsutil.WriteAtomic(ac.Output, func(w io.Writer) error { return write(w, res, ropts) })
}

// sourceInput runs the source of o, as seedance profile would, and hands
// its profile to the analysis as a stream: the same reader and validator
// as a profile file, so the numbers are those of profile then analyze.
// interrupted is the exit status of a run stopped part-way (what was read
// is analyzed, and the report says the input is incomplete).
func sourceInput(o *ProfileOptions) (sources []analyze.Source, closeAll func(), interrupted, err error) {
	closeAll = func() {}
	pc := o.Config.Profile
	if pc.Interval < settings.MinInterval || pc.Duration < 0 {
		return nil, closeAll, nil, exit.Usagef("--interval must be at least %s and --duration not negative", settings.MinInterval)
	}
	if o.topologies, err = readTopologyFiles(o.TopologyFiles); err != nil {
		return nil, closeAll, nil, err
	}
	p, sp, err := recordProfile(o, "")
	if p == nil {
		return nil, closeAll, nil, err
	}
	if err != nil {
		return nil, closeAll, nil, err
	}
	name := "--source " + pc.Source
	if sp != nil {
		// The source's nodes, spilled batch by batch, are read back
		// through the same reader as a profile file.
		closeAll = func() { sp.Close() }
		if sp.samples == 0 {
			return nil, closeAll, nil, fmt.Errorf("%w: the %s source collected no GPU sample, so there is nothing to analyze", source.ErrNothingObserved, p.Source)
		}
		if !p.Complete && o.Ctx.Err() != nil {
			interrupted = &exit.Error{Code: exit.Interrupted, Err: errors.New("interrupted: analyzed the samples collected so far")}
		}
		r, err := sp.Reader(p)
		if err != nil {
			return nil, closeAll, nil, err
		}
		s, err := profile.OpenStream(r, name)
		if err != nil {
			return nil, closeAll, nil, err
		}
		return []analyze.Source{{Name: name, Stream: s}}, closeAll, interrupted, nil
	}
	if countSamples(p) == 0 {
		return nil, closeAll, nil, fmt.Errorf("%w: the %s source collected no GPU sample, so there is nothing to analyze", source.ErrNothingObserved, p.Source)
	}
	attachTopologyFiles(o, p)
	if !p.Complete && o.Ctx.Err() != nil {
		interrupted = &exit.Error{Code: exit.Interrupted, Err: errors.New("interrupted: analyzed the samples collected so far")}
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(profile.Encode(pw, p)) }()
	closeAll = func() { pr.Close() } // unblocks the encoder if the analysis stopped early
	s, err := profile.OpenStream(pr, name)
	if err != nil {
		return nil, closeAll, nil, err
	}
	return []analyze.Source{{Name: name, Stream: s}}, closeAll, interrupted, nil
}

func readBaseline(path string, stdin io.Reader) (*analyze.Summary, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read baseline: %w: %v", report.ErrInvalidBaseline, err)
	}
	defer f.Close()
	return report.ReadBaseline(f, path)
}

// openInputs opens every input and reads its header; the streams are read
// by Analyze, one GPU at a time.
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
			f, err := os.Open(p)
			if err != nil {
				return nil, closeAll, fmt.Errorf("read profile %s: %w: %v", p, profile.ErrInvalid, err)
			}
			if fi, err := f.Stat(); err == nil && fi.IsDir() {
				f.Close()
				return nil, closeAll, fmt.Errorf("read profile %s: %w: it is a directory, not a profile file", p, profile.ErrInvalid)
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
