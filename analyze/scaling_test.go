package analyze

import (
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/seedance/seedance/profile"
)

func repeat(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func repeatInt(v, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func catInts(parts ...[]int) []int {
	var out []int
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// TestWMAReplay: 8 GPUs; demand 1 GPU for 10 periods, then 4.
// Down: utilization 12.5% < 30% for 5 periods → ceil(1/0.7) = 2 GPUs from
// period 5. Up: at 2 GPUs, 4 busy is 200%; the WMA passes 77% at once, three
// periods later → ceil(4/0.7) = 6 GPUs from period 13; periods 10–12 are
// under-provisioned.
func TestWMAReplay(t *testing.T) {
	demand := append(repeat(1, 10), repeat(4, 6)...)
	p := replayWMA(demand, 8, DefaultScaling())
	want := catInts(repeatInt(8, 5), repeatInt(2, 8), repeatInt(6, 3))
	if !reflect.DeepEqual(p.Capacity, want) || p.ScaleEvents != 2 || p.UnderProvisioned != 3 {
		t.Fatalf("capacity %v events %d under %d", p.Capacity, p.ScaleEvents, p.UnderProvisioned)
	}
	pool := ScalingPool{StaticGPUH: 8 * 16 / 60.0, PricePerGPU: 3}
	f := finishPolicy(p, pool, 60)
	if math.Abs(f.ProvisionedGPUH-74/60.0) > 1e-6 || math.Abs(f.SavingUSD-3*(128-74)/60.0) > 1e-6 {
		t.Fatalf("provisioned %v saving $%v", f.ProvisionedGPUH, f.SavingUSD)
	}
}

// TestHPAReplay: the same demand under the HPA rule. Scale-down waits for
// five periods (300 s) of lower recommendations; scale-up is immediate:
// at period 10, 200% → ceil(2 × 2.857) = 6.
func TestHPAReplay(t *testing.T) {
	demand := append(repeat(1, 10), repeat(4, 6)...)
	p := replayHPA(demand, 8, DefaultScaling(), 60)
	want := catInts(repeatInt(8, 5), repeatInt(2, 6), repeatInt(6, 5))
	if !reflect.DeepEqual(p.Capacity, want) || p.ScaleEvents != 2 || p.UnderProvisioned != 1 {
		t.Fatalf("capacity %v events %d under %d", p.Capacity, p.ScaleEvents, p.UnderProvisioned)
	}
	// Within the tolerance (70% ± 10%) nothing changes.
	p = replayHPA(repeat(5.2, 10), 7, DefaultScaling(), 60) // 74%
	if p.ScaleEvents != 0 {
		t.Fatalf("scaled within the tolerance: %v", p.Capacity)
	}
}

func TestCompositeSignal(t *testing.T) {
	s := &profile.Series{T: profile.Values{0, 1, 2}, GPUUtilPct: profile.Values{50, 50, profile.Null},
		MemBWUtilPct: profile.Values{100, profile.Null, 20}, SMActivePct: profile.Values{10, 10, 10}}
	w := DefaultScaling().Weights
	for i, want := range []float64{0.6*50 + 0.4*100, 50, 20} {
		if got := composite(s, i, w, false); math.Abs(got-want) > 1e-9 {
			t.Errorf("composite[%d] = %v, want %v", i, got, want)
		}
	}
	if got := composite(s, 0, w, true); math.Abs(got-(0.6*10+0.4*100)) > 1e-9 {
		t.Errorf("sm_active not preferred: %v", got)
	}
}

// TestScalingSection: a 4-GPU pool whose GPUs run at 50% for 10 minutes.
func TestScalingSection(t *testing.T) {
	var gpus []gpuSpec
	for i := 0; i < 4; i++ {
		g := gpuSpec{uuid: "GPU-" + string(rune('a'+i)), t: steps(0, 600), util: fill(50, 600)}
		gpus = append(gpus, g)
	}
	doc := mkProfile(t, t0, 600, 1, nodeSpec{name: "n1", gpus: gpus})
	// The profile has no memory-bandwidth column: the weights renormalise
	// to gpu_util alone, so demand is 4 × 0.5 = 2 GPUs.
	p := DefaultParams()
	sp := DefaultScaling()
	sp.Period = time.Minute
	p.Scaling = &sp
	r := mustAnalyze(t, p, doc)
	if r.Scaling == nil || len(r.Scaling.Pools) != 1 {
		t.Fatalf("scaling %+v", r.Scaling)
	}
	pool := r.Scaling.Pools[0]
	if pool.Pool != "H100 80GB HBM3" || pool.GPUs != 4 || len(pool.Demand) != 10 || pool.Demand[3] != 2 {
		t.Fatalf("pool %+v", pool)
	}
	// 2 of 4 busy is 50%: between 30% and 77%, so nothing scales.
	if pool.WMA.ScaleEvents != 0 || pool.WMA.ProvisionedGPUH != pool.StaticGPUH {
		t.Fatalf("wma %+v", pool.WMA)
	}
}

// TestScalingMIGDemand: a GPU split into MIG devices counts in the pool's
// demand once, by its own series (the physical GPU's load), not again
// through its devices: the GPU at 100 %, its 3g and 4g devices at 100 % and
// 50 %, for ten minutes: a demand of 1 GPU in every period.
func TestScalingMIGDemand(t *testing.T) {
	ts := every10(60) // 10 s samples: each counts its 10 s
	gpus := []gpuSpec{
		{uuid: "GPU-p", t: ts, util: fill(100, 60)},
		{uuid: "MIG-1", t: ts, util: fill(100, 60), mig: &profile.MIG{ParentUUID: "GPU-p", Profile: "3g.40gb", GI: 1}},
		{uuid: "MIG-2", t: ts, util: fill(50, 60), mig: &profile.MIG{ParentUUID: "GPU-p", Profile: "4g.40gb", GI: 2}},
	}
	p := DefaultParams()
	sp := DefaultScaling()
	sp.Period = time.Minute
	p.Scaling = &sp
	r := mustAnalyze(t, p, mkProfile(t, t0, 600, 10, nodeSpec{name: "n1", gpus: gpus}))
	if r.Scaling == nil || len(r.Scaling.Pools) != 1 {
		t.Fatalf("scaling %+v", r.Scaling)
	}
	if got := fmt.Sprint(r.Scaling.Pools[0].Demand); got != "[1 1 1 1 1 1 1 1 1 1]" {
		t.Fatalf("demand %s", got)
	}
}

// TestWMAReplayEdges: the WMA autoscaler's rule at its edges, one period
// to scale either way, α 0.5, a pool of 10 that may grow to 20 (each
// worked by hand; util is 100 × demand / capacity):
//
//   - the first period's WMA is its utilization: 5 GPUs of 10 (50 %) hold;
//   - 7.5 of 10 (75 %) is inside target × 1.1 = 77 %: no scale-up;
//   - 5 then 9 then 9: WMA 50, 70, 80: up at the third, to ⌈9 / 0.7⌉ = 13;
//   - 3 of 10 is exactly the 30 % lower bound: no scale-down;
//   - 1.4 of 10 (14 %): down to ⌈1.4 / 0.7⌉ = 2, not 3 (1.4 / 0.7 is a hair over 2);
//   - a demand of exactly the capacity is not under-provisioned (at 100 %
//     it scales up to ⌈10 / 0.7⌉ = 15); one a half GPU over it is.
func TestWMAReplayEdges(t *testing.T) {
	sp := DefaultScaling()
	sp.Alpha, sp.UpPeriods, sp.DownPeriods, sp.MaxGPUs = 0.5, 1, 1, 20
	checkReplays(t, func(d []float64) Policy { return replayWMA(d, 10, sp) }, []replayCase{
		{[]float64{5, 5}, []int{10, 10}, 0},
		{[]float64{7.5, 7.5}, []int{10, 10}, 0},
		{[]float64{5, 9, 9, 9}, []int{10, 10, 10, 13}, 0},
		{[]float64{3, 3}, []int{10, 10}, 0},
		{[]float64{1.4, 1.4}, []int{10, 2}, 0},
		{[]float64{10, 10.5}, []int{10, 15}, 0},
		{[]float64{10.5}, []int{10}, 1},
	})
}

// replayCase is a demand, the capacity a replay should give it period by
// period, and its under-provisioned periods.
type replayCase struct {
	demand []float64
	want   []int
	under  int
}

func checkReplays(t *testing.T, replay func([]float64) Policy, cases []replayCase) {
	t.Helper()
	for _, c := range cases {
		p := replay(c.demand)
		if !reflect.DeepEqual(p.Capacity, c.want) || p.UnderProvisioned != c.under {
			t.Errorf("demand %v: capacity %v, under %d; want %v, %d", c.demand, p.Capacity, p.UnderProvisioned, c.want, c.under)
		}
	}
}

// TestHPAReplayEdges: the HPA rule at its edges, target 50 %, tolerance
// 0.5, a pool of 10 that may grow to 30: a ratio of exactly 1.5 is inside
// the tolerance; 1.2 is well inside it; a ratio of 2 asks for ⌈10 × 2⌉ =
// 20, not 21; a demand of exactly the capacity is not under-provisioned,
// one a half GPU over it is.
func TestHPAReplayEdges(t *testing.T) {
	sp := DefaultScaling()
	sp.TargetPct, sp.HPATolerance, sp.MaxGPUs = 50, 0.5, 30
	checkReplays(t, func(d []float64) Policy { return replayHPA(d, 10, sp, 60) }, []replayCase{
		{[]float64{7.5, 7.5}, []int{10, 10}, 0},
		{[]float64{6, 6}, []int{10, 10}, 0},
		{[]float64{10, 10}, []int{10, 20}, 0},
		{[]float64{10.5}, []int{10}, 1},
	})
}
