package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"

	"github.com/seedance/seedance/source/gpu"

	"github.com/seedance/seedance/internal/exit"
	"github.com/seedance/seedance/internal/procgroup"
	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source"
)

// spill runs a source read in batches of nodes, its nodes going to a
// spill file in dir as they come: memory holds one batch. The recording
// gets the profile's header (no nodes) and the spill.
func (r *Recording) spill(ctx context.Context, s source.NodeStreamer, ro source.RecordOptions, dir string) error {
	sp, err := profile.NewSpill(dir)
	if err != nil {
		return err
	}
	h, err := s.ProfileNodes(ctx, ro, func(nodes []profile.Node) error {
		r.add(nodes)
		for i := range nodes {
			if err := sp.Node(&nodes[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		sp.Close()
		if errors.Is(err, source.ErrInterrupted) {
			return exit.Interruptedf("%w", err)
		}
		return err
	}
	r.Profile, r.Spill = h, sp
	// The read's answers and builders are garbage now: a collection frees
	// them for the analysis or the write to reuse, which would otherwise
	// allocate beside them (docs/performance.md, pushdown).
	runtime.GC()
	return nil
}

// nothingObserved is the error of a recording without a GPU sample: an
// empty profile would look like a quiet cluster.
func (r *Recording) nothingObserved(what string) error {
	err := fmt.Errorf("%w: the %s source collected no GPU sample%s", source.ErrNothingObserved, r.Profile.Source, what)
	if r.Spill == nil && len(r.Profile.Notes) > 0 {
		err = fmt.Errorf("%w (%s)", err, r.Profile.Notes[0])
	}
	return err
}

// Write writes the profile to path ("-" is stdout), atomically for a
// file. A recording without a GPU sample is an error, and no file is
// written.
func (r *Recording) Write(stdout io.Writer, path string) error {
	if r.samples == 0 {
		return r.nothingObserved("; no file written")
	}
	if r.Spill != nil {
		if path == "-" {
			return r.Spill.Write(stdout, r.Profile, profile.Uncompressed)
		}
		return r.Spill.WriteFile(path, r.Profile)
	}
	r.attachTopologies()
	if path == "-" {
		return profile.Write(stdout, r.Profile, profile.Uncompressed)
	}
	return profile.WriteFile(path, r.Profile)
}

// Summary is the line printed after a run: "wrote profile.json: 2 nodes,
// 16 GPUs, 300 samples, mean GPU util 41%".
func (r *Recording) Summary(path string) string { return r.line(path, r.Profile.Complete) }

// Stream hands the recording to an analysis as a profile stream, read
// through the same reader and validator as a profile file, so the numbers
// are those of profile then analyze. release frees it.
func (r *Recording) Stream(name string) (s *profile.Stream, release func(), err error) {
	if r.samples == 0 {
		return nil, func() {}, r.nothingObserved(", so there is nothing to analyze")
	}
	if r.Spill != nil {
		rd, err := r.Spill.Reader(r.Profile)
		if err != nil {
			return nil, func() {}, err
		}
		s, err := profile.OpenStream(rd, name)
		return s, func() {}, err
	}
	r.attachTopologies()
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(profile.Encode(pw, r.Profile)) }()
	s, err = profile.OpenStream(pr, name)
	return s, func() { pr.Close() }, err // Close unblocks the encoder if the analysis stopped early
}

// recordCommand runs the command, samples until it exits, and returns the
// profile with the command's process tree as a job workload. The
// command's exit status becomes seedance's (an *exit.Error). The child
// runs in its own process group: SIGINT, SIGTERM and SIGHUP sent to
// seedance are forwarded to that group once, and a second SIGINT kills it
// (internal/procgroup).
func (spec *RecordSpec) recordCommand(src source.Profiler, ro source.RecordOptions) (*profile.Profile, error) {
	c := exec.Command(spec.Command[0], spec.Command[1:]...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, spec.Stdout, spec.Stderr
	if spec.Config.Profile.Output == "-" {
		// stdout carries the profile; the command's output goes to stderr.
		c.Stdout = spec.Stderr
	}
	child, err := procgroup.Start(c)
	if err != nil {
		return nil, &exit.UsageError{Err: fmt.Errorf("run %s: %w", spec.Command[0], err)}
	}
	ro.Stop = child.Exited()
	var nv gpu.Settings
	if err := spec.Config.SourceSettings("nvml", &nv); err != nil {
		return nil, err
	}
	ro.Job = &source.Job{Name: filepath.Base(spec.Command[0]), PID: child.PID(), ProcRoot: nv.ProcRoot}
	p, err := src.Profile(context.Background(), ro)
	waitErr := child.Wait()
	if p != nil && child.Interrupted() {
		p.Complete = false
	}
	if err != nil {
		return p, err
	}
	return p, commandExit(waitErr)
}

// commandExit turns the child's wait error into seedance's exit status: its
// own code, or 128+N when killed by signal N.
func commandExit(err error) error {
	if err == nil {
		return nil
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return &exit.Error{Code: exit.Code(128 + int(ws.Signal()))}
		}
		return &exit.Error{Code: exit.Code(ee.ExitCode())}
	}
	return fmt.Errorf("wait for command: %w", err)
}

// tally counts what a run recorded, node by node: nodes, GPUs, GPU
// samples, the longest series and the utilization readings.
type tally struct {
	nodes, gpus, samples, longest, utilN int
	utilSum                              float64
}

func (t *tally) add(nodes []profile.Node) {
	t.nodes += len(nodes)
	for _, node := range nodes {
		t.gpus += len(node.GPUs)
		for _, g := range node.GPUs {
			t.samples += g.Series.Len()
			t.longest = max(t.longest, g.Series.Len())
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
	s := fmt.Sprintf("wrote %s: %d nodes, %d GPUs, %d samples, mean GPU util %s", path, t.nodes, t.gpus, t.longest, util)
	if !complete {
		s += " (incomplete)"
	}
	return s
}
