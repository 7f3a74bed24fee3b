package analyze

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/pricing"

	"github.com/seedance/seedance/profile"
)

// TestAttributionTenure works docs/analysis.md's tenure rule by hand on
// 240 s at 10 s and $2/h. GPU0 is idle for 0–120 s and at 80 % after;
// "early" holds it for 0–120 s, "late" from 60 s on, so they share 60–120
// s. GPU1 is idle throughout; "mid" starts mid-window and holds it for
// 100–160 s.
func TestAttributionTenure(t *testing.T) {
	ts := every10(24)
	pod := func(id string, gpu int, ivs ...profile.Tenure) profile.Workload {
		return profile.Workload{ID: id, Name: id, Kind: profile.KindPod, State: profile.StateRunning, GPUs: []int{gpu}, Labels: map[string]string{"namespace": "ml"}, Intervals: ivs}
	}
	node := nodeSpec{name: "n", gpus: []gpuSpec{
		{uuid: "GPU-0", model: "TestGPU", t: ts, util: cat(fill(0, 12), fill(80, 12))},
		{uuid: "GPU-1", model: "TestGPU", t: ts, util: fill(0, 24)},
	}, workloads: []profile.Workload{
		pod("early", 0, profile.Tenure{StartS: 0, EndS: 120}),
		pod("late", 0, profile.Tenure{StartS: 60, EndS: 240}),
		pod("mid", 1, profile.Tenure{StartS: 100, EndS: 160}),
	}}
	p := DefaultParams()
	p.Pricer = pricing.New(nil, 2)
	p.Attribution = &AttributionParams{GroupBy: []string{"workload"}}
	r := mustAnalyze(t, p, mkProfile(t, t0, 240, 10, node))
	got := map[string]AttributionGroup{}
	for _, g := range r.Attribution.Groups {
		got[g.Key[0]] = g
	}
	h := 1.0 / 3600 // one GPU-second in hours
	// early: 0–60 s alone, 60–120 s half: held 60 + 30 s, all of it idle.
	near(t, "early held", got["early"].HeldGPUHours, 90*h)
	near(t, "early used", got["early"].UsedGPUHours, 0)
	near(t, "early idle", got["early"].IdleHeldGPUHours, 90*h)
	near(t, "early waste", got["early"].WasteCostUSD, 90*h*2)
	// late: half of 60–120 s (idle), then 120–240 s alone at 80 %.
	near(t, "late held", got["late"].HeldGPUHours, 150*h)
	near(t, "late used", got["late"].UsedGPUHours, 120*0.8*h)
	near(t, "late idle", got["late"].IdleHeldGPUHours, 30*h)
	nearPtr(t, "late efficiency", got["late"].Efficiency, 96.0/150)
	// mid: 60 s of GPU1's idle run; the other 180 s nobody held.
	near(t, "mid held", got["mid"].HeldGPUHours, 60*h)
	near(t, "mid idle", got["mid"].IdleHeldGPUHours, 60*h)
	near(t, "unallocated held", r.Attribution.Unallocated.HeldGPUHours, 180*h)
	near(t, "unallocated idle", r.Attribution.Unallocated.IdleHeldGPUHours, 180*h)
	// The groups and the unallocated time add up to the cluster's idle time:
	// GPU0's 120 s run and GPU1's 240 s.
	near(t, "summary idle", *r.Summary.IdleGPUHours, 360*h)
	sum := r.Attribution.Unallocated.IdleHeldGPUHours
	for _, g := range r.Attribution.Groups {
		sum += g.IdleHeldGPUHours
	}
	near(t, "groups + unallocated", sum, *r.Summary.IdleGPUHours)
	near(t, "total", r.Attribution.Total.IdleHeldGPUHours, *r.Summary.IdleGPUHours)
	near(t, "total waste", r.Attribution.Total.WasteCostUSD, *r.Summary.IdleCostUSD)
}

// TestAttributionTenureAcrossInputs: a workload without intervals holds
// its GPUs for its own input's span, not for the other inputs': here the
// first of two consecutive profiles. The idle run crosses from one input
// into the other and counts once, split at the input's edge.
func TestAttributionTenureAcrossInputs(t *testing.T) {
	first := nodeSpec{name: "n", gpus: []gpuSpec{{uuid: "GPU-0", model: "TestGPU", t: every10(12), util: fill(0, 12)}},
		workloads: []profile.Workload{{ID: "ml/a", Name: "a", Kind: profile.KindPod, State: profile.StateRunning, GPUs: []int{0}}}}
	second := nodeSpec{name: "n", gpus: []gpuSpec{{uuid: "GPU-0", model: "TestGPU", t: every10(12), util: fill(0, 12)}}}
	p := DefaultParams()
	p.Pricer = pricing.New(nil, 2)
	p.Attribution = &AttributionParams{GroupBy: []string{"workload"}}
	r := mustAnalyze(t, p, mkProfile(t, t0, 120, 10, first), mkProfile(t, t0.Add(120*time.Second), 120, 10, second))
	h := 1.0 / 3600
	if len(r.Attribution.Groups) != 1 {
		t.Fatalf("groups %+v", r.Attribution.Groups)
	}
	near(t, "a held", r.Attribution.Groups[0].HeldGPUHours, 120*h)
	near(t, "a idle", r.Attribution.Groups[0].IdleHeldGPUHours, 120*h)
	near(t, "unallocated idle", r.Attribution.Unallocated.IdleHeldGPUHours, 120*h)
	near(t, "summary idle", *r.Summary.IdleGPUHours, 240*h)
}

// every10 returns 0, 10, …, 10(n−1).
func every10(n int) []float64 { return every(10, n) }

// every60 is n sample times a minute apart, from 0.
func every60(n int) []float64 { return every(60, n) }

func every(s float64, n int) []float64 {
	out := steps(0, n)
	for i := range out {
		out[i] *= s
	}
	return out
}

// TestIdleHolderScancel: a Slurm job whose GPUs sat inside idle runs for
// all the time it held them gets scancel, quoted; one with a busy burst,
// and a job whose id is no Slurm id, get the text alone.
func TestIdleHolderScancel(t *testing.T) {
	ts := every10(720) // two hours at 10 s
	burst := fill(1, 720)
	for i := 300; i < 312; i++ {
		burst[i] = 90 // two busy minutes: mean 2.4 %, still an idle holder
	}
	job := func(id string, gpu int) profile.Workload {
		return profile.Workload{ID: id, Name: id, Kind: profile.KindJob, State: profile.StateRunning, GPUs: []int{gpu}}
	}
	node := nodeSpec{name: "n", gpus: []gpuSpec{
		{uuid: "GPU-0", model: "TestGPU", t: ts, util: fill(1, 720)},
		{uuid: "GPU-1", model: "TestGPU", t: ts, util: burst},
		{uuid: "GPU-2", model: "TestGPU", t: ts, util: fill(0, 720)},
	}, workloads: []profile.Workload{job("4242", 0), job("77", 1), job("4242;reboot", 2)}}
	node.workloads[0].Labels = map[string]string{"user": "alice", "account": "vision"}
	p := DefaultParams()
	p.Attribution = &AttributionParams{GroupBy: []string{"workload"}, Rules: DefaultHolderRules()}
	r := mustAnalyze(t, p, mkProfile(t, t0, 7200, 10, node))
	cmds := map[string]string{}
	for _, s := range r.Suggestions {
		if s.Kind == SuggestIdleHolder && strings.HasPrefix(s.Text, "4242 ") && !strings.HasPrefix(s.Text, "4242 (user alice, account vision) holds 1 GPU") {
			t.Errorf("the owner is not named: %s", s.Text)
		}
		if s.Kind == SuggestIdleHolder && s.Action != nil {
			cmds[s.Text[:strings.Index(s.Text, " ")]] = "scancel " + s.Action.Cancel
		} else if s.Kind == SuggestIdleHolder {
			cmds[s.Text[:strings.Index(s.Text, " ")]] = ""
		}
	}
	want := map[string]string{"4242": "scancel 4242", "77": "", "4242;reboot": ""}
	if fmt.Sprint(cmds) != fmt.Sprint(want) {
		t.Fatalf("commands %q, want %q", cmds, want)
	}
}

// TestAttributionUserAccount: Slurm jobs grouped by account, then user
// (their labels), on 120 s of idle GPUs at $2/h; a job without them is
// "(none)".
func TestAttributionUserAccount(t *testing.T) {
	job := func(id string, gpu int, user, account string) profile.Workload {
		l := map[string]string{}
		if user != "" {
			l["user"], l["account"] = user, account
		}
		return profile.Workload{ID: id, Name: id, Kind: profile.KindJob, State: profile.StateRunning, GPUs: []int{gpu}, Labels: l}
	}
	ts := every10(12)
	node := nodeSpec{name: "n", gpus: []gpuSpec{
		{uuid: "GPU-0", model: "TestGPU", t: ts, util: fill(0, 12)},
		{uuid: "GPU-1", model: "TestGPU", t: ts, util: fill(0, 12)},
		{uuid: "GPU-2", model: "TestGPU", t: ts, util: fill(0, 12)},
	}, workloads: []profile.Workload{job("10", 0, "alice", "vision"), job("11", 1, "bob", "vision"), job("12", 2, "", "")}}
	p := DefaultParams()
	p.Pricer = pricing.New(nil, 2)
	p.Attribution = &AttributionParams{GroupBy: []string{"account", "user"}}
	r := mustAnalyze(t, p, mkProfile(t, t0, 120, 10, node))
	var got []string
	for _, g := range r.Attribution.Groups {
		got = append(got, fmt.Sprintf("%s/%s:%.4f", g.Key[0], g.Key[1], g.WasteCostUSD))
	}
	// Each held one idle GPU for 120 s: 120 ÷ 3600 × $2 = $0.0667; ties by key.
	if want := "[(none)/(none):0.0667 vision/alice:0.0667 vision/bob:0.0667]"; fmt.Sprint(got) != want {
		t.Fatalf("groups %v, want %s", got, want)
	}
}
