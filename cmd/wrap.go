package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/seedance/seedance/internal/exit"

	"github.com/seedance/seedance/internal/procgroup"

	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source"
)

// recordCommand runs o.Command, samples until it exits, and returns the
// profile with the command's process tree as a job workload. The command's
// exit status becomes seedance's (an *exit.Error). The child runs in its own
// process group: SIGINT, SIGTERM and SIGHUP sent to seedance are forwarded to
// that group once, and a second SIGINT kills it (internal/procgroup).
func recordCommand(o *ProfileOptions, src source.Profiler, ro source.RecordOptions) (*profile.Profile, error) {
	c := exec.Command(o.Command[0], o.Command[1:]...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, o.IO.Out, o.IO.ErrOut
	if o.Config.Profile.Output == "-" {
		// stdout carries the profile; the command's output goes to stderr.
		c.Stdout = o.IO.ErrOut
	}
	child, err := procgroup.Start(c)
	if err != nil {
		return nil, &exit.UsageError{Err: fmt.Errorf("run %s: %w", o.Command[0], err)}
	}
	ro.Stop = child.Exited()
	ro.Job = &source.Job{Name: filepath.Base(o.Command[0]), PID: child.PID(), ProcRoot: o.Config.NVML.ProcRoot}
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
