package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra/doc"

	"github.com/seedance/seedance/internal/testkit/golden"
	"github.com/seedance/seedance/recommend"
	"github.com/seedance/seedance/render"
	"github.com/seedance/seedance/source"
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

// TestHelpListsEverything: the help names every source, format, report and
// dialect that exists, from the lists the code uses.
func TestHelpListsEverything(t *testing.T) {
	for cmd, lists := range map[string][][]string{
		"profile":   {source.Names()},
		"analyze":   {source.Names(), render.Formats, render.Reports},
		"recommend": {recommend.Dialects},
	} {
		r := run(t, nil, cmd, "--help")
		for _, list := range lists {
			for _, name := range list {
				if !strings.Contains(r.out, name) {
					t.Errorf("seedance %s --help does not name %q", cmd, name)
				}
			}
		}
	}
}

// TestHelpGroupsFlags: a command's help puts the flags of a source or a
// section under their own title, every flag once.
func TestHelpGroupsFlags(t *testing.T) {
	out := run(t, nil, "analyze", "--help").out
	prom, sim := strings.Index(out, "\nPrometheus source flags:\n"), strings.Index(out, "\nSimulator flags:\n")
	if prom < 0 || sim < prom || !strings.Contains(out[prom:sim], "--pushdown") || strings.Count(out, "--pushdown ") != 1 || !strings.Contains(out[:prom], "--report") {
		t.Fatalf("analyze --help:\n%s", out)
	}
}
