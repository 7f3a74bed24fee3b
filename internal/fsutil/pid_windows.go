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
