package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/seedance/seedance/internal/exit"
	"github.com/seedance/seedance/internal/fsutil"
	"github.com/seedance/seedance/internal/table"
	"github.com/seedance/seedance/recommend"
	"github.com/seedance/seedance/render"
	"github.com/seedance/seedance/report"
	"github.com/seedance/seedance/settings"
)

// PlanSpec is one plan: the profile it is made from and the settings.
type PlanSpec struct {
	Config *settings.Config
	// Input is the profile; - is Stdin.
	Input string
	Stdin io.Reader
}

// Plan makes the migration plan of seedance recommend: the plan of analyze
// --report migration, from the same analysis of the same input (#26: one
// plan).
func Plan(ctx context.Context, spec PlanSpec) (*recommend.Plan, error) {
	sources, closeAll, err := openInputs([]string{spec.Input}, spec.Stdin)
	defer closeAll()
	if err != nil {
		return nil, err
	}
	pricer := spec.Config.Pricing.Pricer()
	params := Params(spec.Config, pricer)
	params.KeepFleet = true
	r, err := analyzeAll(ctx, sources, params)
	if err != nil {
		return nil, err
	}
	plan, _, err := recommend.PlanReport(ctx, r, pricer.NodePrice, planOptions(spec.Config.Migration))
	if ctx.Err() != nil {
		return nil, interrupted("planning", ctx.Err())
	}
	if err != nil {
		why := append(slices.Clone(r.Warnings), "no migration plan: "+err.Error())
		return nil, fmt.Errorf("no migration plan: %s", strings.Join(why, "; "))
	}
	return plan, nil
}

// WritePlan writes the plan in a dialect to path ("-" is stdout),
// atomically for a file; a script written to a regular file is made
// executable.
func WritePlan(stdout io.Writer, path, dialect string, plan *recommend.Plan) error {
	write, err := recommend.For(dialect)
	if err != nil {
		return &exit.UsageError{Err: err}
	}
	var buf bytes.Buffer
	if err := write(&buf, plan); err != nil {
		return err
	}
	return writeOut(stdout, path, buf.Bytes(), dialect != "json" && dialect != "yaml")
}

// CheckPlanOutput checks a plan's --output: a name it may write, not its
// input.
func CheckPlanOutput(output, input string) error {
	if err := settings.CheckOutputName("--output", output); err != nil {
		return err
	}
	if err := fsutil.CheckOutput(output, input); err != nil {
		return exit.Usagef("--output: %v", err)
	}
	return nil
}

// writeOut writes b to path ("-" is stdout), atomically for a file, and
// makes a script written to a regular file executable.
func writeOut(stdout io.Writer, path string, b []byte, script bool) error {
	if path == "-" {
		_, err := stdout.Write(b)
		return err
	}
	err := fsutil.WriteAtomic(path, func(w io.Writer) error { _, err := w.Write(b); return err })
	if fi, serr := os.Stat(path); err == nil && serr == nil && fi.Mode().IsRegular() && script {
		err = os.Chmod(path, 0o755) // a script; never chmod a device
	}
	return err
}

// WriteQuotas writes the quota what-if of analyze --report queues, from
// the same analysis of the same input (docs/queues.md, What-if), as a
// script to path ("-" is stdout), atomically for a file, and its summary
// and the analysis' warnings to errOut.
func WriteQuotas(ctx context.Context, spec PlanSpec, stdout, errOut io.Writer, path string) error {
	sources, closeAll, err := openInputs([]string{spec.Input}, spec.Stdin)
	defer closeAll()
	if err != nil {
		return err
	}
	cfg := *spec.Config
	cfg.Analyze.Report = "queues"
	r, err := analyzeAll(ctx, sources, Params(&cfg, cfg.Pricing.Pricer()))
	if err != nil {
		return err
	}
	if r.Queues == nil {
		return fmt.Errorf("no quota what-if: %s names no queue (docs/queues.md, Sources)", spec.Input)
	}
	var buf bytes.Buffer
	if err := recommend.QuotaScript(&buf, r.QuotaWhatIf); err != nil {
		return err
	}
	if err := writeOut(stdout, path, buf.Bytes(), true); err != nil {
		return err
	}
	fmt.Fprintf(errOut, "quotas: %d change(s)\n", len(r.QuotaWhatIf))
	for _, w := range r.Warnings {
		fmt.Fprintf(errOut, "warning: %s\n", table.Flatten(w))
	}
	return nil
}

// WriteReport writes the report in the settings' format: to stdout
// (terminal says whether that is a terminal), or atomically to the output
// file.
func WriteReport(stdout io.Writer, terminal bool, ac settings.Analyze, res *report.Result) error {
	write, err := render.For(ac.Format)
	if err != nil {
		return &exit.UsageError{Err: fmt.Errorf("--format: %w", err)}
	}
	ropts := render.Options{Report: ac.Report, Terminal: ac.Output == "-" && terminal}
	if ac.Output == "-" {
		var buf bytes.Buffer
		if err := write(&buf, res, ropts); err != nil {
			return err
		}
		_, err := stdout.Write(buf.Bytes())
		return err
	}
	if ac.Keep > 0 {
		return writeKept(ac.Output, ac.Keep, res.Window.End, func(w io.Writer) error { return write(w, res, ropts) })
	}
	return fsutil.WriteAtomic(ac.Output, func(w io.Writer) error { return write(w, res, ropts) })
}
