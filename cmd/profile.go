package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/prometheus/common/config"
	"github.com/spf13/cobra"

	"github.com/seedance/seedance/internal/exit"
	"github.com/seedance/seedance/internal/fsutil"
	"github.com/seedance/seedance/internal/table"
	"github.com/seedance/seedance/pipeline"
	"github.com/seedance/seedance/settings"
)

func newProfileCmd(f *Factory, runF func(*pipeline.RecordSpec) error) *cobra.Command {
	var rf recordFlags
	c := &cobra.Command{
		Use:   "profile [flags] [-- CMD ARGS...]",
		Short: "Sample every GPU into a profile (format v1)",
		Long: `Sample every GPU's utilization, memory bandwidth, PCIe and NVLink throughput,
power and energy, and the workloads on them, into a JSON profile (format v1,
see docs/profile-format.md).

Sources: nvml (the GPUs of this node, the default) and sim (a simulated
cluster, to try seedance without GPUs). With "-- CMD ARGS...", seedance runs
CMD, samples until it exits, records its process tree as a workload, and
exits with CMD's exit status.

SIGINT or SIGTERM stops sampling and writes what was collected with
"complete": false. The output file is replaced atomically: a failed run never
truncates an existing file.

Exit statuses: 0 ok; 1 runtime failure; 2 usage error, bad input or no GPU;
130 interrupted; with -- CMD, CMD's own status.`,
		Example: `  seedance profile --source sim --duration 300 --output profile.json
  seedance profile --duration 10m --interval 1s --output node.json.gz
  seedance profile --output train.json -- python train.py --epochs 1`,
		RunE: func(c *cobra.Command, args []string) error {
			command, err := wrappedCommand(c, args)
			if err != nil {
				return err
			}
			cfg, err := f.Config()
			if err != nil {
				return err
			}
			spec, err := rf.spec(f, cfg)
			if err != nil {
				return err
			}
			spec.Command, spec.SpillDir = command, spillDir(cfg.Profile.Output)
			if runF != nil {
				return runF(spec)
			}
			return profileRun(c, f, spec)
		},
	}
	addSettingFlags(c, "profile")
	rf.add(c, "start of the range to read from Prometheus (RFC 3339)", "end of the range to read from Prometheus (RFC 3339; default now)",
		"an nvidia-smi topo -m capture for nodes seedance sees only through Prometheus or scrapes: FILE for every node, NODE=FILE for one (repeatable)")
	return c
}

// wrappedCommand is the command after "--", if any.
func wrappedCommand(c *cobra.Command, args []string) ([]string, error) {
	if n := c.ArgsLenAtDash(); n >= 0 {
		if n > 0 {
			return nil, exit.Usagef("unexpected argument %q before --", args[0])
		}
		return args, nil
	}
	if len(args) > 0 {
		return nil, exit.Usagef("unexpected argument %q (to profile a command, put it after --)", args[0])
	}
	return nil, nil
}

// recordFlags are the flags of a recording that are not settings.
type recordFlags struct {
	start, end string
	topology   []string
}

func (rf *recordFlags) add(c *cobra.Command, startHelp, endHelp, topologyHelp string) {
	fl := c.Flags()
	fl.StringVar(&rf.start, "start", "", startHelp)
	fl.StringVar(&rf.end, "end", "", endHelp)
	fl.StringArrayVar(&rf.topology, "topology-file", nil, topologyHelp)
}

// sourceSpec is the recording --source names, nil without one; window is
// the range it reads when --duration is not set (0: the source's own).
func (rf *recordFlags) sourceSpec(f *Factory, cfg *settings.Config, window time.Duration) (*pipeline.RecordSpec, error) {
	if cfg.Analyze.Source == "" {
		return nil, nil
	}
	src := *cfg
	src.Profile.Source = cfg.Analyze.Source
	if src.Profile.Duration == 0 {
		src.Profile.Duration = window
	}
	return rf.spec(f, &src)
}

// spec is the recording the flags and settings describe.
func (rf *recordFlags) spec(f *Factory, cfg *settings.Config) (*pipeline.RecordSpec, error) {
	spec := &pipeline.RecordSpec{Config: cfg, TopologyFiles: rf.topology, Stdout: f.IO.Out, Stderr: f.IO.ErrOut,
		NVML: f.NVML, Now: f.Now, Version: f.Build.Version,
		HTTP: func(section string) (config.HTTPClientConfig, error) { return settings.HTTP(f.viper, section) },
		Log:  func(line string) { fmt.Fprintln(f.IO.ErrOut, "warning: "+table.Visible(line)) }, Reach: pipeline.ContextReach(cfg)}
	for _, t := range []struct {
		flag, value string
		into        *time.Time
	}{{"--start", rf.start, &spec.Start}, {"--end", rf.end, &spec.End}} {
		if t.value == "" {
			continue
		}
		v, err := time.Parse(time.RFC3339, t.value)
		if err != nil {
			return nil, exit.Usagef("%s %q is not an RFC 3339 time", t.flag, t.value)
		}
		*t.into = v
	}
	if !cfg.Profile.Quiet && f.IO.IsStderrTTY() {
		spec.Progress = newProgress(f.IO.ErrOut)
	}
	return spec, nil
}

// spillDir is where a run writing output spills its nodes: next to a
// regular output file (its file system holds the profile anyway), else
// (stdout, a device, a pipe) in $TMPDIR ("").
func spillDir(output string) string {
	if fi, err := os.Stat(output); output != "-" && (err != nil || fi.Mode().IsRegular()) {
		return filepath.Dir(output)
	}
	return ""
}

// profileRun records and writes the profile, prints the summary line and
// the notes, and turns an interrupted run into exit status 130. A run
// that cannot write its profile at the end does not start.
func profileRun(c *cobra.Command, f *Factory, spec *pipeline.RecordSpec) error {
	pc := spec.Config.Profile
	spec.Work = true // the file holds everything the source reads
	if err := fsutil.CheckOutput(pc.Output); err != nil {
		return exit.Usagef("--output: %v", err)
	}
	rec, err := pipeline.Record(c.Context(), *spec)
	if rec == nil {
		return err
	}
	defer rec.Close()
	if werr := rec.Write(f.IO.Out, pc.Output); werr != nil {
		if rec.Samples() == 0 && rec.CommandErr != nil {
			// A wrapped command's own failure still decides the exit status.
			fmt.Fprintln(f.IO.ErrOut, "seedance: "+table.Visible(table.Flatten(werr.Error())))
			return rec.CommandErr
		}
		return werr
	}
	if !pc.Quiet {
		fmt.Fprintln(f.IO.ErrOut, table.Visible(rec.Summary(pc.Output)))
	}
	for _, n := range rec.Profile.Notes {
		fmt.Fprintln(f.IO.ErrOut, "note: "+table.Visible(n))
	}
	switch {
	case err != nil:
		return err
	case rec.CommandErr != nil:
		return rec.CommandErr
	case !rec.Profile.Complete && len(spec.Command) == 0 && c.Context().Err() != nil:
		return exit.Interruptedf("interrupted: wrote the samples collected so far (\"complete\": false)")
	}
	return nil
}
