package analyze

import (
	"bytes"
	"context"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"
	"unsafe"

	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source/sim"
)

// BenchmarkLiveHeapPerNode reports the live heap analysis holds per node
// once every input is read (the most it holds): a simulated cluster of
// SEEDANCE_BENCH_NODES nodes (default 2,000; 8 GPUs each) × 30 s, the
// mixed scenario with its workloads and topologies (issue #11's figure).
func BenchmarkLiveHeapPerNode(b *testing.B) {
	nodes := 2000
	if v, err := strconv.Atoi(os.Getenv("SEEDANCE_BENCH_NODES")); err == nil && v > 0 {
		nodes = v
	}
	p, err := sim.Record(sim.Options{Nodes: nodes, Scenario: sim.ScenarioMixed, Seed: 1}, time.Second, 30*time.Second, profile.Generator{})
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	if err := profile.Encode(&buf, p); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	heap := func() float64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return float64(m.HeapAlloc)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		base := heap()
		s, err := profile.OpenStream(bytes.NewReader(data), "sim.json")
		if err != nil {
			b.Fatal(err)
		}
		// The inputs read, the report not yet made: the largest live state.
		a, r, err := read(context.Background(), []Source{{Name: "sim.json", Stream: s}}, DefaultParams())
		if err != nil {
			b.Fatal(err)
		}
		live := heap() - base
		a.report(r)
		b.ReportMetric(live/float64(nodes), "live-B/node")
		b.ReportMetric(live/float64(nodes)*20000/(1<<20), "live-MiB@20k")
	}
}

// TestGPUAccFitsItsSizeClass: the accumulator there is one of per GPU
// stays within Go's 288-byte size class (issue #11's memory per node), and
// what --report all adds to it within 80 bytes (issue #30).
func TestGPUAccFitsItsSizeClass(t *testing.T) {
	if n := unsafe.Sizeof(gpuAcc{}); n > 288 {
		t.Fatalf("gpuAcc is %d bytes: past the 288-byte size class, every GPU costs 320 or more", n)
	}
	// With --report all every GPU of a fleet has its gpuExtra too.
	if n := unsafe.Sizeof(gpuExtra{}); n > 80 {
		t.Fatalf("gpuExtra is %d bytes: past the 80-byte size class", n)
	}
}

// TestNodeGPULookup: a node finds its GPUs by UUID by a scan, and through
// an index once it has more than indexFrom of them (MIG devices), the same.
func TestNodeGPULookup(t *testing.T) {
	n := &nodeAcc{name: "n"}
	for i := 0; i < 3*indexFrom; i++ {
		uuid := "GPU-" + strconv.Itoa(i)
		if n.gpu(uuid) != nil {
			t.Fatalf("%s found before it was added", uuid)
		}
		n.addGPU(&gpuAcc{uuid: uuid, index: int32(i)})
		for j := 0; j <= i; j++ {
			if g := n.gpu("GPU-" + strconv.Itoa(j)); g == nil || g.index != int32(j) {
				t.Fatalf("after %d GPUs, GPU-%d: %+v", i+1, j, g)
			}
		}
	}
	if n.byUUID == nil || len(n.byUUID) != len(n.gpus) {
		t.Fatalf("index %d entries for %d GPUs", len(n.byUUID), len(n.gpus))
	}
}
