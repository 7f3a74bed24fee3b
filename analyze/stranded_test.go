package analyze

import (
	"math"
	"testing"
)

// TestStrandedMemory: memory in use during counted idle runs, worked by
// hand. GPU a, at 1 s: idle for 0–69 (a 70 s run, counted) holding 10 GiB
// for 40 s, no reading for 10 s, 20 GiB for 20 s; busy for 70–79 at 30 GiB;
// idle again for 80–99 (20 s, under the 60 s window: not counted) at 5 GiB.
// Held 60 s, 10 × 40 + 20 × 20 = 800 GiB·s: a mean of 13.3333 GiB,
// 0.2222 GiB-hours. GPU b is idle with no memory in use; c is never idle.
func TestStrandedMemory(t *testing.T) {
	const gib = 1 << 30
	null := math.NaN()
	memA := cat(fill(10*gib, 40), fill(null, 10), fill(20*gib, 20), fill(30*gib, 10), fill(5*gib, 20))
	utilA := cat(fill(0, 70), fill(50, 10), fill(0, 20))
	n := nodeSpec{name: "n", gpus: []gpuSpec{
		{uuid: "GPU-a", t: steps(0, 100), util: utilA, mem: memA, memTotal: 80 * gib},
		{uuid: "GPU-b", t: steps(0, 100), util: fill(0, 100), mem: fill(0, 100)},
		{uuid: "GPU-c", t: steps(0, 100), util: fill(90, 100), mem: fill(70*gib, 100)},
	}}
	p := DefaultParams()
	p.Fragmentation = true
	r := mustAnalyze(t, p, mkProfile(t, t0, 100, 1, n))
	if len(r.StrandedMemory) != 1 {
		t.Fatalf("stranded memory: %+v", r.StrandedMemory)
	}
	s := r.StrandedMemory[0]
	if s.Node != "n" || s.UUID != "GPU-a" || s.GPU != 0 || s.MemTotalGiB != 80 {
		t.Errorf("which GPU: %+v", s)
	}
	near(t, "idle_s", s.IdleS, 70)
	near(t, "held_s", s.HeldS, 60)
	near(t, "mean_gib", s.MeanGiB, 13.3333)
	near(t, "gib_hours", s.GiBHours, 0.2222)
	if r := mustAnalyze(t, DefaultParams(), mkProfile(t, t0, 100, 1, n)); r.StrandedMemory != nil {
		t.Errorf("without the fragmentation report: %+v", r.StrandedMemory)
	}
}
