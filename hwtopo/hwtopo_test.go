package hwtopo

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seedance/seedance/internal/testkit/golden"
)

var _ = golden.Update

// realdata holds real captures, copied with their licences (README.md there).
const realdata = "testdata/realdata"

func TestParseRejectsErrors(t *testing.T) {
	f := filepath.Join(realdata, "nvidia_gpu_exporter__windows-x86_64__nvidia-geforce-rtx-2080-super__591.86.topo.txt")
	b, _ := os.ReadFile(f)
	_, err := ParseMatrix(bytes.NewReader(b))
	if err == nil || !strings.Contains(err.Error(), "Option -m is missing its value") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err = %v", err)
	}
}

func TestCPUList(t *testing.T) {
	for _, s := range []string{"0-19", "0-51,104-155", "3", "0,2,4-6", ""} {
		words, err := CPUMask(s, 4)
		if err != nil {
			t.Fatal(err)
		}
		if got := CPUList(words); got != s {
			t.Errorf("%q → %q", s, got)
		}
	}
	if _, err := ParseCPUList("3-1"); err == nil {
		t.Error("3-1 accepted")
	}
}
