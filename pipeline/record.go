package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/prometheus/common/config"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/hwtopo"
	"github.com/seedance/seedance/internal/exit"
	"github.com/seedance/seedance/internal/extcmd"
	"github.com/seedance/seedance/internal/table"
	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/settings"
	"github.com/seedance/seedance/source"
	"github.com/seedance/seedance/source/gpu"
	"github.com/seedance/seedance/source/slurm"
)

// RecordSpec is one recording: the source the settings name, run as
// seedance profile runs it.
type RecordSpec struct {
	Config *settings.Config
	// Command is the command to run and profile (after "--"); its output
	// goes to Stdout and Stderr.
	Command        []string
	Stdout, Stderr io.Writer
	// Start and End bound the range read from Prometheus (zero: the
	// settings' duration, ending now).
	Start, End time.Time
	// Reach is read before and after that range as context samples
	// (ContextReach); 0 for none.
	Reach time.Duration
	// Align is where a source reading aggregates cuts its chunks (the
	// ledger's buckets); 0 for anywhere.
	Align time.Duration
	// TopologyFiles are --topology-file values: FILE or NODE=FILE.
	TopologyFiles []string
	// SpillDir is where a source read in batches of nodes spills them (""
	// is $TMPDIR).
	SpillDir string
	NVML     func() (gpu.NVML, error)
	Now      func() time.Time
	Version  string
	// HTTP decodes a section's HTTP client settings (settings.HTTP).
	HTTP func(section string) (config.HTTPClientConfig, error)
	// Log takes the sources' warnings, a line each.
	Log func(string)
	// Progress, when set, is shown the run's progress.
	Progress Progress
	// Work asks the source for the workloads' work counters even when the
	// analysis' report has no unit figures (a profile written to a file).
	Work bool
	// InMemory keeps a source read in batches in memory instead of a spill
	// file, for a caller that holds the whole profile anyway (a ledger
	// update): no encoding to disk and back.
	InMemory bool
}

// Progress is shown how a recording goes: a read of history query by
// query, a sampled source sample by sample.
type Progress interface {
	Read(source.ReadProgress)
	Start(nodes, gpus int)
	Sample(source.Progress)
	Done()
}

// Recording is what a source recorded: the profile, or, for a source read
// in batches of nodes, the profile's header and the spill that holds the
// nodes.
type Recording struct {
	Profile *profile.Profile
	Spill   *profile.Spill
	// CommandErr is the wrapped command's exit status (an *exit.Error),
	// nil when it succeeded or there was none.
	CommandErr error
	tally
	topologies []topologyFile
	log        func(string)
}

// Close removes the spill, if any.
func (r *Recording) Close() {
	if r.Spill != nil {
		r.Spill.Close()
	}
}

// Samples is the number of GPU samples recorded.
func (r *Recording) Samples() int { return r.samples }

// Record opens the source the settings name and runs it, with Slurm's
// queue and jobs' owners when the settings ask for them. Interrupted before
// anything was read, it returns an *exit.Error of status 130.
func Record(ctx context.Context, spec RecordSpec) (*Recording, error) {
	pc := spec.Config.Profile
	tops, err := readTopologyFiles(spec.TopologyFiles)
	if err != nil {
		return nil, err
	}
	reg, err := source.Lookup(pc.Source)
	if err != nil {
		return nil, err
	}
	if len(spec.Command) > 0 && !reg.Wraps {
		return nil, exit.Usagef("--source %s cannot profile a command: it does not see this node's processes (use nvml)", pc.Source)
	}
	src, err := reg.Open(spec.env(reg.Name))
	if err != nil && len(spec.Command) > 0 {
		// A cost gate must not pass on a run that measured nothing, so the
		// command is not run: the job fails here, visibly (docs/ci.md).
		return nil, fmt.Errorf("%w; %s was not run (a cost gate never passes on an unmeasured run: on a runner without a GPU, run the command without seedance profile, docs/ci.md)", err, table.Visible(spec.Command[0]))
	}
	if err != nil {
		return nil, err
	}
	defer src.Close()
	if spec.Progress != nil {
		defer spec.Progress.Done()
	}
	rec := &Recording{topologies: tops, log: spec.logf}
	ro := spec.recordOptions(reg.Name, src)
	if s, ok := src.(source.NodeStreamer); ok && len(spec.Command) == 0 && !spec.Config.Slurm.Pending && len(tops) == 0 && !spec.InMemory {
		if err := rec.spill(ctx, s, ro, spec.SpillDir); err != nil {
			return nil, err
		}
		return rec, nil
	}
	var p *profile.Profile
	if len(spec.Command) > 0 {
		p, err = spec.recordCommand(src, ro)
	} else {
		p, err = src.Profile(ctx, ro)
	}
	if errors.Is(err, source.ErrInterrupted) {
		return nil, exit.Interruptedf("%w", err)
	}
	var ee *exit.Error
	if errors.As(err, &ee) {
		rec.CommandErr, err = err, nil
	}
	if err != nil && p == nil {
		return nil, err
	}
	if p != nil && spec.Config.Slurm.Pending {
		if serr := askSlurm(ctx, p, spec.Config.Limits, spec.Config.Slurm.Queues); serr != nil {
			return nil, serr
		}
	}
	rec.Profile = p
	rec.add(p.Nodes)
	return rec, err
}

// ContextReach is how much a read of history asks around its range as
// context samples, so that the figures at the range's edges are those of a
// read of everything (docs/analysis.md, Context samples): analyze.Reach
// with a sample interval of at least two minutes, what dcgm-exporter's
// scrape intervals are.
func ContextReach(cfg *settings.Config) time.Duration {
	return analyze.Reach(cfg.Analyze.IdleWindow, max(cfg.Profile.Interval, 2*time.Minute))
}

// env is what the source reads its settings from.
func (spec *RecordSpec) env(name string) source.Env {
	env := source.Env{
		Settings: spec.Config.SourceSettings,
		HTTP:     spec.HTTP,
		NVML:     spec.NVML,
		Now:      spec.Now,
		Duration: spec.Config.Profile.Duration, Interval: spec.Config.Profile.Interval,
		Start: spec.Start, End: spec.End, Reach: spec.Reach, Align: spec.Align,
		Wrapped: len(spec.Command) > 0,
		Work:    spec.Work || spec.Config.Analyze.Has("units") || spec.Config.Analyze.Has("attribution"),
		Units:   spec.Config.Units,
		Log:     spec.logf,
	}
	if spec.Progress != nil && name == profile.SourcePrometheus {
		env.Progress = spec.Progress.Read
	}
	return env
}

func (spec *RecordSpec) logf(line string) {
	if spec.Log != nil {
		spec.Log(line)
	}
}

// recordOptions are the sampling loop's options: interval, duration,
// checkpoints of the output file, and the progress of a sampled source.
func (spec *RecordSpec) recordOptions(name string, src source.Profiler) source.RecordOptions {
	pc := spec.Config.Profile
	ro := source.RecordOptions{
		Interval:  pc.Interval,
		Duration:  pc.Duration,
		Generator: profile.Generator{Name: "seedance", Version: spec.Version},
		TempDir:   spec.SpillDir,
	}
	if pc.Checkpoint > 0 && pc.Output != "-" {
		ro.Checkpoint = pc.Checkpoint
		ro.OnCheckpoint = func(p *profile.Profile) error { return profile.WriteFile(pc.Output, p) }
	}
	if spec.Progress != nil && name != profile.SourcePrometheus {
		nodes, gpus := 0, 0
		if s, ok := src.(source.Sized); ok {
			nodes, gpus = s.Size()
		}
		spec.Progress.Start(nodes, gpus)
		ro.OnSample = spec.Progress.Sample
	}
	return ro
}

// askSlurm adds Slurm's pending GPU jobs and the owners of its running
// ones to p. Without the pending jobs a node they wait for would look idle
// and be released: the run keeps its samples and says so. A run that a
// signal ended (nvml until interrupted) still asks Slurm, within
// limits.command_time; a signal during the questions stops them, and
// nothing is written.
func askSlurm(ctx context.Context, p *profile.Profile, lc settings.Limits, queuesBy string) error {
	limits := extcmd.Limits{Time: lc.CommandTime, OutputBytes: int64(lc.CommandOutputMiB) << 20}
	squeue, sacct := slurm.Commands(limits)
	if ctx.Err() != nil {
		ctx = context.Background()
	}
	notes, serr := slurm.AddPending(ctx, p, squeue)
	if ctx.Err() != nil {
		return exit.Interruptedf("interrupted while squeue ran: nothing written")
	}
	p.PendingUnknown = "" // Slurm's queue is where the work waits
	if serr != nil {
		p.PendingUnknown = "Slurm's pending jobs unknown: " + table.Flatten(serr.Error())
		notes = []string{p.PendingUnknown + " (a node they wait for may look idle; no drain or release is advised)"}
	}
	p.Notes = append(p.Notes, notes...)
	notes, serr = slurm.AddOwners(ctx, p, squeue, sacct)
	if ctx.Err() != nil {
		return exit.Interruptedf("interrupted while squeue or sacct ran: nothing written")
	}
	if serr != nil {
		notes = []string{"the user and account of Slurm's running jobs unknown: " + table.Flatten(serr.Error())}
	}
	p.Notes = append(p.Notes, notes...)
	// The accounts or QOS as queues (docs/queues.md, Slurm): a cluster
	// without accounting has none, said in a note.
	notes, serr = slurm.AddQueues(ctx, p, queuesBy, slurm.SacctmgrCommand(limits), sacct, squeue)
	if ctx.Err() != nil {
		return exit.Interruptedf("interrupted while sacctmgr or sacct ran: nothing written")
	}
	if serr != nil {
		notes = []string{"Slurm's " + queuesBy + " queues unknown (no queue figures): " + table.Flatten(serr.Error())}
	}
	p.Notes = append(p.Notes, notes...)
	// What Slurm counts against the accounts' (or QOS') GPU-minute budgets.
	p.Notes = append(p.Notes, slurm.AddBudgetUse(ctx, p, slurm.ClientCommand("scontrol", limits), slurm.ClientCommand("sshare", limits))...)
	if ctx.Err() != nil {
		return exit.Interruptedf("interrupted while scontrol or sshare ran: nothing written")
	}
	return nil
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

// attachTopologies puts the --topology-file captures into the profile's
// nodes.
func (r *Recording) attachTopologies() {
	for _, tf := range r.topologies {
		if profile.AttachTopology(r.Profile, tf.node, tf.topo) == 0 {
			r.log(fmt.Sprintf("--topology-file %s matched no node (none named %q with %d GPUs)", tf.file, tf.node, len(tf.topo.GPUs)))
		}
	}
	r.topologies = nil
}
