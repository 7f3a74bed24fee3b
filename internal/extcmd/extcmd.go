// Package extcmd runs the external commands seedance reads (squeue,
// sacct): each with a deadline, a bound on its output, and in a process
// group of its own that is killed whole when the deadline passes, the
// output grows past its bound or the caller's context ends (a signal).
// What the command wrote to stderr is kept, bounded, for the error.
package extcmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/seedance/seedance/internal/procgroup"
)

// Limits bound one run of a command.
type Limits struct {
	Time        time.Duration
	OutputBytes int64
}

// DefaultLimits are limits.command_time and limits.command_output_mib's
// defaults.
var DefaultLimits = Limits{Time: time.Minute, OutputBytes: 64 << 20}

// Errors of a run that was stopped.
var (
	ErrTimeout  = errors.New("did not finish in time")
	ErrTooLarge = errors.New("wrote more output than allowed")
)

// stderrKeep is how much of stderr an error quotes.
const stderrKeep = 4 << 10

// Run runs name with args within l and returns its standard output. A
// command killed for the deadline or its output is ErrTimeout or
// ErrTooLarge, naming the setting to change; one stopped because ctx ended
// returns ctx's error; one that failed carries the first line of its
// stderr.
func Run(ctx context.Context, l Limits, name string, args ...string) ([]byte, error) {
	return RunInput(ctx, l, nil, name, args...)
}

// RunInput is Run with stdin given (a notice's JSON for a notice command).
func RunInput(ctx context.Context, l Limits, stdin []byte, name string, args ...string) ([]byte, error) {
	if l.Time <= 0 {
		l.Time = DefaultLimits.Time
	}
	if l.OutputBytes <= 0 {
		l.OutputBytes = DefaultLimits.OutputBytes
	}
	cctx, cancel := context.WithTimeout(ctx, l.Time)
	defer cancel()
	c := exec.CommandContext(cctx, name, args...)
	procgroup.Prepare(c)
	c.Cancel = func() error { return procgroup.Signal(c, syscall.SIGKILL) }
	c.WaitDelay = 2 * time.Second // a grandchild holding the pipes open cannot hold us
	out := &capped{max: l.OutputBytes, full: cancel}
	errOut := &capped{max: stderrKeep}
	c.Stdout, c.Stderr = out, errOut
	if stdin != nil {
		c.Stdin = bytes.NewReader(stdin)
	}
	err := c.Run()
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case out.over:
		return nil, fmt.Errorf("%s %w: more than %d MiB (limits.command_output_mib)", name, ErrTooLarge, l.OutputBytes>>20)
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		return nil, fmt.Errorf("%s %w: no answer within %s (limits.command_time)", name, ErrTimeout, l.Time)
	case err != nil:
		msg, _, _ := strings.Cut(strings.TrimSpace(errOut.b.String()), "\n")
		if msg != "" {
			return nil, fmt.Errorf("%s: %v: %s", name, err, msg)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out.b.Bytes(), nil
}

// capped keeps what is written up to max bytes; past it, it drops the
// rest and calls full (which stops the command).
type capped struct {
	b    bytes.Buffer
	max  int64
	over bool
	full func()
}

func (c *capped) Write(p []byte) (int, error) {
	if left := c.max - int64(c.b.Len()); int64(len(p)) > left {
		c.b.Write(p[:max(left, 0)])
		if c.full != nil && !c.over {
			c.over = true
			c.full()
		}
		return len(p), nil
	}
	return c.b.Write(p)
}
