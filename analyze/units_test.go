package analyze

import (
	"math"
	"strings"
	"testing"

	"github.com/seedance/seedance/pricing"
	"github.com/seedance/seedance/profile"
)

// unitPod is a running pod of namespace ml holding gpus, with counters.
func unitPod(name string, gpus []int, work ...profile.Work) profile.Workload {
	return profile.Workload{ID: "ml/" + name, Name: name, Kind: profile.KindPod, State: profile.StateRunning, GPUs: gpus,
		Labels: map[string]string{"namespace": "ml"}, Work: work}
}

func counter(unit string, t, v []float64) profile.Work {
	return profile.Work{Unit: unit, Model: "m", Series: unit + "_total", T: t, V: v}
}

// unitsReport analyzes the worked example of docs/units.md: 120 s, a
// sample every 10 s, every GPU at $3.60/h ($0.001 a second).
//
//   - ml/tp, tensor-parallel on GPUs 0–3 at 50 %, 100 W each: its output
//     tokens read 1000 at −10 s and 0 s, then 100 more every 10 s: 1,100
//     tokens in the window; $0.48 held, 48,000 J.
//   - ml/r on GPU 4, idle all along, no power reading: requests 50, 80,
//     then 10 (a restart), 40 at 0, 30, 60, 90 s: 30 + 10 + 30 = 70; $0.12,
//     all of it idle; energy unmeasured.
//   - ml/a and ml/b share GPU 5 at 80 % (half each, $0.06): a counts
//     120 requests, b's counter never moves (no traffic).
func unitsReport(t *testing.T) *Report {
	steps := every10(12)
	tokens := []float64{1000, 1000}
	for i := 1; i <= 11; i++ {
		tokens = append(tokens, 1000+100*float64(i))
	}
	ws := []profile.Workload{
		unitPod("tp", []int{0, 1, 2, 3}, counter(profile.UnitOutputTokens, append([]float64{-10}, steps...), tokens)),
		unitPod("r", []int{4}, counter(profile.UnitRequests, []float64{0, 30, 60, 90}, []float64{50, 80, 10, 40})),
		unitPod("a", []int{5}, counter(profile.UnitRequests, []float64{0, 60, 110}, []float64{0, 60, 120})),
		unitPod("b", []int{5}, counter(profile.UnitRequests, []float64{0, 60, 110}, []float64{5, 5, 5})),
	}
	var gpus []gpuSpec
	for i := range 4 {
		gpus = append(gpus, gpuSpec{uuid: "GPU-" + string(rune('0'+i)), model: "TestGPU", t: steps, util: fill(50, 12), power: fill(100, 12)})
	}
	gpus = append(gpus, gpuSpec{uuid: "GPU-4", model: "TestGPU", t: steps, util: fill(0, 12)}, gpuSpec{uuid: "GPU-5", model: "TestGPU", t: steps, util: fill(80, 12), power: fill(200, 12)})
	p := DefaultParams()
	p.Pricer = pricing.New(nil, 3.6)
	p.Attribution = &AttributionParams{GroupBy: []string{"namespace"}, UnitsOnly: true}
	return mustAnalyze(t, p, mkProfile(t, t0, 120, 10, nodeSpec{name: "n", gpus: gpus, workloads: ws}))
}

// nearly says whether got is want to 9 significant digits.
func nearly(got *float64, want float64) bool {
	return got != nil && math.Abs(*got-want) <= 1e-8*math.Max(1, math.Abs(want))
}

// TestUnitsHandComputed checks every figure of the worked example, per
// workload, per group and for the fleet.
func TestUnitsHandComputed(t *testing.T) {
	r := unitsReport(t)
	if r.Attribution != nil {
		t.Error("UnitsOnly wrote an attribution section")
	}
	rows := map[string]map[string]UnitFigures{}
	for _, w := range r.UnitWorkloads {
		rows[w.Workload] = w.Units
	}
	tp := rows["ml/tp"][profile.UnitOutputTokens]
	if !nearly(tp.Work, 1100) || tp.CostUSD != 0.48 || tp.HeldGPUHours != sig(480.0/3600) || !nearly(tp.USDPer, 0.48/1100*1e6) ||
		!nearly(tp.EnergyKWh, 48000/3.6e6) || !nearly(tp.KWhPer, 48000/3.6e6/1100*1e6) || !nearly(tp.IdleUSDPer, 0) || !nearly(tp.IdleShare, 0) || tp.Per != 1e6 {
		t.Errorf("ml/tp: %+v", show(tp))
	}
	rr := rows["ml/r"][profile.UnitRequests]
	if !nearly(rr.Work, 70) || rr.CostUSD != 0.12 || !nearly(rr.USDPer, 0.12/70*1000) || !nearly(rr.IdleShare, 1) || !nearly(rr.BusyUSDPer, 0) ||
		rr.EnergyKWh != nil || rr.KWhPer != nil || rr.Per != 1e3 {
		t.Errorf("ml/r (a restart, no energy): %+v", show(rr))
	}
	a := rows["ml/a"][profile.UnitRequests]
	if !nearly(a.Work, 120) || a.CostUSD != 0.06 || !nearly(a.USDPer, 0.5) || !nearly(a.EnergyKWh, 0.5*200*120/3.6e6) {
		t.Errorf("ml/a (half a shared GPU): %+v", show(a))
	}
	b := rows["ml/b"][profile.UnitRequests]
	if !nearly(b.Work, 0) || b.CostUSD != 0.06 || b.USDPer != nil || b.KWhPer != nil || b.IdleShare != nil {
		t.Errorf("ml/b (no traffic): %+v", show(b))
	}
	if len(r.UnitGroups) != 1 || strings.Join(r.UnitGroups[0].Key, "/") != "ml" {
		t.Fatalf("groups %+v", r.UnitGroups)
	}
	g := r.UnitGroups[0].Units[profile.UnitRequests]
	if g.Workloads != 3 || !nearly(g.Work, 190) || !nearly(&g.CostUSD, 0.24) || !nearly(g.USDPer, 0.24/190*1000) || !nearly(g.IdleShare, 0.5) ||
		!nearly(g.IdleUSDPer, 0.12/190*1000) || g.EnergyKWh != nil {
		t.Errorf("group ml, requests: %+v", show(g))
	}
	if f := r.Units[profile.UnitOutputTokens]; !nearly(f.USDPer, 0.48/1100*1e6) || f.Workloads != 1 {
		t.Errorf("fleet output tokens: %+v", show(f))
	}
	if len(r.UnitModels) != 1 || r.UnitModels[0].Key[0] != "m" || !nearly(r.UnitModels[0].Units[profile.UnitRequests].Work, 190) {
		t.Errorf("by model: %+v", r.UnitModels)
	}
}

// show is a unit figure with its pointers read.
func show(f UnitFigures) map[string]any {
	out := map[string]any{"cost": f.CostUSD, "held": f.HeldGPUHours, "per": f.Per, "workloads": f.Workloads}
	for k, p := range map[string]*float64{"work": f.Work, "usd_per": f.USDPer, "idle_usd_per": f.IdleUSDPer, "busy": f.BusyUSDPer,
		"idle_share": f.IdleShare, "kwh": f.EnergyKWh, "kwh_per": f.KWhPer} {
		if p == nil {
			out[k] = nil
		} else {
			out[k] = *p
		}
	}
	return out
}

// TestUnitsCannotBeTrusted: a negative reading, a rise no GPU could
// serve, two series of one unit on one pod: each a warning naming the
// series and null figures, never a plausible number; a counter of a pod
// that holds no GPU is left out with a warning.
func TestUnitsCannotBeTrusted(t *testing.T) {
	steps := []float64{0, 60, 110}
	cases := map[string]profile.Workload{
		"reads -5 at 60":            unitPod("neg", []int{0}, counter(profile.UnitRequests, steps, []float64{0, -5, 10})),
		"more than 100000 a second": unitPod("fast", []int{0}, counter(profile.UnitOutputTokens, steps, []float64{0, 1e9, 1e9})),
		"both count requests of m": unitPod("two", []int{0}, counter(profile.UnitRequests, steps, []float64{0, 1, 2}),
			profile.Work{Unit: profile.UnitRequests, Model: "m", Series: "other_total", T: steps, V: []float64{0, 1, 2}}),
	}
	for want, w := range cases {
		p := DefaultParams()
		p.Attribution = &AttributionParams{GroupBy: []string{"namespace"}}
		orphan := unitPod("orphan", nil, counter(profile.UnitRequests, steps, []float64{0, 1, 2}))
		r := mustAnalyze(t, p, mkProfile(t, t0, 120, 10, nodeSpec{name: "n", workloads: []profile.Workload{w, orphan},
			gpus: []gpuSpec{{uuid: "GPU-0", t: every10(12), util: fill(50, 12)}}}))
		warn := strings.Join(r.Warnings, "\n")
		if !strings.Contains(warn, want) || !strings.Contains(warn, "ml/orphan on n") {
			t.Errorf("%s: warnings %q", want, warn)
		}
		for unit, f := range r.Units {
			if f.Work != nil || f.USDPer != nil || f.Workloads != 1 {
				t.Errorf("%s: fleet %s %+v", want, unit, show(f))
			}
		}
	}
}
