package cmd

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/seedance/seedance/pipeline"
)

// ReclaimOptions are the inputs of `seedance reclaim`.
type ReclaimOptions struct {
	Inputs  []string
	Execute bool
}

// reclaimRun binds the settings to a pass and runs it, or a pass every
// reclaim.every (the config file read again before each).
func reclaimRun(c *cobra.Command, f *Factory, o *ReclaimOptions, rf *recordFlags) error {
	build := func() (pipeline.ReclaimSpec, error) {
		cfg, err := f.PricedConfig()
		if err != nil {
			return pipeline.ReclaimSpec{}, err
		}
		spec := pipeline.ReclaimSpec{Config: cfg, Inputs: o.Inputs, Stdin: f.IO.In, Execute: o.Execute, Now: f.Now, Out: f.IO.Out}
		if spec.Source, err = rf.sourceSpec(f, cfg, cfg.Reclaim.Window); err != nil {
			return spec, err
		}
		return spec, spec.Wire()
	}
	return pipeline.ReclaimRun(c.Context(), build, f.rereadConfig, f.IO.ErrOut)
}

// reclaimLong is reclaim's help.
const reclaimLong = `One reclaim pass (for cron): read the cluster over --window ending now, find
the workloads whose GPUs have all stayed idle for --idle-for since their last
activity, notify each owner once per idle episode with what it cost, and when
the grace after a delivered notice ends, re-check fresh data and act: scale an
owner to 0, suspend a Job, evict a bare pod, requeue held or cancel a Slurm
job (docs/reclaim.md). Without --execute nothing is notified or acted on: each
line says what the pass would do.

Exit status: 0 done; 1 a step could not be taken (an API server, Slurm,
Alertmanager or the ledger unreachable); 2 bad flags or settings.`

func newReclaimCmd(f *Factory) *cobra.Command {
	o := &ReclaimOptions{}
	var rf recordFlags
	c := &cobra.Command{
		Use:   "reclaim [--input PROFILE... | --source SOURCE] [--execute]",
		Short: "Notice the owners of idle GPUs, then scale, suspend, evict or requeue what stays idle",
		Long:  reclaimLong,
		Example: `  seedance reclaim --source prometheus --prometheus-url http://prometheus:9090 --pushdown --ledger seedance.db
  seedance reclaim -i profile.json --ledger seedance.db --idle-for 1h --namespace ml`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error { return reclaimRun(c, f, o, &rf) },
	}
	fl := c.Flags()
	fl.StringArrayVarP(&o.Inputs, "input", "i", nil, "profile file(s) to read instead of a source; - reads stdin")
	fl.BoolVar(&o.Execute, "execute", false, "notify and act (default: a dry run that says what it would do)")
	rf.add(c, "start of the range read (default now - --window)", "end of the range read (default now)", "topology file for the source")
	addSettingFlags(c, "reclaim")
	c.AddCommand(newReclaimKeepCmd(f), newReclaimListCmd(f), newReclaimRestoreCmd(f))
	return c
}

func newReclaimKeepCmd(f *Factory) *cobra.Command {
	var keepFor time.Duration
	var reason string
	c := &cobra.Command{
		Use:   "keep TARGET --for DURATION [--reason TEXT]",
		Short: "Keep a target from reclaim for a while (the owner's answer to a notice)",
		Long: `Keep a target (NAMESPACE/KIND/NAME, or a Slurm job id) from reclaim for
--for (the annotation seedance.io/keep-until: <RFC 3339> on an owner does too).`,
		Example: `  seedance reclaim keep ml/Deployment/llama-eval --for 8h --reason "eval resumes tonight" --ledger seedance.db`,
		Args:    cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			cfg, err := f.Config()
			if err != nil {
				return err
			}
			return pipeline.ReclaimKeep(c.Context(), cfg, f.IO.Out, args[0], keepFor, reason, f.Now())
		},
	}
	c.Flags().DurationVar(&keepFor, "for", 0, "how long to keep it (8h, 24h)")
	c.Flags().StringVar(&reason, "reason", "", "why, for the audit and reclaim list")
	addSettingFlags(c, "reclaim-keep")
	return c
}

func newReclaimRestoreCmd(f *Factory) *cobra.Command {
	var execute bool
	c := &cobra.Command{
		Use:     "restore TARGET [--execute]",
		Short:   "Undo reclaim's action: scale back to the recorded replicas, resume the Job, release the Slurm job",
		Example: `  seedance reclaim restore ml/Deployment/llama-eval --ledger seedance.db`,
		Args:    cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			cfg, err := f.Config()
			if err != nil {
				return err
			}
			return pipeline.ReclaimRestore(c.Context(), cfg, f.IO.Out, args[0], execute, f.Now())
		},
	}
	c.Flags().BoolVar(&execute, "execute", false, "restore (default: say what it would do)")
	addSettingFlags(c, "reclaim-restore")
	return c
}

func newReclaimListCmd(f *Factory) *cobra.Command {
	var since time.Duration
	c := &cobra.Command{
		Use:     "list --ledger DSN [--since 168h]",
		Short:   "Show reclaim's episodes (candidates, notices, deadlines, actions), keeps and savings",
		Example: `  seedance reclaim list --ledger seedance.db --since 720h`,
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			cfg, err := f.Config()
			if err != nil {
				return err
			}
			return pipeline.ReclaimList(c.Context(), cfg, f.IO.Out, since, f.Now())
		},
	}
	c.Flags().DurationVar(&since, "since", 7*24*time.Hour, "also show episodes that ended this recently")
	addSettingFlags(c, "reclaim-list")
	return c
}
