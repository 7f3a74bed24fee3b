package analyze

import (
	"strings"
	"testing"

	"github.com/seedance/seedance/pricing"

	"github.com/seedance/seedance/profile"
)

// attributionNode: three GPUs for 120 s at 10 s. GPU0 idle, held by a
// (namespace a, team x) and b (namespace b); GPU1 at 50 %, held by c
// (namespace a, team x); GPU2 idle and held by nobody.
func attributionNode(milli string) nodeSpec {
	ts := []float64{0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110}
	label := func(ns, team string) map[string]string {
		l := map[string]string{"namespace": ns, "team": team}
		if milli != "" {
			l["gpu_milli"] = milli
		}
		return l
	}
	return nodeSpec{name: "n", gpus: []gpuSpec{
		{uuid: "GPU-0", model: "TestGPU", t: ts, util: fill(0, 12)},
		{uuid: "GPU-1", model: "TestGPU", t: ts, util: fill(50, 12)},
		{uuid: "GPU-2", model: "TestGPU", t: ts, util: fill(0, 12)},
	}, workloads: []profile.Workload{
		{ID: "a/train-7d9f8b6c4-abcde", Name: "train-7d9f8b6c4-abcde", Kind: profile.KindPod, State: profile.StateRunning, GPUs: []int{0}, Labels: label("a", "x")},
		{ID: "b/eval-0", Name: "eval-0", Kind: profile.KindPod, State: profile.StateRunning, GPUs: []int{0}, Labels: label("b", "")},
		{ID: "a/infer-xyz12", Name: "infer-xyz12", Kind: profile.KindPod, State: profile.StateRunning, GPUs: []int{1}, Labels: map[string]string{"namespace": "a", "team": "x"}},
		{ID: "a/queued", Name: "queued", Kind: profile.KindPod, State: profile.StatePending, GPUCount: 1, Labels: label("a", "x")},
	}}
}

func attributionReport(t *testing.T, milli string, groupBy ...string) *Report {
	t.Helper()
	p := DefaultParams()
	p.Pricer = pricing.New(nil, 2)
	p.Attribution = &AttributionParams{GroupBy: groupBy}
	return mustAnalyze(t, p, mkProfile(t, t0, 120, 10, attributionNode(milli)))
}

// TestAttributionHandComputed: the figures of docs/analysis.md
// (Attribution) worked by hand, and groups plus unallocated time adding up
// to the cluster's idle GPU-hours.
func TestAttributionHandComputed(t *testing.T) {
	r := attributionReport(t, "", "namespace")
	at := r.Attribution
	if at == nil || len(at.Groups) != 2 {
		t.Fatalf("%+v", at)
	}
	h := 120.0 / 3600 // one GPU for the whole window, in hours
	// a: half of GPU0 (train) and all of GPU1 (infer); b: half of GPU0.
	a, b := at.Groups[0], at.Groups[1]
	if a.Key[0] != "a" || b.Key[0] != "b" || a.Workloads != 2 || b.Workloads != 1 {
		t.Fatalf("groups %+v", at.Groups)
	}
	near(t, "a held", a.HeldGPUHours, 1.5*h)
	near(t, "a used", a.UsedGPUHours, 0.5*h)
	near(t, "a idle", a.IdleHeldGPUHours, 0.5*h)
	near(t, "a waste", a.WasteCostUSD, 0.5*h*2)
	nearPtr(t, "a efficiency", a.Efficiency, 1.0/3)
	near(t, "b held", b.HeldGPUHours, 0.5*h)
	nearPtr(t, "b efficiency", b.Efficiency, 0)
	near(t, "unallocated held", at.Unallocated.HeldGPUHours, h)
	near(t, "unallocated idle", at.Unallocated.IdleHeldGPUHours, h)
	near(t, "unallocated waste", at.Unallocated.WasteCostUSD, 2*h)
	near(t, "total idle = summary", at.Total.IdleHeldGPUHours, *r.Summary.IdleGPUHours)
	near(t, "groups + unallocated = total", a.IdleHeldGPUHours+b.IdleHeldGPUHours+at.Unallocated.IdleHeldGPUHours, *r.Summary.IdleGPUHours)
	near(t, "total waste = summary", at.Total.WasteCostUSD, *r.Summary.IdleCostUSD)
}

// TestAttributionGPUMilli: holders with gpu_milli take their share; what
// they leave is unallocated.
func TestAttributionGPUMilli(t *testing.T) {
	r := attributionReport(t, "250", "workload")
	h := 120.0 / 3600
	got := map[string]AttributionGroup{}
	for _, g := range r.Attribution.Groups {
		got[g.Key[0]] = g
	}
	near(t, "train held", got["a/train-7d9f8b6c4-abcde"].HeldGPUHours, 0.25*h)
	near(t, "eval held", got["b/eval-0"].HeldGPUHours, 0.25*h)
	near(t, "infer held", got["a/infer-xyz12"].HeldGPUHours, h) // no gpu_milli: the whole GPU
	near(t, "unallocated", r.Attribution.Unallocated.IdleHeldGPUHours, 1.5*h)
	if _, ok := got["a/queued"]; ok {
		t.Error("a pending workload holds no GPU")
	}
}

// TestAttributionLevels: two levels, controllers and team labels.
func TestAttributionLevels(t *testing.T) {
	r := attributionReport(t, "", "team=team", "controller")
	var keys [][]string
	for _, g := range r.Attribution.Groups {
		keys = append(keys, g.Key)
	}
	want := [][]string{{"(none)", "b/eval"}, {"x", "a/train"}, {"x", "a/infer"}}
	if len(keys) != 3 {
		t.Fatalf("keys %v", keys)
	}
	for i := range want {
		if keys[i][0] != want[i][0] || keys[i][1] != want[i][1] {
			t.Fatalf("keys %v, want %v (by waste, then key)", keys, want)
		}
	}
	if err := CheckGroupBy([]string{"namespace", "team="}); err == nil {
		t.Error("team= without a label accepted")
	}
}

// TestHolderRules: each rule fires on the workload it describes and on no
// other; a rule at 0 is off.
func TestHolderRules(t *testing.T) {
	ts := steps(0, 7200/60) // two hours at 60 s
	for i := range ts {
		ts[i] *= 60
	}
	n := len(ts)
	const gb80 = 80 << 30
	node := nodeSpec{name: "n", gpus: []gpuSpec{
		{uuid: "GPU-0", model: "TestGPU", t: ts, util: fill(1, n), memTotal: gb80},  // notebook: idle
		{uuid: "GPU-1", model: "TestGPU", t: ts, util: fill(90, n), memTotal: gb80}, // train: the busy one
		{uuid: "GPU-2", model: "TestGPU", t: ts, util: fill(2, n), memTotal: gb80},  // train: idle
		{uuid: "GPU-3", model: "TestGPU", t: ts, util: fill(60, n), memTotal: gb80}, // infer: busy, small
		{uuid: "GPU-4", model: "TestGPU", t: []float64{}},                           // notebook: never sampled, so priced at nothing
	}, workloads: []profile.Workload{
		{ID: "ml/notebook-0", Name: "notebook-0", Kind: profile.KindPod, State: profile.StateRunning, GPUs: []int{0, 4}, GPUMemoryBytes: 40 << 30, Labels: map[string]string{"namespace": "ml"}},
		{ID: "ml/train-0", Name: "train-0", Kind: profile.KindPod, State: profile.StateRunning, GPUs: []int{1, 2}, GPUMemoryBytes: 100 << 30, Labels: map[string]string{"namespace": "ml"}},
		{ID: "ml/infer-0", Name: "infer-0", Kind: profile.KindPod, State: profile.StateRunning, GPUs: []int{3}, GPUMemoryBytes: 4 << 30, Labels: map[string]string{"namespace": "ml"}},
	}}
	doc := mkProfile(t, t0, 7200, 60, node)
	params := DefaultParams()
	params.Attribution = &AttributionParams{GroupBy: []string{"workload"}, Rules: DefaultHolderRules()}
	r := mustAnalyze(t, params, doc)
	got := map[string][]string{}
	for _, s := range r.Suggestions {
		switch s.Kind {
		case SuggestIdleHolder, SuggestSmallMemory, SuggestImbalanced:
			got[s.Kind] = append(got[s.Kind], s.Text)
		}
	}
	want := map[string]string{
		SuggestIdleHolder:  "ml/notebook-0 holds 2 GPUs on n at 1.0% mean utilization over 2h00m: release them, or stop it while it waits; its share costs $1.00/h",
		SuggestSmallMemory: "ml/infer-0 uses 4 GiB of the 80 GiB of memory on its 1 GPU (5%): a MIG slice or a shared GPU would hold it",
		SuggestImbalanced:  "ml/train-0 keeps 1 of its 2 GPUs busy (GPU 1 at 90%) while the others stay under 5%: check its data loader and parallelism, or give it 1 GPU",
	}
	for kind, text := range want {
		if len(got[kind]) != 1 || got[kind][0] != text {
			t.Errorf("%s:\n got %q\nwant %q", kind, got[kind], text)
		}
	}
	params.Attribution.Rules = HolderRules{}
	r = mustAnalyze(t, params, doc)
	for _, s := range r.Suggestions {
		if s.Kind == SuggestIdleHolder || s.Kind == SuggestSmallMemory || s.Kind == SuggestImbalanced {
			t.Errorf("rules off, yet %s", s.Text)
		}
	}
}

// TestIdleHolderBounds: the idle-holder rule (under 5 % for at least an
// hour) at its bounds: a pod at exactly 5 % is not idle; one held for
// exactly an hour at 1 % is, one held for 59 minutes is not. A pod that
// holds only a GPU never sampled held nothing: no rule speaks of it. The
// small-memory rule (under 10 %) says nothing of a pod whose memory is not
// known or at exactly 10 %; the imbalance rule nothing of a busy pod's one GPU.
func TestIdleHolderBounds(t *testing.T) {
	pod := func(id string, gpu int) profile.Workload {
		return profile.Workload{ID: id, Name: id, Kind: profile.KindPod, State: profile.StateRunning, GPUs: []int{gpu}, GPUMemoryBytes: 4 << 30, Labels: map[string]string{"namespace": "ml"}}
	}
	node := nodeSpec{name: "n", gpus: []gpuSpec{
		{uuid: "GPU-0", model: "TestGPU", t: every60(120), util: fill(5, 120)},
		{uuid: "GPU-1", model: "TestGPU", t: every60(60), util: fill(1, 60)},
		{uuid: "GPU-2", model: "TestGPU", t: every60(59), util: fill(1, 59)},
		{uuid: "GPU-3", model: "TestGPU", t: []float64{}, memTotal: 80 << 30},
		{uuid: "GPU-4", model: "TestGPU", t: every60(120), util: fill(90, 120), memTotal: 80 << 30},
		{uuid: "GPU-5", model: "TestGPU", t: every60(120), util: fill(90, 120), memTotal: 80 << 30},
		{uuid: "GPU-6", model: "TestGPU", t: every60(120), util: fill(90, 120)},
		{uuid: "GPU-7", model: "TestGPU", t: every60(120), power: fill(100, 120)},
	}, workloads: []profile.Workload{pod("at-5", 0), pod("an-hour", 1), pod("59-minutes", 2), pod("ghost", 3), pod("solo", 4), pod("tenth", 5), pod("pair", 6)}}
	node.workloads[6].GPUs = []int{6, 7}       // one busy, one without utilization: not known to be imbalanced
	node.workloads[4].GPUMemoryBytes = 0       // not known: not small
	node.workloads[5].GPUMemoryBytes = 8 << 30 // exactly 10 %: not under it
	params := DefaultParams()
	params.Attribution = &AttributionParams{GroupBy: []string{"workload"}, Rules: DefaultHolderRules()}
	r := mustAnalyze(t, params, mkProfile(t, t0, 7200, 60, node))
	var got []string
	for _, s := range r.Suggestions {
		switch s.Kind {
		case SuggestIdleHolder, SuggestSmallMemory, SuggestImbalanced:
			got = append(got, s.Kind+" "+s.Text[:strings.Index(s.Text, " ")])
		}
	}
	if strings.Join(got, ", ") != SuggestIdleHolder+" an-hour" {
		t.Fatalf("suggestions %q, want the idle holder an-hour only", got)
	}
}
