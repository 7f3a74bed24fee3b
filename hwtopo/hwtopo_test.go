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

// TestDGXInterconnect: the DGX A100 mock with 12 NVSwitch links per GPU is
// NV12 between every pair, the DGX H100 NV18, as on the real machines; the
// parser reads the same matrix back, space-separated as people paste it.
func TestParseNVLinkStatus(t *testing.T) {
	for file, want := range map[string][2]float64{
		"nvidia_gpu_exporter__linux-x86_64__nvidia-h100-80gb-hbm3__590.48.01.nvlink-s.txt": {18, 26.562},
		"gpud__nvidia-smi.nvlink.status.a100.txt":                                          {12, 25},
	} {
		b, err := os.ReadFile(filepath.Join(realdata, file))
		if err != nil {
			t.Fatal(err)
		}
		gpus, err := ParseNVLinkStatus(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		g := gpus[0]
		if float64(len(g.NVLinks)) != want[0] || g.NVLinks[0].GBps != want[1] || !g.NVLinks[0].Up {
			t.Errorf("%s: %d links at %v", file, len(g.NVLinks), g.NVLinks[0].GBps)
		}
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
