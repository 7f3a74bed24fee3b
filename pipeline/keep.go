package pipeline

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/seedance/seedance/internal/exit"
	"github.com/seedance/seedance/internal/fsutil"
)

// datedLayout is the window's end in a dated copy's name: sortable as
// text, no characters a file system refuses.
const datedLayout = "20060102T150405Z"

// writeKept writes the report to path (the latest) and to a dated copy
// beside it (its name with the window's end), then removes the dated
// copies beyond the newest keep (analyze.keep). Each file is written
// atomically; a failed write removes nothing.
func writeKept(path string, keep int, end time.Time, write func(io.Writer) error) error {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() || strings.HasPrefix(filepath.Clean(path), "/dev/") || strings.HasPrefix(filepath.Clean(path), "/proc/") {
		return exit.Usagef("--keep keeps dated copies beside a regular file: %s is not one", path)
	}
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		return err
	}
	ext := filepath.Ext(path)
	if ext == ".gz" || ext == ".zst" { // report.json.gz: -DATE.json.gz
		ext = filepath.Ext(strings.TrimSuffix(path, ext)) + ext
	}
	stem := strings.TrimSuffix(path, ext)
	dated := stem + "-" + end.UTC().Format(datedLayout) + ext
	for _, p := range []string{dated, path} {
		if err := fsutil.WriteAtomic(p, func(w io.Writer) error { _, err := w.Write(buf.Bytes()); return err }); err != nil {
			return err
		}
	}
	return prune(stem, ext, keep)
}

// prune removes the dated copies of stem+ext beyond the newest keep.
func prune(stem, ext string, keep int) error {
	dir, base := filepath.Split(stem)
	if dir == "" {
		dir = "."
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	name := regexp.MustCompile("^" + regexp.QuoteMeta(base) + `-\d{8}T\d{6}Z` + regexp.QuoteMeta(ext) + "$")
	var dated []string
	for _, e := range entries {
		if e.Type().IsRegular() && name.MatchString(e.Name()) {
			dated = append(dated, e.Name())
		}
	}
	slices.Sort(dated)
	for len(dated) > keep {
		if err := os.Remove(filepath.Join(dir, dated[0])); err != nil {
			return err
		}
		dated = dated[1:]
	}
	return nil
}
