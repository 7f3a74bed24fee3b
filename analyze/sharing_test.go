package analyze

import (
	"fmt"
	"testing"
	"time"

	"github.com/seedance/seedance/pricing"
	"github.com/seedance/seedance/profile"
)

// sharedNode: one GPU for 600 s at 60 s, at 40 % for the first 300 s and
// idle after, held by a and b all along. With usage, a used 30 % and b
// 10 % in the first half, and both 0 after.
func sharedNode(usage bool, sa, sb *profile.Sharing) nodeSpec {
	ts := []float64{0, 60, 120, 180, 240, 300, 360, 420, 480, 540}
	g := gpuSpec{uuid: "GPU-0", model: "TestGPU", t: ts, util: cat(fill(40, 5), fill(0, 5)), memTotal: 80 << 30}
	if usage {
		g.usage = []profile.Usage{
			{Workload: "ns/a", UtilPct: cat(fill(30, 5), fill(0, 5))},
			{Workload: "ns/b", UtilPct: cat(fill(10, 5), fill(0, 5))},
		}
	}
	pod := func(id string, s *profile.Sharing) profile.Workload {
		return profile.Workload{ID: id, Kind: profile.KindPod, State: profile.StateRunning, GPUs: []int{0}, Sharing: s}
	}
	return nodeSpec{name: "n", gpus: []gpuSpec{g}, workloads: []profile.Workload{pod("ns/a", sa), pod("ns/b", sb)}}
}

func sharedReport(t *testing.T, n nodeSpec) map[string]AttributionGroup {
	t.Helper()
	p := DefaultParams()
	p.Pricer = pricing.New(nil, 3.6) // $0.001 a GPU-second
	p.Attribution = &AttributionParams{GroupBy: []string{"workload"}}
	r := mustAnalyze(t, p, mkProfile(t, t0, 600, 60, n))
	got := map[string]AttributionGroup{"(unallocated)": {AttributionFigures: r.Attribution.Unallocated}}
	for _, g := range r.Attribution.Groups {
		got[g.Key[0]] = g
	}
	return got
}

// TestSharedGPUSplitByHand: docs/sharing.md's rules worked by hand. The
// sums are the GPU's 600 s whatever the rule.
func TestSharedGPUSplitByHand(t *testing.T) {
	const h = 1.0 / 3600
	cases := []struct {
		name     string
		usage    bool
		sa, sb   *profile.Sharing
		held     [3]float64 // a, b, unallocated, in GPU-seconds
		used     [2]float64
		idle     [3]float64
		basis    [2]string
		measured float64 // a's measured GPU-seconds when mixed
	}{
		// Evenly: 300 + 300.
		{name: "even", held: [3]float64{300, 300, 0}, used: [2]float64{60, 60}, idle: [3]float64{150, 150, 0}, basis: [2]string{"even", "even"}},
		// Measured in the first half (30:10 → 0.75, 0.25), nobody used the
		// GPU in the second: evenly there.
		{name: "measured", usage: true, held: [3]float64{225 + 150, 75 + 150, 0}, used: [2]float64{90, 30}, idle: [3]float64{150, 150, 0},
			basis: [2]string{"mixed", "mixed"}, measured: 225},
		// Cores asked for, 60 % and 20 %: a fifth of the GPU is nobody's.
		{name: "requested cores", sa: &profile.Sharing{CoresPct: 60}, sb: &profile.Sharing{CoresPct: 20},
			held: [3]float64{360, 120, 120}, used: [2]float64{72, 24}, idle: [3]float64{180, 60, 60}, basis: [2]string{"requested", "requested"}},
		// Memory asked for, 40 GiB and 20 GiB of 80: halves and a quarter.
		{name: "requested memory", sa: &profile.Sharing{MemoryBytes: 40 << 30}, sb: &profile.Sharing{MemoryBytes: 20 << 30},
			held: [3]float64{300, 150, 150}, used: [2]float64{60, 30}, idle: [3]float64{150, 75, 75}, basis: [2]string{"requested", "requested"}},
		// Cores for one, memory for the other: no common measure, evenly.
		{name: "mixed requests", sa: &profile.Sharing{CoresPct: 60}, sb: &profile.Sharing{MemoryBytes: 20 << 30},
			held: [3]float64{300, 300, 0}, used: [2]float64{60, 60}, idle: [3]float64{150, 150, 0}, basis: [2]string{"even", "even"}},
		// Measured where used, requested (gpu_milli) where idle.
		{name: "measured and milli", usage: true, sa: &profile.Sharing{Milli: 500}, sb: &profile.Sharing{Milli: 250},
			held: [3]float64{225 + 150, 75 + 75, 75}, used: [2]float64{90, 30}, idle: [3]float64{150, 75, 75}, basis: [2]string{"mixed", "mixed"}, measured: 225},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := sharedReport(t, sharedNode(c.usage, c.sa, c.sb))
			a, b, un := got["ns/a"], got["ns/b"], got["(unallocated)"]
			near(t, "a held", a.HeldGPUHours, c.held[0]*h)
			near(t, "b held", b.HeldGPUHours, c.held[1]*h)
			near(t, "unallocated held", un.HeldGPUHours, c.held[2]*h)
			near(t, "held in all", a.HeldGPUHours+b.HeldGPUHours+un.HeldGPUHours, 600*h)
			near(t, "a used", a.UsedGPUHours, c.used[0]*h)
			near(t, "b used", b.UsedGPUHours, c.used[1]*h)
			near(t, "a idle", a.IdleHeldGPUHours, c.idle[0]*h)
			near(t, "b idle", b.IdleHeldGPUHours, c.idle[1]*h)
			near(t, "unallocated idle", un.IdleHeldGPUHours, c.idle[2]*h)
			near(t, "a waste", a.WasteCostUSD, c.idle[0]*0.001)
			if a.Basis != c.basis[0] || b.Basis != c.basis[1] {
				t.Errorf("basis %q, %q, want %q, %q", a.Basis, b.Basis, c.basis[0], c.basis[1])
			}
			if c.measured > 0 {
				near(t, "a measured", a.BasisGPUHours["measured"], c.measured*h)
			}
		})
	}
}

// TestMeasuredAcrossInputs: three holders of a GPU at 40 % over three
// inputs of 300 s. The first measures a and b only (c, unmeasured, leaves
// the rule to even parts: 100 s each); the second measures a 20, b 10 and
// c 10 (150, 75, 75); the third measures nobody (even again: 100 each; the
// second's measurement does not carry over). a held 350 s, b and c 275.
func TestMeasuredAcrossInputs(t *testing.T) {
	ts := []float64{0, 60, 120, 180, 240}
	pod := func(id string) profile.Workload {
		return profile.Workload{ID: id, Kind: profile.KindPod, State: profile.StateRunning, GPUs: []int{0}}
	}
	input := func(k int, usage []profile.Usage) []byte {
		g := gpuSpec{uuid: "GPU-0", model: "TestGPU", t: ts, util: fill(40, 5), usage: usage}
		return mkProfile(t, t0.Add(time.Duration(300*k)*time.Second), 300, 60, nodeSpec{name: "n", gpus: []gpuSpec{g}, workloads: []profile.Workload{pod("ns/a"), pod("ns/b"), pod("ns/c")}})
	}
	u := func(id string, v float64) profile.Usage { return profile.Usage{Workload: id, UtilPct: fill(v, 5)} }
	p := DefaultParams()
	p.Attribution = &AttributionParams{GroupBy: []string{"workload"}}
	r := mustAnalyze(t, p, input(0, []profile.Usage{u("ns/a", 30), u("ns/b", 10)}), input(1, []profile.Usage{u("ns/a", 20), u("ns/b", 10), u("ns/c", 10)}), input(2, nil))
	got := map[string]float64{}
	for _, g := range r.Attribution.Groups {
		got[g.Key[0]] = g.HeldGPUHours * 3600
	}
	near(t, "a", got["ns/a"], 350)
	near(t, "b", got["ns/b"], 275)
	near(t, "c", got["ns/c"], 275)
}

// TestHolderWeightsEdges: memory asked for on a GPU of unknown memory is
// no measure (even parts); gpu_milli labels from 1 to 1000 are requests,
// 0 and 1001 are not.
func TestHolderWeightsEdges(t *testing.T) {
	mem := func(b uint64) *profile.Workload { return &profile.Workload{Sharing: &profile.Sharing{MemoryBytes: b}} }
	milli := func(v string) *profile.Workload { return &profile.Workload{Labels: map[string]string{"gpu_milli": v}} }
	for _, c := range []struct {
		name     string
		holders  []*profile.Workload
		memTotal uint64
		want     string
	}{
		{"memory, no memTotal", []*profile.Workload{mem(40 << 30), mem(20 << 30)}, 0, "[0.5 0.5] even"},
		{"memory", []*profile.Workload{mem(40 << 30), mem(20 << 30)}, 80 << 30, "[0.5 0.25] requested"},
		{"milli 1 and 1000", []*profile.Workload{milli("1"), milli("1000")}, 0, "[0.000999000999 0.999000999] requested"},
		{"milli 0", []*profile.Workload{milli("0"), milli("500")}, 0, "[0.5 0.5] even"},
		{"milli 1001", []*profile.Workload{milli("1001"), milli("500")}, 0, "[0.5 0.5] even"},
	} {
		w, b := holderWeights(c.holders, c.memTotal)
		for i := range w {
			w[i] = sig(w[i])
		}
		if got := fmt.Sprint(w, " ", b); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// TestSharedMIGDeviceBasis: the "measured" case of TestSharedGPUSplitByHand
// on a 3g MIG device: every figure, the basis hours too, is 3/7 of the
// GPU's.
func TestSharedMIGDeviceBasis(t *testing.T) {
	n := sharedNode(true, nil, nil)
	n.gpus[0].uuid, n.gpus[0].mig = "MIG-0", &profile.MIG{ParentUUID: "GPU-p", Profile: "3g.40gb", GI: 1}
	for i := range n.workloads {
		n.workloads[i].GPUs, n.workloads[i].GPUUUIDs = nil, []string{"MIG-0"}
	}
	a := sharedReport(t, n)["ns/a"]
	const h = 3.0 / 7 / 3600
	near(t, "a held", a.HeldGPUHours, (225+150)*h)
	if a.Basis != "mixed" {
		t.Fatalf("basis %q", a.Basis)
	}
	near(t, "a measured", a.BasisGPUHours["measured"], 225*h)
	near(t, "a even", a.BasisGPUHours["even"], 150*h)
}
