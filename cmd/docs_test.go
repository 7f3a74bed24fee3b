package cmd

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/cobra/doc"

	"github.com/seedance/seedance/internal/golden"
)

// TestCLIReferenceUpToDate regenerates the CLI reference with cobra/doc and
// compares it with docs/cli/ (go test ./cmd -update rewrites it).
func TestCLIReferenceUpToDate(t *testing.T) {
	f, _ := testFactory(t, nil)
	root := NewRootCmd(f)
	dir := t.TempDir()
	if err := doc.GenMarkdownTree(root, dir); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, e := range entries {
		want[e.Name()] = true
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		golden.Check(t, filepath.Join("..", "docs", "cli", e.Name()), b)
	}
	if *golden.Update {
		return
	}
	committed, _ := os.ReadDir(filepath.Join("..", "docs", "cli"))
	for _, e := range committed {
		if !want[e.Name()] {
			t.Errorf("docs/cli/%s documents a command that no longer exists", e.Name())
		}
	}
}
