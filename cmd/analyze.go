package cmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/seedance/seedance/internal/exit"
	"github.com/seedance/seedance/internal/fsutil"
	"github.com/seedance/seedance/internal/table"
	"github.com/seedance/seedance/pipeline"
	"github.com/seedance/seedance/policy"
	"github.com/seedance/seedance/report"
	"github.com/seedance/seedance/settings"
)

// analyzeFlags are analyze's flags that are not settings.
type analyzeFlags struct {
	inputs              []string
	rulesFile, baseline string
	record              recordFlags
}

func newAnalyzeCmd(f *Factory) *cobra.Command {
	var af analyzeFlags
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
			inputs := append(append([]string(nil), af.inputs...), args...)
			spec, err := af.spec(f, inputs)
			if err != nil {
				return err
			}
			if spec.Config.Analyze.Every > 0 {
				return pipeline.Loop(c.Context(), pipeline.LoopSpec{Spec: *spec, Watch: f.watched(af.rulesFile),
					Reload: func() (pipeline.AnalyzeSpec, error) { return af.reload(f, inputs) },
					Stdout: f.IO.Out, Terminal: f.IO.IsStdoutTTY(), Log: f.IO.ErrOut})
			}
			if spec.Config.Analyze.Listen != "" {
				return exit.Usagef("--listen serves the reports of a loop: give --every too (e.g. --every 5m)")
			}
			return analyzeRun(c.Context(), f, spec)
		},
	}
	fl := c.Flags()
	fl.StringArrayVarP(&af.inputs, "input", "i", nil, "profile to read (repeatable); - reads stdin")
	addSettingFlags(c, "analyze")
	af.record.add(c, "with --source prometheus: start of the range (RFC 3339)", "with --source prometheus: end of the range (RFC 3339; default now)",
		"with --source: an nvidia-smi topo -m capture, FILE for every node or NODE=FILE (repeatable)")
	fl.StringVar(&af.baseline, "baseline", "", "earlier JSON report: adds delta (current − baseline) for every summary field")
	fl.StringVar(&af.rulesFile, "rules", "", "policy rules file (a rules: list, docs/rules.md), instead of the config file's rules:")
	return c
}

// spec builds one analysis from the effective configuration: the inputs or
// the source, the prices and the rules. A loop calls it again when the
// config or rules file changes.
func (af *analyzeFlags) spec(f *Factory, inputs []string) (*pipeline.AnalyzeSpec, error) {
	cfg, err := f.PricedConfig()
	if err != nil {
		return nil, err
	}
	spec := &pipeline.AnalyzeSpec{Config: cfg, Inputs: inputs, Stdin: f.IO.In, Baseline: af.baseline}
	switch {
	case cfg.Analyze.Source != "" && len(inputs) > 0:
		return nil, exit.Usagef("--source reads from a source instead of profile files: give one or the other")
	case cfg.Analyze.Source != "":
		if spec.Source, err = af.record.sourceSpec(f, cfg, 0); err != nil {
			return nil, err
		}
	case len(inputs) == 0:
		return nil, exit.Usagef("no input: give a profile with --input FILE (or - for stdin), or read a source with --source")
	}
	if spec.Rules, err = loadRules(af.rulesFile, f.configFile); err != nil {
		return nil, err
	}
	return spec, nil
}

// reload reads the config file (when there is one) again, then builds the
// analysis anew, with the same flags.
func (af *analyzeFlags) reload(f *Factory, inputs []string) (pipeline.AnalyzeSpec, error) {
	if err := f.rereadConfig(); err != nil {
		return pipeline.AnalyzeSpec{}, err
	}
	spec, err := af.spec(f, inputs)
	if err != nil {
		return pipeline.AnalyzeSpec{}, err
	}
	return *spec, nil
}

// rereadConfig reads the config file again (a loop's reload).
func (f *Factory) rereadConfig() error {
	if f.configFile == "" {
		return nil
	}
	b, err := fsutil.ReadRegular(f.configFile, settings.MaxFileBytes)
	if err != nil {
		return exit.Usagef("config %s: %v", f.configFile, err)
	}
	return settings.Read(f.viper, f.configFile, b)
}

// watched are the files a loop reads again when they change.
func (f *Factory) watched(rulesFile string) []string {
	var out []string
	for _, p := range []string{f.configFile, rulesFile} {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
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

// analyzeRun runs one analysis, writes its report, and prints the notes
// and the gates' lines.
func analyzeRun(ctx context.Context, f *Factory, spec *pipeline.AnalyzeSpec) error {
	res, out, err := pipeline.Analyze(ctx, *spec)
	if err != nil {
		return err
	}
	if err := pipeline.WriteReport(f.IO.Out, f.IO.IsStdoutTTY(), spec.Config.Analyze, res); err != nil {
		return err
	}
	if ac := spec.Config.Analyze; ac.Output != "-" || (ac.Format != "table" && ac.Format != "markdown") {
		// The report's warnings are not in front of the user (a file, or a
		// format read by a program): stderr says them.
		for _, w := range res.Warnings {
			fmt.Fprintln(f.IO.ErrOut, "warning: "+table.Visible(w))
		}
	}
	for _, n := range res.Summary.Notes {
		fmt.Fprintln(f.IO.ErrOut, "note: "+table.Visible(n))
	}
	if out.Ledger != nil {
		fmt.Fprintln(f.IO.ErrOut, pipeline.LedgerLine(*out.Ledger))
	}
	for _, g := range res.Gates {
		fmt.Fprintln(f.IO.ErrOut, "gate "+table.Visible(report.GateLine(g)))
	}
	switch {
	case out.GatesFailed > 0:
		return &exit.Error{Code: exit.GateFailed, Err: fmt.Errorf("%d of %d gates failed", out.GatesFailed, len(res.Gates))}
	case out.Interrupted:
		return exit.Interruptedf("interrupted: analyzed the samples collected so far")
	}
	return nil
}
