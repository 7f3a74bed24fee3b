//go:build !windows

package fsutil

import (
	"errors"
	"os"
	"syscall"
)

// processGone tells whether no process has the id pid.
func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// Owner is the user id that owns the file fi describes; ok is false where
// the system does not say.
func Owner(fi os.FileInfo) (uid int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
