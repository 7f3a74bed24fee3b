package cmd

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCmdIsGlue (#28): cmd is cobra and flag binding: under 1,800 lines of
// code, and no function over 60 lines. The workflows belong in pipeline,
// the settings in settings.
func TestCmdIsGlue(t *testing.T) {
	const maxLines, maxFunc = 1800, 60
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset, total := token.NewFileSet(), 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		total += bytes.Count(src, []byte("\n"))
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			if n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1; n > maxFunc {
				t.Errorf("%s: %s is %d lines, over %d: move the work out of cmd", name, fd.Name.Name, n, maxFunc)
			}
		}
	}
	if total >= maxLines {
		t.Errorf("cmd has %d lines of code, %d or more: move the work out of cmd", total, maxLines)
	}
	t.Logf("cmd: %d lines", total)
}
