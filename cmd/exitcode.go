package cmd

import (
	"errors"
	"fmt"
	"github.com/seedance/seedance/report"

	nvmlsrc "github.com/seedance/seedance/source/nvml"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source"
	"github.com/seedance/seedance/source/gpu"
)

// ExitCode is seedance's process exit status. docs/exit-codes.md lists them;
// this is the one place in the code that defines them.
type ExitCode int

// Exit statuses.
const (
	ExitOK          ExitCode = 0   // success
	ExitFailure     ExitCode = 1   // runtime failure (I/O, NVML call, network)
	ExitUsage       ExitCode = 2   // usage error or bad input (flags, config, profile, no GPU)
	ExitGateFailed  ExitCode = 3   // a CI gate failed (analyze --gate)
	ExitInterrupted ExitCode = 130 // stopped by SIGINT/SIGTERM; what was collected was written
)

// UsageError is a mistake in how seedance was called.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// usageErrorf returns a UsageError with a formatted message.
func usageErrorf(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// ExitError ends the process with a given status; Err, when set, is printed.
// `profile -- CMD` uses it to pass on CMD's exit status.
type ExitError struct {
	Code ExitCode
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}
func (e *ExitError) Unwrap() error { return e.Err }

// exitCodeFor maps an error returned by a command to its exit status.
func exitCodeFor(err error) ExitCode {
	var ee *ExitError
	var ue *UsageError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ee):
		return ee.Code
	case errors.As(err, &ue), errors.Is(err, profile.ErrInvalid), errors.Is(err, gpu.ErrNoGPU), errors.Is(err, nvmlsrc.ErrNotBuilt), errors.Is(err, source.ErrSettings),
		errors.Is(err, report.ErrInvalidBaseline), errors.Is(err, report.ErrInvalidGate), errors.Is(err, analyze.ErrScaling):
		return ExitUsage
	}
	return ExitFailure
}
