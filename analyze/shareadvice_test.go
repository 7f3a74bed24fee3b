package analyze

import (
	"strings"
	"testing"

	"github.com/seedance/seedance/pricing"
	"github.com/seedance/seedance/profile"
)

// sharedGPUs is a TestGPU at each utilization for 10 minutes, each held by
// two pods (ns/pa0, ns/pa1 on the first, …).
func sharedGPUs(utils ...float64) ([]gpuSpec, []profile.Workload) {
	var gpus []gpuSpec
	var ws []profile.Workload
	for i, u := range utils {
		gpus = append(gpus, gpuSpec{uuid: "GPU-" + string(rune('a'+i)), model: "TestGPU", t: every60(10), util: fill(u, 10)})
		for k := range 2 {
			ws = append(ws, profile.Workload{ID: "ns/p" + string(rune('a'+i)) + string(rune('0'+k)), Kind: profile.KindPod, State: profile.StateRunning, GPUs: []int{i}})
		}
	}
	return gpus, ws
}

// migDevice is a MIG device of a TestGPU at 50 % for 10 minutes.
func migDevice(uuid, parent, prof string) gpuSpec {
	return gpuSpec{uuid: uuid, model: "TestGPU", t: every60(10), util: fill(50, 10), mig: &profile.MIG{ParentUUID: parent, Profile: prof}}
}

// migPod is a running pod that holds a MIG device.
func migPod(id, uuid string) profile.Workload {
	return profile.Workload{ID: id, Kind: profile.KindPod, State: profile.StateRunning, GPUs: []int{0}, GPUUUIDs: []string{uuid}}
}

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
	gpus, ws := sharedGPUs(10, 20, 5, 15, 60, 5)
	ws = ws[:len(ws)-1] // the last GPU's pod is alone on it
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
	for _, c := range []struct {
		name     string
		aProfile string
		want     bool
	}{{"fits", "3g.40gb", true}, {"does not fit", "4g.40gb", false}} {
		t.Run(c.name, func(t *testing.T) {
			n := nodeSpec{name: "n", gpus: []gpuSpec{
				migDevice("MIG-a1", "GPU-A", c.aProfile), migDevice("MIG-a2", "GPU-A", "3g.40gb"),
				migDevice("MIG-b1", "GPU-B", "4g.40gb"), migDevice("MIG-b2", "GPU-B", "3g.40gb"),
			}, workloads: []profile.Workload{migPod("ml/a", "MIG-a1"), migPod("ml/b", "MIG-b1")}}
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
	gpus, ws := sharedGPUs(50, 40, 40)
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
	n := nodeSpec{name: "n", gpus: []gpuSpec{migDevice("MIG-a1", "GPU-A", "3g.40gb"), migDevice("MIG-b1", "GPU-B", "3g.40gb")},
		workloads: []profile.Workload{migPod("ml/a", "MIG-a1"), migPod("ml/b", "MIG-b1")}}
	got := kinds(mustAnalyze(t, DefaultParams(), mkProfile(t, t0, 600, 60, n)), SuggestMIGReshape)
	if len(got) != 1 || !strings.Contains(got[0].Text, "hold 3 of GPU GPU-A's 7 slices") || !strings.Contains(got[0].Text, "take 3g.40gb (ml/a) to GPU GPU-B") {
		t.Fatalf("got %+v", got)
	}
}
