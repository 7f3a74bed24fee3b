package cmd

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/seedance/seedance/internal/exit"
	"github.com/seedance/seedance/settings"

	"github.com/spf13/cobra"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/internal/fsutil"
	"github.com/seedance/seedance/internal/iostreams"
	"github.com/seedance/seedance/internal/table"
	"github.com/seedance/seedance/pricing"
	"github.com/seedance/seedance/recommend"
)

// RecommendOptions are the inputs of `seedance recommend`.
type RecommendOptions struct {
	IO      *iostreams.IOStreams
	Config  *settings.Config
	Input   string
	Dialect string
	Output  string
	Prices  map[string]float64
	Plan    recommend.Options
}

func newRecommendCmd(f *Factory, runF func(*RecommendOptions) error) *cobra.Command {
	o := &RecommendOptions{IO: f.IO}
	var gpuPrices []string
	c := &cobra.Command{
		Use:   "recommend --input PROFILE",
		Short: "Plan workload moves that free whole nodes, as a reviewable script",
		Long: `Plan which workloads to move so that whole nodes can be released, and where
pending work can run, then write the plan as a bash script of kubectl
commands (dry run unless run with --execute), Slurm scontrol lines, or JSON.

A moved workload gets as many free GPUs as it had, with enough memory each,
connected at least as well (NVLink stays NVLink), of the same GPU model
unless --allow-model-change; pods labelled seedance.io/pinned=true never
move. Every plan is replayed and checked before it is printed.`,
		Example: `  seedance recommend --input profile.json --output plan.sh && less plan.sh && bash plan.sh --execute
  seedance recommend --input profile.json --dialect json
  seedance recommend --input cluster.json.gz --dialect slurm --allow-sharing`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if o.Input == "" {
				return exit.Usagef("no input: give a profile with --input FILE (or - for stdin)")
			}
			if _, err := recommend.For(o.Dialect); err != nil {
				return &exit.UsageError{Err: err}
			}
			cfg, err := f.Config()
			if err != nil {
				return err
			}
			o.Config = cfg
			o.Plan = planOptions(cfg)
			if o.Prices, err = mergePrices(cfg.Pricing.GPUHourUSD, gpuPrices); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return recommendRun(o)
		},
	}
	fl := c.Flags()
	fl.StringVarP(&o.Input, "input", "i", "", "profile to plan from; - reads stdin")
	fl.StringVar(&o.Dialect, "dialect", "kubectl", "output: kubectl (a bash script), slurm (a bash script), json or yaml")
	fl.StringVarP(&o.Output, "output", "o", "-", "write the plan to this file (atomically); - is stdout")
	addSettingFlags(c, "recommend")
	completeValues(c, "dialect", recommend.Dialects)
	fl.StringArrayVar(&gpuPrices, "gpu-price", nil, "USD per GPU-hour for models whose name contains MODEL, as MODEL=USD (repeatable)")
	return c
}

func recommendRun(o *RecommendOptions) error {
	if err := settings.CheckOutputName("--output", o.Output); err != nil {
		return err
	}
	if err := fsutil.CheckOutput(o.Output, o.Input); err != nil {
		return exit.Usagef("--output: %v", err)
	}
	// The plan of analyze --report migration, from the same analysis of
	// the same input (#26: one plan).
	sources, closeAll, err := openInputs([]string{o.Input}, o.IO.In)
	defer closeAll()
	if err != nil {
		return err
	}
	params := analysisParams(o.Config, o.Prices)
	params.KeepFleet = true
	r, err := analyze.Analyze(sources, params)
	if err != nil {
		return err
	}
	price := pricing.New(o.Prices, o.Config.Pricing.DefaultGPUHourUSD).Price
	plan := recommend.AddToReport(r, price, o.Plan)
	if plan == nil {
		return fmt.Errorf("no migration plan: %s", strings.Join(r.Warnings, "; "))
	}
	write, err := recommend.For(o.Dialect)
	if err != nil {
		return &exit.UsageError{Err: err}
	}
	var buf bytes.Buffer
	if err := write(&buf, plan); err != nil {
		return err
	}
	if o.Output == "-" {
		_, err = o.IO.Out.Write(buf.Bytes())
	} else {
		err = fsutil.WriteAtomic(o.Output, func(w io.Writer) error { _, err := w.Write(buf.Bytes()); return err })
		if fi, serr := os.Stat(o.Output); err == nil && serr == nil && fi.Mode().IsRegular() && o.Dialect != "json" && o.Dialect != "yaml" {
			err = os.Chmod(o.Output, 0o755) // a script; never chmod a device
		}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(o.IO.ErrOut, "plan: %d move(s), %d node(s) released, $%.2f/h ($%.2f/month)\n",
		len(plan.Moves), len(plan.ReleasedNodes), plan.SavingsUSDPerHour, plan.SavingsUSDPerMonth)
	if plan.Refused != "" {
		fmt.Fprintf(o.IO.ErrOut, "note: %s\n", table.Flatten(plan.Refused))
	}
	if len(plan.Unplaced) > 0 {
		fmt.Fprintf(o.IO.ErrOut, "note: %d pending workload(s) fit nowhere else: %s\n", len(plan.Unplaced), table.Visible(strings.Join(plan.Unplaced, ", ")))
	}
	return nil
}
