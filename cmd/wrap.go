package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/seedance/seedance/internal/procgroup"

	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source"
)

// recordCommand runs o.Command, samples until it exits, and returns the
// profile with the command's process tree as a job workload. The command's
// exit status becomes seedance's (an *ExitError). The child runs in its own
// process group: SIGINT, SIGTERM and SIGHUP sent to seedance are forwarded to
// that group once, and a second SIGINT kills it.
func recordCommand(o *ProfileOptions, src source.Profiler, ro source.RecordOptions) (*profile.Profile, error) {
	c := exec.Command(o.Command[0], o.Command[1:]...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, o.IO.Out, o.IO.ErrOut
	if o.Config.Profile.Output == "-" {
		// stdout carries the profile; the command's output goes to stderr.
		c.Stdout = o.IO.ErrOut
	}
	procgroup.Prepare(c)

	// Take the signals from the root context's handler before starting.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	if err := c.Start(); err != nil {
		return nil, &UsageError{Err: fmt.Errorf("run %s: %w", o.Command[0], err)}
	}
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = c.Wait()
		close(exited)
	}()
	interrupted := false
	go func() {
		n := 0
		for {
			select {
			case s := <-sigs:
				n++
				interrupted = true
				sig := s.(syscall.Signal)
				if n > 1 && sig == syscall.SIGINT {
					sig = syscall.SIGKILL
				}
				_ = procgroup.Signal(c, sig)
			case <-exited:
				return
			}
		}
	}()

	ro.Stop = exited
	ro.Job = &source.Job{Name: filepath.Base(o.Command[0]), PID: c.Process.Pid, ProcRoot: o.Config.NVML.ProcRoot}
	p, err := src.Profile(context.Background(), ro)
	<-exited
	if p != nil && interrupted {
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
			return &ExitError{Code: ExitCode(128 + int(ws.Signal()))}
		}
		return &ExitError{Code: ExitCode(ee.ExitCode())}
	}
	return fmt.Errorf("wait for command: %w", err)
}
