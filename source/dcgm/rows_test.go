package dcgm

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/seedance/seedance/profile"
)

// rowsScript adds one chunk of series to a builder: [lo, hi) in seconds.
type rowsScript func(b *Builder, lo, hi int64)

// chunked feeds the chunks to a builder, flushing after each (the last one
// too when flushLast) when it keeps its rows in dir, and encodes what it
// builds.
func chunked(t *testing.T, dir string, chunks [][2]int64, add rowsScript, flushLast bool) []byte {
	t.Helper()
	b := NewBuilder(10_000)
	b.MeasureSpacing()
	if dir != "" {
		b.KeepRowsIn(dir)
	}
	for i, ch := range chunks {
		add(b, ch[0], ch[1])
		if i == len(chunks)-1 && !flushLast {
			break
		}
		if err := b.Flush(ch[1] * 1000); err != nil {
			t.Fatal(err)
		}
		if dir != "" && b.Held() != 0 {
			t.Fatalf("held %d after a flush", b.Held())
		}
	}
	p := &profile.Profile{SchemaVersion: profile.SchemaVersion, StartedAt: time.UnixMilli(0).UTC(), EndedAt: time.UnixMilli(chunks[len(chunks)-1][1] * 1000).UTC(), IntervalS: 10}
	if err := b.BuildEach(0, chunks[len(chunks)-1][1]*1000, func(n profile.Node) error {
		p.Nodes = append(p.Nodes, n)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for key, g := range b.gpus {
		held := g.t != nil
		for _, c := range g.cols {
			held = held || c != nil
		}
		if dir != "" && flushLast && held {
			t.Fatalf("GPU %v still holds a chunk's memory once its every row is in the file", key)
		}
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := profile.Validate(p); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := profile.Encode(&out, p); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// pairs are samples every 10 s in [lo, hi), valued f(t in s).
func pairs(lo, hi int64, f func(int64) float64) []Pair {
	var out []Pair
	for s := lo; s < hi; s += 10 {
		out = append(out, Pair{s * 1000, f(s)})
	}
	return out
}

// TestKeptRowsBuildTheSameNodes: a builder that moves each finished chunk's
// rows to its file builds the nodes one that keeps them in memory builds,
// byte for byte: a column that a better-ranked metric takes over in a
// later chunk (GR_ENGINE_ACTIVE, then GPU_UTIL) is null before, as in
// memory; a column that appears late, one that stops, a missed scrape, a
// pod's tenure across chunks, the memory size from the last rows, a MIG
// device. The file is removed by Close.
func TestKeptRowsBuildTheSameNodes(t *testing.T) {
	gpu := func(node, uuid string, index int, pod string) Identity {
		return Identity{Key: GPUKey{Node: node, UUID: uuid}, Index: index, Model: "H100", Namespace: "ml", Pod: pod}
	}
	mig := Identity{Key: GPUKey{Node: "b", UUID: "GPU-B0", GI: "1"}, Index: 0, Model: "H100", MIGProf: "1g.10gb"}
	add := func(b *Builder, lo, hi int64) {
		a0, a1 := gpu("a", "GPU-A0", 0, "train"), gpu("a", "GPU-A1", 1, "")
		if lo < 600 {
			b.Add(a0, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", pairs(lo, hi, func(s int64) float64 { return 0.5 }))
			b.Add(a1, "DCGM_FI_DEV_POWER_USAGE", pairs(lo, hi, func(s int64) float64 { return 100 + float64(s%7) }))
		} else {
			b.Add(a0, "DCGM_FI_DEV_GPU_UTIL", pairs(lo, hi, func(s int64) float64 { return float64(s % 100) }))
			b.Add(a0, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", pairs(lo, hi, func(s int64) float64 { return 0.25 }))
			b.Add(a1, "DCGM_FI_DEV_GPU_UTIL", pairs(lo, hi, func(s int64) float64 { return 3 }))
		}
		b.Add(a0, "DCGM_FI_DEV_FB_USED", pairs(lo, hi, func(s int64) float64 { return float64(1000 + s) }))
		b.Add(a0, FBFree, pairs(lo, hi, func(s int64) float64 { return float64(80000 - s) }))
		b.Add(a0, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", pairs(lo, hi, func(s int64) float64 { return float64(s * 1e5) }))
		util := pairs(lo, hi, func(s int64) float64 { return 1 })
		if lo <= 300 && 300 < hi { // a missed scrape
			util = append(util[:3], util[4:]...)
		}
		b.Add(mig, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", util)
	}
	chunks := [][2]int64{{0, 300}, {300, 600}, {600, 900}, {900, 1000}}
	dir := t.TempDir()
	memory := chunked(t, "", chunks, add, true)
	kept := chunked(t, dir, chunks, add, true)
	if !bytes.Equal(memory, kept) {
		t.Fatalf("kept rows build another profile:\n%s\nin memory:\n%s", kept, memory)
	}
	// An interrupted read: the last chunk's rows are still in memory.
	if cut := chunked(t, dir, chunks, add, false); !bytes.Equal(memory, cut) {
		t.Fatalf("kept rows and a last chunk in memory build another profile:\n%s\nin memory:\n%s", cut, memory)
	}
	if !bytes.Contains(kept, []byte(`"gpu_util_pct":[null,`)) || !bytes.Contains(kept, []byte(`"memory_total_bytes"`)) {
		t.Fatalf("the case does not test what it says:\n%s", kept)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("left in the temporary directory: %v", left)
	}
}
