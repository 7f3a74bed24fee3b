package analyze

import (
	"testing"

	"github.com/seedance/seedance/profile"
)

// TestFleetIsTheEndOfTheWindow (#25, case 6): the fleet a planner and the
// fragmentation report read describes the end of the window: a workload
// whose tenure ended before it, or that only an earlier input had, holds
// nothing there; one whose tenure reaches the end does. The MIG devices a
// workload names by UUID are kept.
func TestFleetIsTheEndOfTheWindow(t *testing.T) {
	g := func(uuid string) gpuSpec { return gpuSpec{uuid: uuid, t: steps(0, 120), util: fill(50, 120)} }
	run := func(id string, ivs ...profile.Tenure) profile.Workload {
		return profile.Workload{ID: id, Name: id, Kind: profile.KindPod, State: profile.StateRunning, GPUs: []int{0},
			GPUUUIDs: []string{"MIG-x"}, Intervals: ivs}
	}
	first := mkProfile(t, t0, 120, 1, nodeSpec{name: "n1", gpus: []gpuSpec{g("a")}, workloads: []profile.Workload{
		run("ml/finished", profile.Tenure{StartS: 0, EndS: 60}),
		run("ml/earlier-only"),
	}})
	second := mkProfile(t, t0.Add(120e9), 120, 1, nodeSpec{name: "n1", gpus: []gpuSpec{g("a")}, workloads: []profile.Workload{
		run("ml/finished", profile.Tenure{StartS: 0, EndS: 60}),
		run("ml/whole"),
		run("ml/to-the-end", profile.Tenure{StartS: 30, EndS: 120}),
	}})
	p := DefaultParams()
	p.KeepFleet = true
	r := mustAnalyze(t, p, first, second)
	var got []string
	for _, w := range r.Fleet.Nodes[0].Workloads {
		got = append(got, w.ID)
		if len(w.GPUUUIDs) != 1 {
			t.Errorf("%s lost its GPU UUIDs", w.ID)
		}
	}
	if len(got) != 2 || got[0] != "ml/to-the-end" || got[1] != "ml/whole" {
		t.Fatalf("workloads at the end of the window: %v, want ml/to-the-end, ml/whole", got)
	}
}
