package analyze

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/pricing"
	"github.com/seedance/seedance/profile"
)

// TestCutHandComputed: an analysis cut into [0, 30), [30, 90) and
// [90, 120) s, worked by hand. GPU-0 ($3.60/h: $0.001/s) is at 0 % for
// the first minute (one counted idle run, [0, 60)) and at 50 % after;
// its energy counter rises 1000 J at each reading from 10 s (a reading
// at a piece's start is in that piece). Pod a/p holds it for [0, 60).
//
//	piece 0: observed 30, idle 30, util 0 over 30, $0.03, 2000 J; a/p holds all of it.
//	piece 1: observed 60, idle 30, util 15 over 60, $0.03, 6000 J; a/p holds
//	         [30, 60) (idle, 3000 J), nobody [60, 90) (used 15, 3000 J).
//	piece 2: observed 30, util 15 over 30, 3000 J, all nobody's; a/p holds none.
//
// GPU-1 (another model), at 80 % drawing 100 W and held by nobody, has its
// power × coverage in each piece: 3000, 6000 and 3000 J.
func TestCutHandComputed(t *testing.T) {
	ts := every10(12)
	energy := make([]float64, 12)
	for i := range energy {
		energy[i] = 1000 * float64(i)
	}
	pod := profile.Workload{ID: "a/p", Name: "p", Kind: profile.KindPod, State: profile.StateRunning, GPUs: []int{0},
		Labels: map[string]string{"namespace": "a", "squad": "x"}, Intervals: []profile.Tenure{{StartS: 0, EndS: 60}}}
	doc := mkProfile(t, t0, 120, 10, nodeSpec{name: "n", workloads: []profile.Workload{pod}, gpus: []gpuSpec{
		{uuid: "GPU-0", model: "TestGPU", t: ts, util: cat(fill(0, 6), fill(50, 6)), energy: energy},
		{uuid: "GPU-1", model: "TestGPU-P", t: ts, util: fill(80, 12), power: fill(100, 12)}}})
	p := DefaultParams()
	p.Pricer = pricing.New(nil, 3.6)
	p.Attribution = &AttributionParams{GroupBy: []string{"team=squad"}}
	at := []time.Time{t0, t0.Add(30 * time.Second), t0.Add(90 * time.Second), t0.Add(120 * time.Second)}
	c, err := Cut(context.Background(), sourcesOf(t, doc), p, at)
	if err != nil {
		t.Fatal(err)
	}
	var gpus []string
	for _, g := range c.GPUs {
		gpus = append(gpus, fmt.Sprintf("%d %s obs %.6g idle %.6g util %.6g/%.6g $%.6g %.6g J", g.Piece, g.Model, g.ObservedS, g.IdleS, g.UtilS, g.UtilCoveredS, g.CostUSD, g.EnergyJ))
	}
	want := []string{
		"0 TestGPU obs 30 idle 30 util 0/30 $0.03 2000 J",
		"0 TestGPU-P obs 30 idle 0 util 24/30 $0 3000 J",
		"1 TestGPU obs 60 idle 30 util 15/60 $0.03 6000 J",
		"1 TestGPU-P obs 60 idle 0 util 48/60 $0 6000 J",
		"2 TestGPU obs 30 idle 0 util 15/30 $0 3000 J",
		"2 TestGPU-P obs 30 idle 0 util 24/30 $0 3000 J",
	}
	sameLines(t, "GPU rows", gpus, want)
	var holds []string
	for _, h := range c.Holds {
		who := "nobody"
		if h.Workload != nil {
			who = h.Workload.ID + " squad=" + h.Workload.Labels["squad"]
		}
		holds = append(holds, fmt.Sprintf("%d %s held %.6g used %.6g idle %.6g $%.6g %.6g J", h.Piece, who, h.HeldS, h.UsedS, h.IdleS, h.CostUSD, h.EnergyJ))
	}
	want = []string{
		"0 a/p squad=x held 30 used 0 idle 30 $0.03 2000 J",
		"0 nobody held 30 used 24 idle 0 $0 3000 J",
		"1 nobody held 30 used 15 idle 0 $0 3000 J",
		"1 a/p squad=x held 30 used 0 idle 30 $0.03 3000 J",
		"1 nobody held 60 used 48 idle 0 $0 6000 J",
		"2 nobody held 30 used 15 idle 0 $0 3000 J",
		"2 nobody held 30 used 24 idle 0 $0 3000 J",
	}
	sameLines(t, "holds", holds, want)
	// Without attribution settings a cut still splits by workload.
	p.Attribution = nil
	c, err = Cut(context.Background(), sourcesOf(t, doc), p, at)
	if err != nil || len(c.Holds) != 7 || c.Holds[0].Workload == nil || c.Holds[0].HeldS != 30 {
		t.Fatalf("without attribution settings: %v, %+v", err, c.Holds)
	}
}

// TestCutCounterAfterPower: a GPU drawing 100 W whose energy counter has
// its first reading at 40 s (0 J), then rises 500 J every 10 s. With two
// readings the counter is the rule, for the whole window: the power read
// before it counts for nothing. Pieces [0, 30), [30, 90), [90, 120):
// 0 J, the increases read at 50–80 s (2000 J), those at 90–110 s (1500 J).
func TestCutCounterAfterPower(t *testing.T) {
	n := math.NaN()
	energy := []float64{n, n, n, n, 0, 500, 1000, 1500, 2000, 2500, 3000, 3500}
	doc := mkProfile(t, t0, 120, 10, nodeSpec{name: "n", gpus: []gpuSpec{
		{uuid: "GPU-0", model: "TestGPU", t: every10(12), util: fill(50, 12), power: fill(100, 12), energy: energy}}})
	at := []time.Time{t0, t0.Add(30 * time.Second), t0.Add(90 * time.Second), t0.Add(120 * time.Second)}
	c, err := Cut(context.Background(), sourcesOf(t, doc), DefaultParams(), at)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range c.GPUs {
		got = append(got, fmt.Sprintf("%d %.6g J", g.Piece, g.EnergyJ))
	}
	if want := "0 0 J, 1 2000 J, 2 1500 J"; strings.Join(got, ", ") != want {
		t.Fatalf("pieces %s, want %s", strings.Join(got, ", "), want)
	}
}

// TestCutAcrossAGap: a GPU at 50 % drawing 100 W for [0, 60), unobserved
// for [60, 120), at 50 % again for [120, 180): a cut at 90 s counts 60
// observed seconds and 30 GPU-seconds used on each side; the gap is
// covered by neither. Pod a/p holds it for [0, 150): 30 GPU-seconds used
// and 6000 J in the first piece, 15 and 3000 J of [120, 150) in the
// second, nobody the 15 and 3000 J of [150, 180); the gap counts nothing.
func TestCutAcrossAGap(t *testing.T) {
	ts := []float64{0, 10, 20, 30, 40, 50, 120, 130, 140, 150, 160, 170}
	pod := profile.Workload{ID: "a/p", Name: "p", Kind: profile.KindPod, State: profile.StateRunning, GPUs: []int{0}, Intervals: []profile.Tenure{{StartS: 0, EndS: 150}}}
	doc := mkProfile(t, t0, 180, 10, nodeSpec{name: "n", workloads: []profile.Workload{pod}, gpus: []gpuSpec{{uuid: "GPU-0", model: "TestGPU", t: ts, util: fill(50, 12), power: fill(100, 12)}}})
	at := []time.Time{t0, t0.Add(90 * time.Second), t0.Add(180 * time.Second)}
	c, err := Cut(context.Background(), sourcesOf(t, doc), DefaultParams(), at)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range c.GPUs {
		got = append(got, fmt.Sprintf("%d obs %.6g util %.6g/%.6g", g.Piece, g.ObservedS, g.UtilS, g.UtilCoveredS))
	}
	if want := "0 obs 60 util 30/60, 1 obs 60 util 30/60"; strings.Join(got, ", ") != want {
		t.Fatalf("pieces %s, want %s", strings.Join(got, ", "), want)
	}
	got = nil
	for _, h := range c.Holds {
		who := "nobody"
		if h.Workload != nil {
			who = h.Workload.ID
		}
		got = append(got, fmt.Sprintf("%d %s used %.6g %.6g J", h.Piece, who, h.UsedS, h.EnergyJ))
	}
	if want := "0 a/p used 30 6000 J, 1 nobody used 15 3000 J, 1 a/p used 15 3000 J"; strings.Join(got, ", ") != want {
		t.Fatalf("holds %s, want %s", strings.Join(got, ", "), want)
	}
}

// TestCutMIGAndRepeatedTime: a cut time given twice makes an empty piece,
// with no rows. A 3g MIG device (3/7 of a $7/h GPU: $3/h) at 10 %, idle,
// drawing 70 W, held by two pods, in two pieces of 60 s: each piece's GPU
// row has 60 × 3/7 s observed and idle, 6 × 3/7 GPU-s used, $0.05 and
// 4200 J; each pod holds half of it, and half the energy.
func TestCutMIGAndRepeatedTime(t *testing.T) {
	pod := func(id string) profile.Workload {
		return profile.Workload{ID: id, Name: id, Kind: profile.KindPod, State: profile.StateRunning, GPUUUIDs: []string{"MIG-1"}}
	}
	doc := mkProfile(t, t0, 120, 10, nodeSpec{name: "n", workloads: []profile.Workload{pod("a/p"), pod("a/q")}, gpus: []gpuSpec{
		{uuid: "MIG-1", model: "TestGPU", t: every10(12), util: fill(10, 12), power: fill(70, 12), mig: &profile.MIG{ParentUUID: "GPU-p", Profile: "3g.40gb", GI: 1}}}})
	p := DefaultParams()
	p.Pricer = pricing.New(nil, 7)
	at := []time.Time{t0, t0.Add(60 * time.Second), t0.Add(60 * time.Second), t0.Add(120 * time.Second)}
	c, err := Cut(context.Background(), sourcesOf(t, doc), p, at)
	if err != nil {
		t.Fatal(err)
	}
	s := 60.0 * 3 / 7
	var got []string
	for _, g := range c.GPUs {
		got = append(got, fmt.Sprintf("%d obs %.6g idle %.6g util %.6g/%.6g $%.6g %.6g J", g.Piece, g.ObservedS, g.IdleS, g.UtilS, g.UtilCoveredS, g.CostUSD, g.EnergyJ))
	}
	for _, h := range c.Holds {
		got = append(got, fmt.Sprintf("%d %v held %.6g used %.6g idle %.6g $%.6g %.6g J", h.Piece, h.Workload != nil, h.HeldS, h.UsedS, h.IdleS, h.CostUSD, h.EnergyJ))
	}
	row := fmt.Sprintf("obs %.6g idle %.6g util %.6g/%.6g $0.05 4200 J", s, s, s/10, s)
	hold := fmt.Sprintf("true held %.6g used %.6g idle %.6g $0.025 2100 J", s/2, s/20, s/2)
	want := []string{"0 " + row, "2 " + row, "0 " + hold, "0 " + hold, "2 " + hold, "2 " + hold}
	sameLines(t, "rows", got, want)
}

// TestCutPieceWithoutSamples: GPUs seen only in the first of two pieces
// have no GPU row in the second; GPU-0's pod, which held it all along, has
// a row there all the same, of nothing observed; nobody's share of GPU-1,
// held by no pod, has none.
func TestCutPieceWithoutSamples(t *testing.T) {
	pod := profile.Workload{ID: "a/p", Name: "p", Kind: profile.KindPod, State: profile.StateRunning, GPUs: []int{0}}
	doc := mkProfile(t, t0, 120, 10, nodeSpec{name: "n", workloads: []profile.Workload{pod}, gpus: []gpuSpec{
		{uuid: "GPU-0", model: "TestGPU", t: every10(6), util: fill(50, 6)},
		{uuid: "GPU-1", model: "TestGPU-B", t: every10(6), util: fill(50, 6)}}})
	c, err := Cut(context.Background(), sourcesOf(t, doc), DefaultParams(), []time.Time{t0, t0.Add(60 * time.Second), t0.Add(120 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.GPUs) != 2 || c.GPUs[0].Piece != 0 || c.GPUs[1].Piece != 0 {
		t.Fatalf("GPU rows %+v", c.GPUs)
	}
	// Piece 0: the pod's and nobody's (GPU-1); piece 1: the pod's only.
	if len(c.Holds) != 3 || c.Holds[2].Piece != 1 || c.Holds[2].Workload == nil || c.Holds[2].HeldS != 0 {
		t.Fatalf("holds %+v", c.Holds)
	}
}

// sameLines fails the test when got and want differ, showing both.
func sameLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n%s\nwant\n%s", what, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestCutReadsLess: a cut reads no bandwidth (its rows have none), an
// analysis does; both read utilization, power and energy.
func TestCutReadsLess(t *testing.T) {
	p := DefaultParams()
	all, cut := Reads(p), CutReads(p)
	if !all[profile.MemBWUtilPct] || cut[profile.MemBWUtilPct] {
		t.Fatalf("bandwidth read by an analysis %v, by a cut %v", all[profile.MemBWUtilPct], cut[profile.MemBWUtilPct])
	}
	for _, m := range []profile.Metric{profile.GPUUtilPct, profile.PowerW, profile.EnergyJ} {
		if !cut[m] {
			t.Errorf("a cut does not read %v", m)
		}
	}
}
