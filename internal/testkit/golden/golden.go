// Package golden compares test output with files under testdata/ and
// rewrites them when tests run with -update.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// Update is set by -update (make update-golden passes it to every package that has golden files).
var Update = flag.Bool("update", false, "rewrite golden files under testdata/")

// Same compares got with a golden file another package's test owns: it
// never rewrites it, so that one test alone updates each file.
func Same(t testing.TB, path string, got []byte) {
	t.Helper()
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file %s: %v", path, err)
	}
	compare(t, path, got, want)
}

// Check compares got with the golden file at path, or rewrites the file when
// -update is given.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run make update-golden to create it): %v", err)
	}
	compare(t, path, got, want)
}

func compare(t testing.TB, path string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		lo := max(0, i-80)
		t.Fatalf("output differs from %s at byte %d (run make update-golden if the change is intended)\n got: …%s\nwant: …%s",
			path, i, got[lo:min(len(got), i+80)], want[lo:min(len(want), i+80)])
	}
}
