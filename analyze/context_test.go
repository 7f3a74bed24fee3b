package analyze

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/seedance/seedance/profile"
)

// TestContextSamples: samples outside the profile's window count for
// nothing but fix the figures at its edges, by hand. A 5-minute window,
// one GPU scraped every 30 s from 60 s before it to 60 s after it; the
// energy counter gains 100 J an interval; utilization 5 % at −60, −30, 0
// and at 270, 300, 330, else 80 %.
//
//   - observed: [0, 300) = 300 s; the context's coverage is not counted.
//   - idle: the run [−60, 30) lasts 90 s, so it counts, for its 30 s in the
//     window; the run [270, 360) likewise: 60 s (without the context both
//     would be 30-second runs, not counted).
//   - energy: the increases read at 0, 30, …, 270: 10 × 100 J (the reading
//     at −30 is the baseline; the one at 300 is the next window's).
//   - mean utilization: (5 × 30 + 80 × 240 + 5 × 30) / 300 = 65 %.
func TestContextSamples(t *testing.T) {
	ts := steps(0, 14)
	util := make([]float64, len(ts))
	energy := make([]float64, len(ts))
	for i := range ts {
		ts[i] = -60 + 30*ts[i]
		util[i] = 80
		if ts[i] <= 0 || ts[i] >= 270 {
			util[i] = 5
		}
		energy[i] = 1000 + 100*float64(i)
	}
	ts, util, energy = ts[:len(ts)-1], util[:len(ts)-1], energy[:len(ts)-1] // the last at 330
	doc := withContext(t, mkProfile(t, t0, 300, 30, nodeSpec{name: "n1", gpus: []gpuSpec{{uuid: "GPU-a", t: ts, util: util, energy: energy}}}), 60)
	r := mustAnalyze(t, DefaultParams(), doc)
	near(t, "gpu_hours", r.Summary.GPUHours, 300.0/3600)
	nearPtr(t, "idle_gpu_hours", r.Summary.IdleGPUHours, 60.0/3600)
	nearPtr(t, "energy_kwh", r.Summary.EnergyKWh, 1000/3.6e6)
	nearPtr(t, "avg_gpu_util_pct", r.Summary.AvgGPUUtilPct, 65)
	n := nodeByName(r, "n1")
	if len(n.IdleIntervals) != 2 || n.IdleIntervals[0] != (Interval{0, 30}) || n.IdleIntervals[1] != (Interval{270, 300}) {
		t.Errorf("idle intervals %v, want [0, 30) and [270, 300)", n.IdleIntervals)
	}
}

// withContext is the profile document with context_s set: how far around
// its window its samples may lie.
func withContext(t *testing.T, doc []byte, contextS float64) []byte {
	t.Helper()
	if _, err := profile.Read(bytes.NewReader(doc)); err == nil || !strings.Contains(err.Error(), "more than its context") {
		t.Fatalf("a profile with samples outside its window and no context_s: %v", err)
	}
	var raw profile.Profile
	if err := json.Unmarshal(doc, &raw); err != nil {
		t.Fatal(err)
	}
	raw.ContextS = contextS
	var b bytes.Buffer
	if err := profile.Encode(&b, &raw); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestClaimOfAGPUTheNodeHasNot: a workload that names a GPU index its node
// does not report is said in the warnings, not dropped in silence.
func TestClaimOfAGPUTheNodeHasNot(t *testing.T) {
	ts := steps(0, 10)
	doc := mkProfile(t, t0, 10, 1, nodeSpec{name: "n1", gpus: []gpuSpec{{uuid: "GPU-a", t: ts, util: fill(50, 10)}},
		workloads: []profile.Workload{{ID: "ml/p", Kind: profile.KindPod, GPUs: []int{0, 9}}}})
	r := mustAnalyze(t, DefaultParams(), doc)
	if got := strings.Join(r.Warnings, "\n"); !strings.Contains(got, "1 workload claim(s) name a GPU their node does not report") || !strings.Contains(got, "ml/p on node n1: GPU index 9") {
		t.Errorf("warnings %q", r.Warnings)
	}
}

// TestEnergyCounterFault: a step of the energy counter no GPU could draw
// over its time (1e12 J in 30 s) is left out and warned of, not reported
// as 2.8e5 kWh; the steps around it count.
func TestEnergyCounterFault(t *testing.T) {
	ts := []float64{0, 30, 60, 90}
	energy := []float64{1000, 4000, 1e12, 1e12 + 3000}
	doc := mkProfile(t, t0, 120, 30, nodeSpec{name: "n1", gpus: []gpuSpec{{uuid: "GPU-a", t: ts, util: fill(50, 4), energy: energy}}})
	r := mustAnalyze(t, DefaultParams(), doc)
	nearPtr(t, "energy_kwh", r.Summary.EnergyKWh, 6000/3.6e6)
	if got := strings.Join(r.Warnings, "\n"); !strings.Contains(got, "1 energy counter step(s) larger than a GPU can draw") || !strings.Contains(got, "GPU GPU-a on node n1") {
		t.Errorf("warnings %q", r.Warnings)
	}
}
