package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/seedance/seedance/internal/exit"
	"github.com/seedance/seedance/settings"

	"github.com/prometheus/common/config"
	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"github.com/seedance/seedance/hwtopo"
	"github.com/seedance/seedance/internal/extcmd"
	"github.com/seedance/seedance/internal/fsutil"
	"github.com/seedance/seedance/internal/iostreams"
	"github.com/seedance/seedance/internal/table"
	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source"
	"github.com/seedance/seedance/source/gpu"
	"github.com/seedance/seedance/source/slurm"
)

// ProfileOptions are the inputs of `seedance profile`.
type ProfileOptions struct {
	IO     *iostreams.IOStreams
	NVML   func() (gpu.NVML, error)
	Now    func() time.Time
	Build  BuildInfo
	Ctx    context.Context
	Config *settings.Config
	// Command is the command to run and profile (after "--").
	Command []string
	// Start and End bound the range read from Prometheus.
	Start, End string
	// TopologyFiles are --topology-file values: FILE or NODE=FILE.
	TopologyFiles []string
	topologies    []topologyFile

	viper *viper.Viper // for the HTTP settings, whose keys are open-ended
}

func newProfileCmd(f *Factory, runF func(*ProfileOptions) error) *cobra.Command {
	opts := &ProfileOptions{IO: f.IO, NVML: f.NVML, Now: f.Now, Build: f.Build, viper: f.viper}
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
			if n := c.ArgsLenAtDash(); n >= 0 {
				if n > 0 {
					return exit.Usagef("unexpected argument %q before --", args[0])
				}
				opts.Command = args
			} else if len(args) > 0 {
				return exit.Usagef("unexpected argument %q (to profile a command, put it after --)", args[0])
			}
			cfg, err := f.Config()
			if err != nil {
				return err
			}
			opts.Config = cfg
			opts.Ctx = c.Context()
			if runF != nil {
				return runF(opts)
			}
			return profileRun(opts)
		},
	}
	fl := c.Flags()
	addSettingFlags(c, "profile")
	fl.StringVar(&opts.Start, "start", "", "start of the range to read from Prometheus (RFC 3339)")
	fl.StringVar(&opts.End, "end", "", "end of the range to read from Prometheus (RFC 3339; default now)")
	fl.StringArrayVar(&opts.TopologyFiles, "topology-file", nil, "an nvidia-smi topo -m capture for nodes seedance sees only through Prometheus or scrapes: FILE for every node, NODE=FILE for one (repeatable)")
	return c
}

// profileRun checks the options, opens the source, records and writes.
func profileRun(o *ProfileOptions) error {
	pc := o.Config.Profile
	if pc.Interval < settings.MinInterval {
		return exit.Usagef("--interval %s is below the minimum of %s: NVML averages utilization over at least 1/6 s, so faster sampling only repeats values", pc.Interval, settings.MinInterval)
	}
	if pc.Duration < 0 {
		return exit.Usagef("--duration must not be negative")
	}
	if pc.Output == "" {
		return exit.Usagef("--output must name a file, or - for stdout")
	}
	// Before any sampling, and before a wrapped command runs: a run that
	// cannot write its profile at the end must not start.
	if err := settings.CheckOutputName("--output", pc.Output); err != nil {
		return err
	}
	if err := fsutil.CheckOutput(pc.Output); err != nil {
		return exit.Usagef("--output: %v", err)
	}
	var err error
	if o.topologies, err = readTopologyFiles(o.TopologyFiles); err != nil {
		return err
	}
	p, sp, err := recordProfile(o, spillDir(pc.Output))
	if p == nil {
		return err
	}
	if sp != nil {
		defer sp.Close()
		return finishSpilled(o, p, sp)
	}
	return finishProfile(o, p, err, len(o.Command) == 0)
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

// recordProfile opens the source the settings name and runs it: the profile
// it made, or nil and why. Interrupted before anything was read, it returns
// an exit status of 130.
//
// A source that reads a cluster's history node batch by node batch
// (source.NodeStreamer) spills its nodes into a temporary file in
// spillDir: then the profile is only the header, and the spill holds the
// nodes.
func recordProfile(o *ProfileOptions, spillDir string) (*profile.Profile, *spilled, error) {
	pc := o.Config.Profile
	reg, err := source.Lookup(pc.Source)
	if err != nil {
		return nil, nil, err
	}
	if len(o.Command) > 0 && !reg.Wraps {
		return nil, nil, exit.Usagef("--source %s cannot profile a command: it does not see this node's processes (use nvml)", pc.Source)
	}
	env, err := o.sourceEnv()
	if err != nil {
		return nil, nil, err
	}
	if !pc.Quiet && o.IO.IsStderrTTY() && reg.Name == profile.SourcePrometheus {
		started := time.Now()
		env.Progress = func(p source.ReadProgress) {
			fmt.Fprint(o.IO.ErrOut, "\r\033[K"+readProgressText(p, time.Since(started)))
		}
		defer fmt.Fprint(o.IO.ErrOut, "\r\033[K")
	}
	src, err := reg.Open(env)
	if err != nil && len(o.Command) > 0 {
		// A cost gate must not pass on a run that measured nothing, so the
		// command is not run: the job fails here, visibly (docs/ci.md).
		return nil, nil, fmt.Errorf("%w; %s was not run (a cost gate never passes on an unmeasured run: on a runner without a GPU, run the command without seedance profile, docs/ci.md)", err, table.Visible(o.Command[0]))
	}
	if err != nil {
		return nil, nil, err
	}
	defer src.Close()

	ro := source.RecordOptions{
		Interval:  pc.Interval,
		Duration:  pc.Duration,
		Generator: profile.Generator{Name: "seedance", Version: o.Build.Version},
	}
	if pc.Checkpoint > 0 && pc.Output != "-" {
		ro.Checkpoint = pc.Checkpoint
		ro.OnCheckpoint = func(p *profile.Profile) error { return profile.WriteFile(pc.Output, p) }
	}
	var bar *progressBar
	if !pc.Quiet && o.IO.IsStderrTTY() && reg.Name != profile.SourcePrometheus {
		nodes, gpus := 0, 0
		if s, ok := src.(source.Sized); ok {
			nodes, gpus = s.Size()
		}
		bar = newProgressBar(o.IO.ErrOut, nodes, gpus)
		ro.OnSample = bar.update
	}

	if s, ok := o.streamable(src); ok {
		return spillRun(o, s, ro, spillDir)
	}
	var p *profile.Profile
	if len(o.Command) > 0 {
		p, err = recordCommand(o, src, ro)
	} else {
		p, err = src.Profile(o.Ctx, ro)
	}
	bar.done()
	if errors.Is(err, source.ErrInterrupted) {
		return nil, nil, &exit.Error{Code: exit.Interrupted, Err: err}
	}
	if p != nil && o.Config.Slurm.Pending {
		// Without Slurm's pending jobs a node they wait for would look
		// idle and be released: the run keeps its samples and says so.
		lc := o.Config.Limits
		squeue, sacct := slurm.Commands(extcmd.Limits{Time: lc.CommandTime, OutputBytes: int64(lc.CommandOutputMiB) << 20})
		// A run that a signal ended (nvml until interrupted) still asks
		// Slurm, within limits.command_time; a signal during the questions
		// stops them, and nothing is written.
		ctx := o.Ctx
		if ctx.Err() != nil {
			ctx = context.Background()
		}
		notes, serr := slurm.AddPending(ctx, p, squeue)
		if ctx.Err() != nil {
			return nil, nil, &exit.Error{Code: exit.Interrupted, Err: errors.New("interrupted while squeue ran: nothing written")}
		}
		p.PendingUnknown = "" // Slurm's queue is where the work waits
		if serr != nil {
			p.PendingUnknown = "Slurm's pending jobs unknown: " + table.Flatten(serr.Error())
			notes = []string{p.PendingUnknown + " (a node they wait for may look idle; no drain or release is advised)"}
		}
		p.Notes = append(p.Notes, notes...)
		// The owners of the running jobs, for attribution by user and account.
		notes, serr = slurm.AddOwners(ctx, p, squeue, sacct)
		if ctx.Err() != nil {
			return nil, nil, &exit.Error{Code: exit.Interrupted, Err: errors.New("interrupted while squeue or sacct ran: nothing written")}
		}
		if serr != nil {
			notes = []string{"the user and account of Slurm's running jobs unknown: " + table.Flatten(serr.Error())}
		}
		p.Notes = append(p.Notes, notes...)
	}
	return p, nil, err
}

// finishProfile writes the profile, prints the summary line and the notes,
// and turns an interrupted run into exit status 130.
func finishProfile(o *ProfileOptions, p *profile.Profile, err error, interruptible bool) error {
	pc := o.Config.Profile
	if countSamples(p) == 0 {
		// Nothing observed is a failure, and no file is written: an empty
		// profile would look like a quiet cluster. A wrapped command's own
		// failure still decides the exit status.
		nothing := fmt.Errorf("%w: the %s source collected no GPU sample; no file written", source.ErrNothingObserved, p.Source)
		if len(p.Notes) > 0 {
			nothing = fmt.Errorf("%w (%s)", nothing, p.Notes[0])
		}
		var ee *exit.Error
		if errors.As(err, &ee) && ee.Code != exit.OK {
			fmt.Fprintln(o.IO.ErrOut, "seedance: "+table.Visible(table.Flatten(nothing.Error())))
			return err
		}
		return nothing
	}
	attachTopologyFiles(o, p)
	if werr := writeProfile(o.IO.Out, pc.Output, p); werr != nil {
		return werr
	}
	if !pc.Quiet {
		fmt.Fprintln(o.IO.ErrOut, table.Visible(summaryLine(pc.Output, p)))
	}
	for _, n := range p.Notes {
		fmt.Fprintln(o.IO.ErrOut, "note: "+table.Visible(n))
	}
	if err != nil {
		return err
	}
	if !p.Complete && interruptible && o.Ctx.Err() != nil {
		return &exit.Error{Code: exit.Interrupted, Err: errors.New("interrupted: wrote the samples collected so far (\"complete\": false)")}
	}
	return nil
}

func writeProfile(stdout io.Writer, path string, p *profile.Profile) error {
	if path == "-" {
		return profile.Write(stdout, p, false)
	}
	return profile.WriteFile(path, p)
}

// sourceEnv is what the source reads its settings from.
func (o *ProfileOptions) sourceEnv() (source.Env, error) {
	env := source.Env{
		Settings: o.Config.SourceSettings,
		HTTP:     func(section string) (config.HTTPClientConfig, error) { return settings.HTTP(o.viper, section) },
		NVML:     o.NVML,
		Now:      o.Now,
		Duration: o.Config.Profile.Duration, Interval: o.Config.Profile.Interval,
		Wrapped: len(o.Command) > 0,
		Log:     func(line string) { fmt.Fprintln(o.IO.ErrOut, "warning: "+table.Visible(line)) },
	}
	for _, t := range []struct {
		flag, value string
		into        *time.Time
	}{{"--start", o.Start, &env.Start}, {"--end", o.End, &env.End}} {
		if t.value == "" {
			continue
		}
		v, err := time.Parse(time.RFC3339, t.value)
		if err != nil {
			return env, exit.Usagef("%s %q is not an RFC 3339 time", t.flag, t.value)
		}
		*t.into = v
	}
	return env, nil
}

// countSamples counts the GPU samples of a profile.
func countSamples(p *profile.Profile) int {
	n := 0
	for _, node := range p.Nodes {
		for _, g := range node.GPUs {
			n += len(g.Series.T)
		}
	}
	return n
}

// summaryLine is the one line printed after a run, e.g.
// "wrote profile.json: 2 nodes, 16 GPUs, 300 samples, mean GPU util 41%".
func summaryLine(path string, p *profile.Profile) string {
	var t tally
	t.add(p.Nodes)
	return t.line(path, p.Complete)
}

// tally counts what a run wrote, node by node: nodes, GPUs, the longest
// series and the utilization readings.
type tally struct {
	nodes, gpus, samples, utilN int
	utilSum                     float64
}

func (t *tally) add(nodes []profile.Node) {
	t.nodes += len(nodes)
	for _, node := range nodes {
		t.gpus += len(node.GPUs)
		for _, g := range node.GPUs {
			t.samples = max(t.samples, g.Series.Len())
			for _, v := range g.Series.GPUUtilPct {
				if !profile.IsNull(v) {
					t.utilSum += v
					t.utilN++
				}
			}
		}
	}
}

func (t *tally) line(path string, complete bool) string {
	if path == "-" {
		path = "stdout"
	}
	util := "n/a"
	if t.utilN > 0 {
		util = fmt.Sprintf("%.0f%%", t.utilSum/float64(t.utilN))
	}
	s := fmt.Sprintf("wrote %s: %d nodes, %d GPUs, %d samples, mean GPU util %s", path, t.nodes, t.gpus, t.samples, util)
	if !complete {
		s += " (incomplete)"
	}
	return s
}

// topologyFile is one parsed --topology-file.
type topologyFile struct {
	node, file string
	topo       *hwtopo.Topology
}

// readTopologyFiles parses the --topology-file captures, before the run so
// that a bad file fails at once instead of after hours of sampling.
func readTopologyFiles(specs []string) ([]topologyFile, error) {
	var out []topologyFile
	for _, spec := range specs {
		node, file, ok := strings.Cut(spec, "=")
		if !ok {
			node, file = "", spec
		}
		f, err := os.Open(file)
		if err != nil {
			return nil, exit.Usagef("--topology-file: %v", err)
		}
		t, err := hwtopo.ParseMatrix(f)
		f.Close()
		if err != nil {
			return nil, exit.Usagef("--topology-file %s: %v", file, err)
		}
		out = append(out, topologyFile{node, file, t})
	}
	return out, nil
}

// attachTopologyFiles puts the --topology-file captures into the profile's
// nodes.
func attachTopologyFiles(o *ProfileOptions, p *profile.Profile) {
	for _, tf := range o.topologies {
		if profile.AttachTopology(p, tf.node, tf.topo) == 0 {
			fmt.Fprintf(o.IO.ErrOut, "warning: --topology-file %s matched no node (none named %q with %d GPUs)\n", tf.file, tf.node, len(tf.topo.GPUs))
		}
	}
}
