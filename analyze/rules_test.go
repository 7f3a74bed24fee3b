package analyze

import (
	"strings"
	"testing"

	"github.com/seedance/seedance/profile"
)

var null = profile.Null

// oneGPU analyzes a single-GPU, single-node profile with interval 1 s.
func oneGPU(t *testing.T, g gpuSpec, dur float64) (*Report, *NodeReport) {
	t.Helper()
	g.uuid = "GPU-a"
	r := mustAnalyze(t, DefaultParams(), mkProfile(t, t0, dur, 1, nodeSpec{name: "n1", gpus: []gpuSpec{g}}))
	return r, nodeByName(r, "n1")
}

func TestIdleRunWindowBoundary(t *testing.T) {
	tests := []struct {
		name      string
		idle      int // idle samples at the start, then busy
		wantIdleS float64
	}{
		{"window minus one second", 59, 0},
		{"exactly the window", 60, 60},
		{"window plus one", 61, 61},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := 100
			r, node := oneGPU(t, gpuSpec{t: steps(0, n), util: cat(fill(0, tt.idle), fill(80, n-tt.idle))}, 100)
			near(t, "idle GPU-hours", *r.Summary.IdleGPUHours, tt.wantIdleS/3600)
			near(t, "idle ratio", *r.Summary.IdleRatio, tt.wantIdleS/100)
			if got := len(node.IdleIntervals) > 0; got != (tt.wantIdleS > 0) {
				t.Errorf("node intervals %v", node.IdleIntervals)
			}
		})
	}
}

func TestThresholdIsStrict(t *testing.T) {
	r, _ := oneGPU(t, gpuSpec{t: steps(0, 120), util: fill(15, 120)}, 120)
	if *r.Summary.IdleGPUHours != 0 {
		t.Fatalf("utilization exactly at the threshold counted as idle: %v", *r.Summary.IdleGPUHours)
	}
	r, _ = oneGPU(t, gpuSpec{t: steps(0, 120), util: fill(14.999, 120)}, 120)
	near(t, "just below", *r.Summary.IdleGPUHours, 120.0/3600)
}

func TestNullEndsRun(t *testing.T) {
	// Idle 0..39, null at 40, idle 41..119: runs [0,40) (too short) and [41,120).
	util := cat(fill(0, 40), []float64{null}, fill(0, 79))
	r, node := oneGPU(t, gpuSpec{t: steps(0, 120), util: util}, 120)
	near(t, "idle hours", *r.Summary.IdleGPUHours, 79.0/3600)
	near(t, "observed hours", r.Summary.GPUHours, 120.0/3600)
	if len(node.IdleIntervals) != 1 || node.IdleIntervals[0] != (Interval{41, 120}) {
		t.Fatalf("intervals = %v", node.IdleIntervals)
	}
	// The null sample is observed time but not in the mean.
	nearPtr(t, "mean util", node.AvgGPUUtilPct, 0)
}

func TestGapEndsRun(t *testing.T) {
	// Samples 0..39, then 45..104: the jump of 6 s > 2 × 1 s is a gap.
	ts := cat(steps(0, 40), steps(45, 60))
	r, node := oneGPU(t, gpuSpec{t: ts, util: fill(0, 100)}, 105)
	near(t, "observed", r.Summary.GPUHours*3600, 100) // 39 s + 1 s, then 59 s + 1 s
	near(t, "idle", *r.Summary.IdleGPUHours*3600, 60) // [45,105); [0,40) is too short
	if len(node.IdleIntervals) != 1 || node.IdleIntervals[0] != (Interval{45, 105}) {
		t.Fatalf("intervals = %v", node.IdleIntervals)
	}
}

func TestStepOfExactlyTwoIntervalsIsNoGap(t *testing.T) {
	// 0..29, then 31..89: 31 − 29 = 2 = 2 × interval, so sample 29 covers [29,31).
	ts := cat(steps(0, 30), steps(31, 59))
	r, node := oneGPU(t, gpuSpec{t: ts, util: fill(3, 89)}, 90)
	near(t, "observed", r.Summary.GPUHours*3600, 90)
	near(t, "idle", *r.Summary.IdleGPUHours*3600, 90)
	if len(node.IdleIntervals) != 1 || node.IdleIntervals[0] != (Interval{0, 90}) {
		t.Fatalf("intervals = %v", node.IdleIntervals)
	}
}

func TestMeanUtilWeightedByCoverage(t *testing.T) {
	// t = 0, 1, 3 with interval 1: coverages 1, 2, 1.
	_, node := oneGPU(t, gpuSpec{t: []float64{0, 1, 3}, util: []float64{10, 90, 50}}, 4)
	nearPtr(t, "mean", node.AvgGPUUtilPct, (10*1+90*2+50*1)/4.0)
}

func TestNodeIntervalsIntersectGPUs(t *testing.T) {
	// GPU a idle [0,60), GPU b idle [60,120): each counts, the node never idles.
	a := gpuSpec{uuid: "GPU-a", t: steps(0, 120), util: cat(fill(0, 60), fill(90, 60))}
	b := gpuSpec{uuid: "GPU-b", t: steps(0, 120), util: cat(fill(90, 60), fill(0, 60))}
	r := mustAnalyze(t, DefaultParams(), mkProfile(t, t0, 120, 1, nodeSpec{name: "n1", gpus: []gpuSpec{a, b}}))
	n := nodeByName(r, "n1")
	near(t, "idle GPU-hours", *r.Summary.IdleGPUHours*3600, 120)
	if len(n.IdleIntervals) != 0 || n.Verdict != VerdictUnderused && n.Verdict != VerdictBusy {
		t.Fatalf("node intervals %v verdict %s", n.IdleIntervals, n.Verdict)
	}
	// Overlap of 70 s: GPU a idle [0,100), GPU b idle [30,120) → node [30,100).
	a.util = cat(fill(0, 100), fill(90, 20))
	b.util = cat(fill(90, 30), fill(0, 90))
	r = mustAnalyze(t, DefaultParams(), mkProfile(t, t0, 120, 1, nodeSpec{name: "n1", gpus: []gpuSpec{a, b}}))
	n = nodeByName(r, "n1")
	if len(n.IdleIntervals) != 1 || n.IdleIntervals[0] != (Interval{30, 100}) || n.Verdict != VerdictIdle {
		t.Fatalf("intervals %v verdict %s", n.IdleIntervals, n.Verdict)
	}
	// Overlap of 59 s (a idle [0,89), b [30,120)) is shorter than the window.
	a.util = cat(fill(0, 89), fill(90, 31))
	r = mustAnalyze(t, DefaultParams(), mkProfile(t, t0, 120, 1, nodeSpec{name: "n1", gpus: []gpuSpec{a, b}}))
	if n = nodeByName(r, "n1"); len(n.IdleIntervals) != 0 {
		t.Fatalf("59 s overlap kept: %v", n.IdleIntervals)
	}
}

func TestPendingMakesNodeStalled(t *testing.T) {
	g := gpuSpec{uuid: "GPU-a", t: steps(0, 120), util: fill(0, 120)}
	w := []profile.Workload{{ID: "ml/llama-7b-infer-x", Name: "llama-7b-infer-x", Kind: "pod", State: "pending", GPUCount: 1, Labels: map[string]string{"namespace": "ml"}}}
	r := mustAnalyze(t, DefaultParams(), mkProfile(t, t0, 120, 1,
		nodeSpec{name: "stalled", gpus: []gpuSpec{g}, workloads: w},
		nodeSpec{name: "idle", gpus: []gpuSpec{{uuid: "GPU-b", t: steps(0, 120), util: fill(0, 120)}}}))
	if v := nodeByName(r, "stalled").Verdict; v != VerdictStalled {
		t.Errorf("verdict %s, want stalled", v)
	}
	if v := nodeByName(r, "idle").Verdict; v != VerdictIdle {
		t.Errorf("verdict %s, want idle", v)
	}
	if r.Summary.StalledNodes != 1 || r.Summary.IdleNodes != 1 {
		t.Errorf("summary %+v", r.Summary)
	}
	var kinds []string
	for _, s := range r.Suggestions {
		kinds = append(kinds, s.Kind+":"+s.Node)
	}
	if strings.Join(kinds, ",") != "release-node:idle,rebind-pending:stalled" && strings.Join(kinds, ",") != "rebind-pending:stalled,release-node:idle" {
		t.Fatalf("suggestions %v", kinds)
	}
}

func TestEnergy(t *testing.T) {
	tests := []struct {
		name   string
		power  []float64
		energy []float64
		wantJ  float64
	}{
		{"counter", []float64{100, 100, 100}, []float64{1000, 1100, 1250}, 250},
		{"power only", []float64{100, 200, 300}, nil, 600}, // × 1 s each
		{"one counter reading falls back to power", []float64{100, 100, 100}, []float64{null, 5, null}, 300},
		{"counter with nulls", []float64{100, 100, 100}, []float64{1000, null, 1300}, 300},
		{"counter reset skipped", []float64{1, 1, 1, 1}, []float64{1000, 1100, 5, 55}, 150},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := len(tt.power)
			p := DefaultParams()
			p.EnergyUSDPerKWh = 0.5
			r := mustAnalyze(t, p, mkProfile(t, t0, float64(n), 1, nodeSpec{name: "n", gpus: []gpuSpec{{uuid: "g", t: steps(0, n), util: fill(50, n), power: tt.power, energy: tt.energy}}}))
			near(t, "kWh", *r.Summary.EnergyKWh, tt.wantJ/3.6e6)
			near(t, "cost", *r.Summary.EnergyCostUSD, tt.wantJ/3.6e6*0.5)
		})
	}
}

func TestCostAndProjection(t *testing.T) {
	// Two H100s (default $4.916/h) and one unknown model (default $1.00/h),
	// over a 2-hour window at 60 s: H100 a idle for the whole window, the
	// unknown GPU idle for the first hour.
	n := 120
	a := gpuSpec{uuid: "a", t: steps(0, n), util: fill(0, n)}
	for i := range a.t {
		a.t[i] *= 60
	}
	b := gpuSpec{uuid: "b", t: a.t, util: fill(90, n)}
	c := gpuSpec{uuid: "c", model: "Acme Tensor 9000", t: a.t, util: cat(fill(0, 60), fill(90, 60))}
	p := DefaultParams()
	p.IdleWindow = 300 * 1e9
	r := mustAnalyze(t, p, mkProfile(t, t0, 7200, 60, nodeSpec{name: "n1", gpus: []gpuSpec{a, b, c}}))
	near(t, "idle hours", *r.Summary.IdleGPUHours, 3)
	near(t, "idle cost", *r.Summary.IdleCostUSD, 2*4.916+1*1.0)
	near(t, "projected", *r.Summary.ProjectedMonthlySavingsUSD, (2*4.916+1.0)/2*730)
	near(t, "gpu hours", r.Summary.GPUHours, 6)
	near(t, "idle ratio", *r.Summary.IdleRatio, 0.5)
	if got := strings.Join(r.Params.DefaultPricesUsed, ","); got != "H100" {
		t.Errorf("default prices used = %q", got)
	}
	if got := strings.Join(r.Params.UnpricedModelsUsed, ","); got != "Acme Tensor 9000" || len(r.Warnings) != 1 {
		t.Errorf("unpriced = %q, warnings %v", got, r.Warnings)
	}
}

func TestMergedInputs(t *testing.T) {
	// Two consecutive one-minute profiles of the same GPU: one 120 s idle run
	// across the boundary, a 120 s window.
	g := gpuSpec{uuid: "GPU-a", t: steps(0, 60), util: fill(0, 60)}
	first := mkProfile(t, t0, 60, 1, nodeSpec{name: "n1", gpus: []gpuSpec{g}})
	second := mkProfile(t, t0.Add(60e9), 60, 1, nodeSpec{name: "n1", gpus: []gpuSpec{g}})
	other := mkProfile(t, t0, 120, 1, nodeSpec{name: "n2", gpus: []gpuSpec{{uuid: "GPU-b", t: steps(0, 120), util: fill(70, 120)}}})
	// Given newest first: inputs are ordered by started_at.
	r := mustAnalyze(t, DefaultParams(), second, other, first)
	n := nodeByName(r, "n1")
	if len(n.IdleIntervals) != 1 || n.IdleIntervals[0] != (Interval{0, 120}) {
		t.Fatalf("intervals %v", n.IdleIntervals)
	}
	if r.Window.DurationS != 120 || r.Summary.Nodes != 2 || r.Summary.GPUs != 2 {
		t.Fatalf("window %v summary %+v", r.Window, r.Summary)
	}
	// The same profile twice overlaps itself.
	if _, err := analyzeDocs(t, DefaultParams(), first, first); err == nil || !strings.Contains(err.Error(), "inputs overlap") {
		t.Fatalf("overlap: %v", err)
	}
}

func TestMIGDevicesStandForParent(t *testing.T) {
	parent := gpuSpec{uuid: "GPU-p", model: "NVIDIA A100-SXM4-40GB", t: steps(0, 120), power: fill(100, 120)}
	m1 := gpuSpec{uuid: "MIG-1", model: "NVIDIA A100-SXM4-40GB", t: steps(0, 120), util: fill(0, 120), mig: &profile.MIG{ParentUUID: "GPU-p", Profile: "3g.20gb"}}
	m2 := gpuSpec{uuid: "MIG-2", model: "NVIDIA A100-SXM4-40GB", t: steps(0, 120), util: fill(80, 120), mig: &profile.MIG{ParentUUID: "GPU-p", Profile: "4g.20gb"}}
	r := mustAnalyze(t, DefaultParams(), mkProfile(t, t0, 120, 1, nodeSpec{name: "n", gpus: []gpuSpec{parent, m1, m2}}))
	if r.Summary.GPUs != 1 {
		t.Fatalf("gpus = %d, want the one physical GPU", r.Summary.GPUs)
	}
	near(t, "gpu hours", r.Summary.GPUHours*3600, 120)       // 3/7 + 4/7 of 120 s
	near(t, "idle", *r.Summary.IdleGPUHours*3600, 120*3.0/7) // the 3g slice
	near(t, "cost", *r.Summary.IdleCostUSD, 120.0/3600*1.844*3/7)
	near(t, "energy from the parent", *r.Summary.EnergyKWh, 100*120/3.6e6)
}
