package hwtopo

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// addCaptures seeds a fuzz target with the repository's own captures.
func addCaptures(f *testing.F, glob string) {
	files, _ := filepath.Glob(filepath.Join("testdata", glob))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
}

// FuzzParseMatrix: any `nvidia-smi topo -m` text gives a topology that
// validates and renders, or one line of error.
func FuzzParseMatrix(f *testing.F) {
	addCaptures(f, "topo-*.txt")
	f.Add([]byte("\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\nGPU0\t X \tNV12\t0-7\t0\nGPU1\tNV12\t X \t0-7\t0\n"))
	f.Add([]byte("\tGPU0\nGPU0\t X \t0-99999999\t0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		topo, err := ParseMatrix(bytes.NewReader(data))
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of more than one line: %q", err)
			}
			return
		}
		if err := topo.Validate(); err != nil {
			t.Fatalf("a parsed capture does not validate: %v", err)
		}
		topo.Compact()
		Warnings(topo, nil)
	})
}

// FuzzParseCPUList: work is bounded by MaxCPU whatever the list says.
func FuzzParseCPUList(f *testing.F) {
	for _, s := range []string{"0-3,8,10-11", "0-99999999", "-1", "5-2", "1,1,1", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cpus, err := ParseCPUList(s)
		if err == nil && len(cpus) > MaxCPU+1 {
			t.Fatalf("%d CPUs", len(cpus))
		}
		for _, c := range cpus {
			if c < 0 || c > MaxCPU {
				t.Fatalf("CPU %d", c)
			}
		}
	})
}

// TestInternShares: nodes with the same layout share one compact topology;
// a different layout gets its own.
func TestInternShares(t *testing.T) {
	mk := func(bw float64, uuid string) *Topology {
		n := 0
		return &Topology{GPUs: []GPU{{Index: 0, UUID: uuid, NUMANode: &n, CPUAffinity: "0-7"}, {Index: 1, UUID: uuid + "b", NUMANode: &n}},
			Matrix: [][]string{{"X", "NV18"}, {"NV18", "X"}}, NVLinkGBps: [][]float64{{0, bw}, {bw, 0}}}
	}
	var in Interner
	a, b, c := in.Intern(mk(450, "GPU-a")), in.Intern(mk(450, "GPU-b")), in.Intern(mk(300, "GPU-c"))
	if a != b || a == c {
		t.Fatalf("shared %v, distinct %v", a == b, a != c)
	}
	if a.GPUs[0].UUID != "" || a.Matrix[0][1] != "NV18" || a.NVLinkGBps[0][1] != 450 || *a.GPUs[0].NUMANode != 0 || a.GPUs[0].CPUAffinity != "0-7" {
		t.Fatalf("compact topology %+v", a)
	}
	if in.Intern(nil) != nil {
		t.Fatal("nil topology")
	}
}

// TestInternKeyIsEquality: two compact topologies share a key exactly
// when their JSON is the same, across changes to every field.
func TestInternKeyIsEquality(t *testing.T) {
	zero, one := 0, 1
	base := func() *Topology {
		return &Topology{GPUs: []GPU{{Index: 0, NUMANode: &zero, CPUAffinity: "0-7"}, {Index: 1}},
			Matrix: [][]string{{"X", "NV18"}, {"NV18", "X"}}, NVLinkGBps: [][]float64{{0, 450}, {450, 0}},
			Host: &Host{Sockets: 2, NUMANodes: []NUMANode{{ID: 0, CPUs: "0-7", MemoryBytes: 1 << 40}}}}
	}
	variants := []func(*Topology){
		func(*Topology) {},
		func(t *Topology) { t.GPUs[1].NUMANode = &zero },
		func(t *Topology) { t.GPUs[0].NUMANode = &one },
		func(t *Topology) { t.GPUs[0].CPUAffinity = "0-7," },
		func(t *Topology) { t.GPUs[0].CPUAffinity, t.GPUs[1].CPUAffinity = "0-", "7" },
		func(t *Topology) { t.Matrix[0][1] = "NV1" },
		func(t *Topology) { t.Matrix[0][0], t.Matrix[0][1] = "XN", "V18" },
		func(t *Topology) { t.NVLinkGBps[0][1] = 450.0000001 },
		func(t *Topology) { t.NVLinkGBps = nil },
		func(t *Topology) { t.Matrix = nil },
		func(t *Topology) { t.Host = nil },
		func(t *Topology) { t.Host.NUMANodes = nil },
		func(t *Topology) { t.Host.NUMANodes[0].MemoryBytes++ },
		func(t *Topology) { t.Host.Sockets = 1 },
		func(t *Topology) { t.GPUs = t.GPUs[:1] },
		func(t *Topology) { t.GPUs[1].Index = 2 },
	}
	var in Interner
	for i, vi := range variants {
		for j, vj := range variants {
			a, b := base(), base()
			vi(a)
			vj(b)
			ja, _ := json.Marshal(a.Compact())
			jb, _ := json.Marshal(b.Compact())
			ka := string(in.key(a.Compact()))
			kb := string(in.key(b.Compact()))
			if (ka == kb) != bytes.Equal(ja, jb) {
				t.Errorf("variants %d and %d: keys equal %v, JSON equal %v", i, j, ka == kb, bytes.Equal(ja, jb))
			}
		}
	}
}
