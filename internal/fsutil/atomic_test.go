package fsutil

import (
	"os/exec"
	"strings"
	"syscall"

	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestWriteAtomicReplaces(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.json")
	if err := os.WriteFile(path, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := WriteAtomic(path, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	fi, _ := os.Stat(path)
	if string(b) != "new" || fi.Mode().Perm() != newFileMode() {
		t.Fatalf("content %q mode %v", b, fi.Mode())
	}
}

// TestWriteAtomicModeFromUmask (#27, case 7): replacing a file another
// user left world-writable gives the report the mode of a new file under
// the umask, never the old file's.
func TestWriteAtomicModeFromUmask(t *testing.T) {
	path := filepath.Join(t.TempDir(), "baseline.json")
	if err := os.WriteFile(path, []byte("old"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o666); err != nil { // past the umask
		t.Fatal(err)
	}
	if err := WriteAtomic(path, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm()&0o022 != 0 || fi.Mode().Perm() != newFileMode() {
		t.Fatalf("mode %v, want %v", fi.Mode().Perm(), newFileMode())
	}
}

// TestFIFOs (#27, case 6): a FIFO planted by another user in place of the
// output is refused; a FIFO without a reader fails at once instead of
// hanging; a FIFO, device or regular file is never read as a settings file
// without blocking.
func TestFIFOs(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "report.json")
	if err := syscall.Mkfifo(fifo, 0o666); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- WriteAtomic(fifo, func(w io.Writer) error { _, err := io.WriteString(w, "x"); return err })
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "no process reads") {
			t.Errorf("no reader: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("writing to a FIFO without a reader hung")
	}
	if os.Geteuid() == 0 {
		if err := os.Chown(fifo, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if err := CheckOutput(fifo); err == nil || !strings.Contains(err.Error(), "owned by another user (uid 65534)") {
			t.Errorf("planted FIFO: %v", err)
		}
		if err := WriteAtomic(fifo, func(io.Writer) error { return nil }); err == nil {
			t.Error("wrote into a planted FIFO")
		}
	}
	for _, path := range []string{fifo, "/dev/zero", dir} {
		done := make(chan error, 1)
		go func() { _, err := ReadRegular(path, 1<<20); done <- err }()
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("%s read as a settings file", path)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("reading %s hung", path)
		}
	}
}

func TestWriteAtomicFailureKeepsOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.json")
	if err := os.WriteFile(path, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := WriteAtomic(path, func(w io.Writer) error {
		_, _ = io.WriteString(w, "half a profi")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	b, _ := os.ReadFile(path)
	if string(b) != "precious" {
		t.Fatalf("existing file changed to %q", b)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("temporary file left behind: %v", entries)
	}
}

func TestWriteAtomicNewFileMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new.json")
	if err := WriteAtomic(path, func(w io.Writer) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v", fi.Mode())
	}
}

func TestWriteAtomicMissingDir(t *testing.T) {
	err := WriteAtomic(filepath.Join(t.TempDir(), "no", "such", "dir", "f"), func(io.Writer) error { return nil })
	if err == nil {
		t.Fatal("no error for a missing directory")
	}
}

// TestWriteAtomicKeepsDevices: writing to a character device or a FIFO
// writes through it and leaves the node in place. The test makes its own
// device node (a copy of /dev/null's numbers) when it may, and a FIFO always.
func TestWriteAtomicKeepsDevices(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// A reader is there before the write (without one, the write fails).
	rd, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteAtomic(fifo, func(w io.Writer) error { _, err := io.WriteString(w, "through"); return err }); err != nil {
		t.Fatal(err)
	}
	// The pipe holds what was written; the writer has closed it.
	b, _ := io.ReadAll(rd)
	rd.Close()
	if string(b) != "through" {
		t.Fatalf("FIFO reader got %q", b)
	}
	if fi, err := os.Stat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO was replaced: %v %v", fi.Mode(), err)
	}
	dev := filepath.Join(dir, "null")
	if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|3 /* 1:3, as /dev/null */); err != nil {
		t.Skipf("cannot make a device node here (not root?): %v", err)
	}
	if err := WriteAtomic(dev, func(w io.Writer) error { _, err := io.WriteString(w, "gone"); return err }); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dev)
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("the device node was replaced by a %v", fi.Mode())
	}
	if err := CheckOutput(dev); err != nil {
		t.Errorf("a device is a fine output: %v", err)
	}
}

func TestCheckOutput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "p.json")
	if err := os.WriteFile(in, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	ro := filepath.Join(dir, "ro")
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ path, want string }{
		{"-", ""},
		{filepath.Join(dir, "new.json"), ""},
		{in, "is also an input"},
		{filepath.Join(dir, ".", "p.json"), "is also an input"},
		{dir, "is a directory"},
		{filepath.Join(dir, "nope", "x.json"), "does not exist"},
		{filepath.Join(in, "x.json"), "is not a directory"},
	}
	if os.Geteuid() != 0 { // root writes anywhere
		tests = append(tests, struct{ path, want string }{filepath.Join(ro, "x.json"), "permission denied"})
	}
	for _, tt := range tests {
		err := CheckOutput(tt.path, in)
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("CheckOutput(%s) = %v, want %q", tt.path, err, tt.want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("the probe left files behind: %v", entries)
	}
}

// TestStaleTempFilesRemoved: temporary files of a run killed mid-write are
// removed by the next write of the same file; those of a live process,
// and other files, are not.
func TestStaleTempFilesRemoved(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.json")
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, tmpPrefix(path, dead.Process.Pid)+"123")
	live := filepath.Join(dir, tmpPrefix(path, 1)+"456") // init never exits
	other := filepath.Join(dir, ".q.json.tmp-1-789")
	for _, f := range []string{stale, live, other} {
		if err := os.WriteFile(f, []byte("half a profi"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteAtomic(path, func(w io.Writer) error { _, err := io.WriteString(w, "{}"); return err }); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Error("the dead run's temporary file is still there")
	}
	for _, f := range []string{live, other, path} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("%s was removed", f)
		}
	}
}
