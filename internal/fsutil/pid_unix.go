//go:build !windows

package fsutil

import (
	"errors"
	"syscall"
)

// processGone tells whether no process has the id pid.
func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
