package analyze

import (
	"strings"
	"testing"

	"github.com/seedance/seedance/pricing"
	"github.com/seedance/seedance/profile"
)

func kinds(r *Report, kind string) []Suggestion {
	var out []Suggestion
	for _, s := range r.Suggestions {
		if s.Kind == kind {
			out = append(out, s)
		}
	}
	return out
}

// TestConsolidateSharedGPUs: four shared GPUs at 10, 20, 5 and 15 % (50 %
// of one GPU together) fit on one: three are freed, at $2/h each. A
// shared GPU at 60 % and a lone pod's GPU at 5 % are not candidates.
func TestConsolidateSharedGPUs(t *testing.T) {
	ts := steps(0, 10)
	for i := range ts {
		ts[i] *= 60
	}
	var gpus []gpuSpec
	var ws []profile.Workload
	for i, u := range []float64{10, 20, 5, 15, 60, 5} {
		gpus = append(gpus, gpuSpec{uuid: "GPU-" + string(rune('a'+i)), model: "TestGPU", t: ts, util: fill(u, 10)})
		pods := 2
		if i == 5 {
			pods = 1
		}
		for k := 0; k < pods; k++ {
			ws = append(ws, profile.Workload{ID: "ns/p" + string(rune('a'+i)) + string(rune('0'+k)), Kind: profile.KindPod, State: profile.StateRunning, GPUs: []int{i}})
		}
	}
	p := DefaultParams()
	p.Pricer = pricing.New(nil, 2)
	r := mustAnalyze(t, p, mkProfile(t, t0, 600, 60, nodeSpec{name: "n", gpus: gpus, workloads: ws}))
	got := kinds(r, SuggestConsolidateShared)
	if len(got) != 1 {
		t.Fatalf("suggestions %+v", r.Suggestions)
	}
	s := got[0]
	near(t, "savings", s.SavingsUSDPerHour, 3*2)
	for _, want := range []string{"4 shared TestGPU GPUs carry 8 pods", "use 50% of one GPU", "onto 1", "free 3 GPU(s)", "n GPU 2 (5%), n GPU 0 (10%)"} {
		if !strings.Contains(s.Text, want) {
			t.Errorf("text lacks %q: %s", want, s.Text)
		}
	}
	if strings.Contains(s.Text, "GPU 4") || strings.Contains(s.Text, "GPU 5") {
		t.Errorf("a busy or unshared GPU is a candidate: %s", s.Text)
	}
}

// TestMIGReshape: a node's MIG devices in use hold 3 slices of GPU A and
// 4 of GPU B: A's 3g device fits in B's 3 free slices, which frees A. With
// 4 and 4 held nothing fits, and nothing is advised.
func TestMIGReshape(t *testing.T) {
	ts := []float64{0, 60, 120, 180, 240, 300, 360, 420, 480, 540}
	mig := func(uuid, parent, prof string) gpuSpec {
		return gpuSpec{uuid: uuid, model: "TestGPU", t: ts, util: fill(50, 10), mig: &profile.MIG{ParentUUID: parent, Profile: prof}}
	}
	pod := func(id, uuid string) profile.Workload {
		return profile.Workload{ID: id, Kind: profile.KindPod, State: profile.StateRunning, GPUs: []int{0}, GPUUUIDs: []string{uuid}}
	}
	for _, c := range []struct {
		name     string
		aProfile string
		want     bool
	}{{"fits", "3g.40gb", true}, {"does not fit", "4g.40gb", false}} {
		t.Run(c.name, func(t *testing.T) {
			n := nodeSpec{name: "n", gpus: []gpuSpec{
				mig("MIG-a1", "GPU-A", c.aProfile), mig("MIG-a2", "GPU-A", "3g.40gb"),
				mig("MIG-b1", "GPU-B", "4g.40gb"), mig("MIG-b2", "GPU-B", "3g.40gb"),
			}, workloads: []profile.Workload{pod("ml/a", "MIG-a1"), pod("ml/b", "MIG-b1")}}
			p := DefaultParams()
			p.Pricer = pricing.New(nil, 2)
			got := kinds(mustAnalyze(t, p, mkProfile(t, t0, 600, 60, n)), SuggestMIGReshape)
			if !c.want {
				if len(got) != 0 {
					t.Fatalf("advised %+v", got)
				}
				return
			}
			if len(got) != 1 || got[0].SavingsUSDPerHour != 2 || !strings.Contains(got[0].Text, "hold 3 of GPU GPU-A's 7 slices") ||
				!strings.Contains(got[0].Text, "take 3g.40gb (ml/a) to GPU GPU-B") {
				t.Fatalf("got %+v", got)
			}
		})
	}
}

// TestConsolidateEdges: a shared GPU at exactly 50 % is not a candidate;
// two at 40 % sum to exactly 80 %, one GPU's packing bound, so they fit
// on ⌈80 / 80⌉ = 1 and free exactly one, $2/h; tied, they are named in
// the profile's order.
func TestConsolidateEdges(t *testing.T) {
	ts := steps(0, 10)
	for i := range ts {
		ts[i] *= 60
	}
	var gpus []gpuSpec
	var ws []profile.Workload
	for i, u := range []float64{50, 40, 40} {
		gpus = append(gpus, gpuSpec{uuid: "GPU-" + string(rune('a'+i)), model: "TestGPU", t: ts, util: fill(u, 10)})
		for k := range 2 {
			ws = append(ws, profile.Workload{ID: "ns/p" + string(rune('a'+i)) + string(rune('0'+k)), Kind: profile.KindPod, State: profile.StateRunning, GPUs: []int{i}})
		}
	}
	p := DefaultParams()
	p.Pricer = pricing.New(nil, 2)
	got := kinds(mustAnalyze(t, p, mkProfile(t, t0, 600, 60, nodeSpec{name: "n", gpus: gpus, workloads: ws})), SuggestConsolidateShared)
	if len(got) != 1 || got[0].SavingsUSDPerHour != 2 || !strings.Contains(got[0].Text, "2 shared TestGPU GPUs carry 4 pods that together use 80% of one GPU: pack them onto 1") ||
		!strings.HasSuffix(got[0].Text, "the least used first: n GPU 1 (40%), n GPU 2 (40%)") {
		t.Fatalf("got %+v", got)
	}
}

// TestMIGReshapeTie: two MIG GPUs holding 3 slices each: the first in the
// node's order is the one re-partitioned away.
func TestMIGReshapeTie(t *testing.T) {
	ts := []float64{0, 60, 120, 180, 240, 300, 360, 420, 480, 540}
	mig := func(uuid, parent, prof string) gpuSpec {
		return gpuSpec{uuid: uuid, model: "TestGPU", t: ts, util: fill(50, 10), mig: &profile.MIG{ParentUUID: parent, Profile: prof}}
	}
	pod := func(id, uuid string) profile.Workload {
		return profile.Workload{ID: id, Kind: profile.KindPod, State: profile.StateRunning, GPUs: []int{0}, GPUUUIDs: []string{uuid}}
	}
	n := nodeSpec{name: "n", gpus: []gpuSpec{mig("MIG-a1", "GPU-A", "3g.40gb"), mig("MIG-b1", "GPU-B", "3g.40gb")},
		workloads: []profile.Workload{pod("ml/a", "MIG-a1"), pod("ml/b", "MIG-b1")}}
	got := kinds(mustAnalyze(t, DefaultParams(), mkProfile(t, t0, 600, 60, n)), SuggestMIGReshape)
	if len(got) != 1 || !strings.Contains(got[0].Text, "hold 3 of GPU GPU-A's 7 slices") || !strings.Contains(got[0].Text, "take 3g.40gb (ml/a) to GPU GPU-B") {
		t.Fatalf("got %+v", got)
	}
}
