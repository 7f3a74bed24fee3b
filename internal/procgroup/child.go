package procgroup

import (
	"os"
	"os/exec"
	"os/signal"
	"sync/atomic"
	"syscall"
)

// Child is a command running in a process group of its own, with the
// SIGINT, SIGTERM and SIGHUP that seedance receives forwarded to that
// group; a second SIGINT kills it.
type Child struct {
	cmd         *exec.Cmd
	sigs        chan os.Signal
	exited      chan struct{}
	waitErr     error
	interrupted atomic.Bool
}

// Start starts c in a new process group and forwards signals to it until
// it exits. The signals are taken from any other handler (the root
// context's) before the command starts.
func Start(c *exec.Cmd) (*Child, error) {
	Prepare(c)
	ch := &Child{cmd: c, sigs: make(chan os.Signal, 4), exited: make(chan struct{})}
	signal.Notify(ch.sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	if err := c.Start(); err != nil {
		signal.Stop(ch.sigs)
		return nil, err
	}
	go func() {
		ch.waitErr = c.Wait()
		close(ch.exited)
	}()
	go ch.forward()
	return ch, nil
}

func (ch *Child) forward() {
	n := 0
	for {
		select {
		case s := <-ch.sigs:
			n++
			ch.interrupted.Store(true)
			sig := s.(syscall.Signal)
			if n > 1 && sig == syscall.SIGINT {
				sig = syscall.SIGKILL
			}
			_ = Signal(ch.cmd, sig) // it may have exited meanwhile
		case <-ch.exited:
			return
		}
	}
}

// PID is the command's process ID.
func (ch *Child) PID() int { return ch.cmd.Process.Pid }

// Exited is closed when the command has exited.
func (ch *Child) Exited() <-chan struct{} { return ch.exited }

// Wait waits for the command to exit, stops forwarding signals, and
// returns its exit error (exec.Cmd.Wait's).
func (ch *Child) Wait() error {
	<-ch.exited
	signal.Stop(ch.sigs)
	return ch.waitErr
}

// Interrupted reports whether a signal was forwarded to the command.
func (ch *Child) Interrupted() bool { return ch.interrupted.Load() }
