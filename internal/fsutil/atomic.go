// Package fsutil writes output files so that a failed or interrupted run never
// leaves a truncated file behind: the content goes to a temporary file in the
// target's directory, is fsynced, and is renamed over the target, with the
// mode a new file gets from the umask (never that of the file it
// replaces). A target that is not a regular file is written directly
// (renaming over it would replace the device node) when the user named it
// on purpose: a device (/dev/null), anything under /dev or /proc
// (/dev/stdout), or a FIFO or socket of the user's own; a FIFO planted by
// another user is refused, and one without a reader fails at once instead
// of hanging. Settings files are read the same careful way (ReadRegular).
package fsutil

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// WriteAtomic calls write with a temporary file next to path and, when write
// succeeds, renames it to path. On any failure the temporary file is removed and
// an existing file at path is left untouched. An existing path that is not a
// regular file or a directory is opened and written directly.
func WriteAtomic(path string, write func(w io.Writer) error) (err error) {
	if fi, statErr := os.Stat(path); statErr == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
		return writeDirect(path, write)
	}
	dir := filepath.Dir(path)
	removeStale(path)
	tmp, err := os.CreateTemp(dir, tmpPrefix(path, os.Getpid())+"*")
	if err != nil {
		return fmt.Errorf("create temporary file for %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = write(tmp); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", tmp.Name(), err)
	}
	// The mode of a new file under the umask (CreateTemp makes it 0600),
	// not that of the file being replaced: a 0666 file another user
	// planted must not make the report writable to everyone.
	if err = tmp.Chmod(newFileMode()); err != nil {
		return fmt.Errorf("chmod %s: %w", tmp.Name(), err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmp.Name(), err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("rename to %s: %w", path, err)
	}
	// Make the rename itself durable.
	if d, derr := os.Open(dir); derr == nil {
		_ = d.Sync() // best effort: not every file system syncs a directory
		d.Close()
	}
	return nil
}

// writeDirect writes to a device, FIFO or socket as it is, when it may
// (Direct).
func writeDirect(path string, write func(w io.Writer) error) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if err := Direct(path, fi); err != nil {
		return err
	}
	f, err := openWriteNoBlock(path)
	if err != nil {
		if errors.Is(err, syscall.ENXIO) {
			return fmt.Errorf("%s is a FIFO that no process reads: nothing written", path)
		}
		return fmt.Errorf("open %s: %w", path, err)
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// CheckOutput says, before any work starts, whether path can be written: its
// directory exists and takes new files, it is not a directory, and it is not
// one of the inputs (writing over a profile with its report would lose the
// profile). "-" (stdout) is always fine. The directory is probed by creating
// and removing a temporary file, which is the only check that sees
// read-only mounts, ACLs and quotas as the real write will.
func CheckOutput(path string, inputs ...string) error {
	if path == "-" {
		return nil
	}
	if path == "" {
		return errors.New("the output path is empty")
	}
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return fmt.Errorf("%s is a directory, not a file", path)
	case err == nil && !fi.Mode().IsRegular():
		return Direct(path, fi) // a device or FIFO, written directly
	case err != nil && !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
		return err
	}
	for _, in := range inputs {
		if in == "-" || in == "" {
			continue
		}
		if ii, ierr := os.Stat(in); ierr == nil && fi != nil && os.SameFile(fi, ii) {
			return fmt.Errorf("%s is also an input: writing it would replace what is being read (choose another output)", path)
		}
	}
	dir := filepath.Dir(path)
	di, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("cannot write %s: directory %s does not exist", path, dir)
	}
	if !di.IsDir() {
		return fmt.Errorf("cannot write %s: %s is not a directory", path, dir)
	}
	probe, err := os.CreateTemp(dir, "."+filepath.Base(path)+".check-*")
	if err != nil {
		return fmt.Errorf("cannot write %s: %v", path, unwrapPath(err))
	}
	probe.Close()
	os.Remove(probe.Name())
	return nil
}

// Direct says whether an existing target that is not a regular file may
// be written as it is: a device, anything under /dev or /proc (/dev/stdout,
// /proc/self/fd/1), or a FIFO or socket the user owns. A FIFO at an
// ordinary path owned by another user was planted, not chosen.
func Direct(path string, fi os.FileInfo) error {
	if fi.Mode()&os.ModeDevice != 0 {
		return nil
	}
	abs, err := filepath.Abs(path)
	if err == nil && (strings.HasPrefix(abs, "/dev/") || strings.HasPrefix(abs, "/proc/")) {
		return nil
	}
	if uid, ok := owner(fi); ok && uid != os.Geteuid() {
		return fmt.Errorf("%s is %s owned by another user (uid %d), not a file: refusing to write into it (remove it, or name /dev/stdout)", path, kind(fi.Mode()), uid)
	}
	return nil
}

// unwrapPath drops the temporary name from a *PathError: "permission
// denied", not "open /dir/.x.check-123: permission denied".
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// tmpPrefix names a temporary file of path made by process pid:
// ".NAME.tmp-PID-", so that a later run can tell whose it is.
func tmpPrefix(path string, pid int) string {
	return fmt.Sprintf(".%s.tmp-%d-", filepath.Base(path), pid)
}

// removeStale removes the temporary files of path left by runs that were
// killed mid-write (SIGKILL, a crash): those whose process is gone. A file
// of a process still running (a concurrent run) is left alone.
func removeStale(path string) {
	RemoveStale(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
}

// RemoveStale removes the files in dir named prefix + PID + "-…" whose
// process is gone: what runs killed mid-write (SIGKILL, a crash, the OOM
// killer) left behind. Those of running processes stay.
func RemoveStale(dir, prefix string) {
	matches, _ := filepath.Glob(filepath.Join(dir, globEscape(prefix)+"*"))
	for _, m := range matches {
		rest := strings.TrimPrefix(filepath.Base(m), prefix)
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if processGone(pid) {
			os.Remove(m)
		}
	}
}

// globEscape escapes the glob metacharacters of a file name.
func globEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, "*", `\*`, "?", `\?`, "[", `\[`).Replace(s)
}
