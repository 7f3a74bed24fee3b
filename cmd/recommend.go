package cmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/seedance/seedance/internal/exit"
	"github.com/seedance/seedance/internal/table"
	"github.com/seedance/seedance/pipeline"
	"github.com/seedance/seedance/recommend"
)

// RecommendOptions are the inputs of `seedance recommend`: the plan to
// make, and how to write it.
type RecommendOptions struct {
	Spec            pipeline.PlanSpec
	Dialect, Output string
	// Quotas writes the quota what-if instead of the migration plan.
	Quotas bool
}

func newRecommendCmd(f *Factory, runF func(*RecommendOptions) error) *cobra.Command {
	o := &RecommendOptions{}
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
  seedance recommend --input cluster.json.gz --dialect slurm --allow-sharing
  seedance recommend --input profile.json --quotas --output quotas.sh`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if o.Spec.Input == "" {
				return exit.Usagef("no input: give a profile with --input FILE (or - for stdin)")
			}
			if _, err := recommend.For(o.Dialect); err != nil {
				return &exit.UsageError{Err: err}
			}
			cfg, err := f.PricedConfig()
			if err != nil {
				return err
			}
			o.Spec.Config, o.Spec.Stdin = cfg, f.IO.In
			if runF != nil {
				return runF(o)
			}
			return recommendRun(c, f, o)
		},
	}
	fl := c.Flags()
	fl.StringVarP(&o.Spec.Input, "input", "i", "", "profile to plan from; - reads stdin")
	fl.StringVar(&o.Dialect, "dialect", "kubectl", "output: kubectl (a bash script), slurm (a bash script), json or yaml")
	fl.StringVarP(&o.Output, "output", "o", "-", "write the plan to this file (atomically); - is stdout")
	fl.BoolVar(&o.Quotas, "quotas", false, "write the queues' quotas right-sized from measured use instead (a kubectl script of ClusterQueue patches; docs/queues.md)")
	addSettingFlags(c, "recommend")
	completeValues(c, "dialect", recommend.Dialects)
	return c
}

// recommendRun makes the plan, writes it and prints its summary.
func recommendRun(c *cobra.Command, f *Factory, o *RecommendOptions) error {
	if err := pipeline.CheckPlanOutput(o.Output, o.Spec.Input); err != nil {
		return err
	}
	if o.Quotas {
		return pipeline.WriteQuotas(c.Context(), o.Spec, f.IO.Out, f.IO.ErrOut, o.Output)
	}
	plan, err := pipeline.Plan(c.Context(), o.Spec)
	if err != nil {
		return err
	}
	if err := pipeline.WritePlan(f.IO.Out, o.Output, o.Dialect, plan); err != nil {
		return err
	}
	fmt.Fprintf(f.IO.ErrOut, "plan: %d move(s), %d node(s) released, $%.2f/h ($%.2f/month)\n",
		len(plan.Moves), len(plan.ReleasedNodes), plan.SavingsUSDPerHour, plan.SavingsUSDPerMonth)
	if plan.Refused != "" {
		fmt.Fprintf(f.IO.ErrOut, "note: %s\n", table.Flatten(plan.Refused))
	}
	if len(plan.Unplaced) > 0 {
		fmt.Fprintf(f.IO.ErrOut, "note: %d pending workload(s) fit nowhere else: %s\n", len(plan.Unplaced), table.Visible(strings.Join(plan.Unplaced, ", ")))
	}
	return nil
}
