package cmd

import (
	"errors"

	"github.com/seedance/seedance/internal/exit"
	"github.com/seedance/seedance/report"

	nvmlsrc "github.com/seedance/seedance/source/nvml"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source"
	"github.com/seedance/seedance/source/gpu"
)

// exitCodeFor maps an error returned by a command to its exit status.
func exitCodeFor(err error) exit.Code {
	var ee *exit.Error
	var ue *exit.UsageError
	switch {
	case err == nil:
		return exit.OK
	case errors.As(err, &ee):
		return ee.Code
	case errors.As(err, &ue), errors.Is(err, profile.ErrInvalid), errors.Is(err, gpu.ErrNoGPU), errors.Is(err, nvmlsrc.ErrNotBuilt), errors.Is(err, source.ErrSettings),
		errors.Is(err, report.ErrInvalidBaseline), errors.Is(err, report.ErrInvalidGate), errors.Is(err, analyze.ErrScaling):
		return exit.Usage
	}
	return exit.Failure
}
