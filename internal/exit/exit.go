// Package exit holds the kinds of failure that decide seedance's exit
// status, so that the stages (settings, pipeline) can say which kind of
// failure theirs is and cmd turns it into the status (docs/exit-codes.md).
package exit

import "fmt"

// Code is seedance's process exit status. docs/exit-codes.md lists them;
// this is the one place in the code that defines them.
type Code int

// Exit statuses.
const (
	OK          Code = 0   // success
	Failure     Code = 1   // runtime failure (I/O, NVML call, network)
	Usage       Code = 2   // usage error or bad input (flags, config, profile, no GPU)
	GateFailed  Code = 3   // a CI gate failed (analyze --gate)
	Interrupted Code = 130 // stopped by SIGINT/SIGTERM; what was collected was written
)

// UsageError is a mistake in how seedance was called.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Usagef returns a UsageError with a formatted message.
func Usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// Error ends the process with a given status; Err, when set, is printed.
// `profile -- CMD` uses it to pass on CMD's exit status.
type Error struct {
	Code Code
	Err  error
}

func (e *Error) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}
func (e *Error) Unwrap() error { return e.Err }

// Interruptedf is the failure of a run that SIGINT or SIGTERM stopped:
// status 130, and what became of what it had collected.
func Interruptedf(format string, args ...any) error {
	return &Error{Code: Interrupted, Err: fmt.Errorf(format, args...)}
}
