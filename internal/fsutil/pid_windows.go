//go:build windows

package fsutil

import "os"

// processGone tells whether no process has the id pid. On Windows,
// FindProcess opens the process and fails when there is none.
func processGone(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return true
	}
	_ = p.Release()
	return false
}

// Owner is the user id that owns the file fi describes: Windows has none
// to compare (ok is false).
func Owner(os.FileInfo) (uid int, ok bool) { return 0, false }
