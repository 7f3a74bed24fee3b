//go:build !windows

package fsutil

import (
	"os"
	"sync"
	"syscall"
)

// openNoBlock opens path for reading without waiting for a FIFO's writer.
func openNoBlock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// openWriteNoBlock opens an existing path for writing without waiting
// for a FIFO's reader (a FIFO without one is an error, ENXIO).
func openWriteNoBlock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
}

// owner is a file's owner's user id, and whether it is known.
func owner(fi os.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

var umaskOnce struct {
	sync.Once
	mask os.FileMode
}

// newFileMode is the mode a new file gets from the process's umask, as
// open(2) gives it: 0666 less the umask (0644 under the usual 022).
func newFileMode() os.FileMode {
	umaskOnce.Do(func() {
		m := syscall.Umask(0)
		syscall.Umask(m)
		umaskOnce.mask = os.FileMode(m)
	})
	return 0o666 &^ umaskOnce.mask
}

// Writable says whether this process may create files in dir: false on a
// read-only mount, even for root.
func Writable(dir string) bool { return syscall.Access(dir, 2 /* W_OK */) == nil }
