package pipeline

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestWriteKept: each report goes to the latest file and to a dated copy;
// the dated copies beyond the newest keep go, other files stay.
func TestWriteKept(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.json")
	if err := os.WriteFile(filepath.Join(dir, "report-notes.json"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for h := range 5 {
		body := []byte{'0' + byte(h)}
		if err := writeKept(path, 3, t0.Add(time.Duration(h)*time.Hour), func(w io.Writer) error { _, err := w.Write(body); return err }); err != nil {
			t.Fatal(err)
		}
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := []string{"report-20261201T120000Z.json", "report-20261201T130000Z.json", "report-20261201T140000Z.json", "report-notes.json", "report.json"}
	if !slices.Equal(names, want) {
		t.Fatalf("files %v, want %v", names, want)
	}
	if b, _ := os.ReadFile(path); string(b) != "4" {
		t.Errorf("latest: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "report-20261201T120000Z.json")); string(b) != "2" {
		t.Errorf("dated: %q", b)
	}
}

// TestWriteKeptWantsAFile: --keep beside a device would write dated files
// into /dev; it is refused, and the device is left alone.
func TestWriteKeptWantsAFile(t *testing.T) {
	err := writeKept("/dev/null", 3, time.Now(), func(w io.Writer) error { return nil })
	if err == nil {
		t.Fatal("--keep beside /dev/null was not refused")
	}
	if fi, err := os.Stat("/dev/null"); err != nil || fi.Mode()&os.ModeDevice == 0 {
		t.Fatalf("/dev/null: %v %v", fi, err)
	}
}

// TestWriteKeptCompressed: a compressed report's dated copy keeps both
// extensions after the date (report-DATE.json.gz), so that it is pruned
// with its kind; a keep below the copies there removes all the extra.
func TestWriteKeptCompressed(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for _, ext := range []string{".json.gz", ".json.zst"} {
		dir := t.TempDir()
		path := filepath.Join(dir, "report"+ext)
		for h := range 3 {
			if err := writeKept(path, 5, t0.Add(time.Duration(h)*time.Hour), func(w io.Writer) error { return nil }); err != nil {
				t.Fatal(err)
			}
		}
		if err := writeKept(path, 1, t0.Add(3*time.Hour), func(w io.Writer) error { return nil }); err != nil {
			t.Fatal(err)
		}
		entries, _ := os.ReadDir(dir)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if want := []string{"report-20261201T130000Z" + ext, "report" + ext}; !slices.Equal(names, want) {
			t.Errorf("%s: files %v, want %v", ext, names, want)
		}
	}
}
