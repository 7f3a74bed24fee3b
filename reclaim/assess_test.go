package reclaim

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/pricing"
	"github.com/seedance/seedance/profile"
)

// t0 is the test profiles' start; samples are a minute apart.
var t0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

// fixture is one node of H100s whose GPU g reads util(g, i) at sample i,
// held by the workloads.
type fixture struct {
	gpus, samples int
	util          func(g, i int) float64
	power         func(g, i int) float64
	workloads     []profile.Workload
	complete      bool
	drop          func(g, i int) bool // samples left out (gaps)
}

func (f fixture) profile() *profile.Profile {
	n := profile.Node{Name: "gpu-1", Workloads: f.workloads}
	for g := 0; g < f.gpus; g++ {
		gpu := profile.GPU{Index: g, UUID: "GPU-" + string(rune('a'+g)), Model: "NVIDIA H100 80GB HBM3"}
		for i := 0; i < f.samples; i++ {
			if f.drop != nil && f.drop(g, i) {
				continue
			}
			gpu.Series.T = append(gpu.Series.T, float64(i*60))
			gpu.Series.GPUUtilPct = append(gpu.Series.GPUUtilPct, f.util(g, i))
			p := 70.0
			if f.power != nil {
				p = f.power(g, i)
			}
			gpu.Series.PowerW = append(gpu.Series.PowerW, p)
		}
		n.GPUs = append(n.GPUs, gpu)
	}
	return &profile.Profile{SchemaVersion: profile.SchemaVersion, Generator: profile.Generator{Name: "test"},
		StartedAt: t0, EndedAt: t0.Add(time.Duration(f.samples) * time.Minute), IntervalS: 60, Complete: f.complete,
		Nodes: []profile.Node{n}}
}

// assess runs Assess over the fixture at now with the policy.
func assess(t *testing.T, f fixture, pol Policy, now time.Time) []Assessment {
	t.Helper()
	var b bytes.Buffer
	if err := profile.Encode(&b, f.profile()); err != nil {
		t.Fatal(err)
	}
	s, err := profile.OpenStream(&b, "test")
	if err != nil {
		t.Fatal(err)
	}
	out, err := Assess(context.Background(), Input{Streams: []*profile.Stream{s}, Pricer: pricing.New(map[string]float64{"H100": 2.49}, 1), Policy: pol, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func pod(id, controller string, gpus ...int) profile.Workload {
	w := profile.Workload{ID: id, Kind: profile.KindPod, State: profile.StateRunning, GPUs: gpus,
		Labels: map[string]string{"team": "ml", "namespace": strings.Split(id, "/")[0]}}
	if controller != "" {
		w.Labels[profile.ControllerLabel] = controller
	}
	return w
}

// The false-positive table: each guard once, and the cases that must be
// candidates. Four hours of samples end at 13:00; now is 13:01.
func TestFalsePositives(t *testing.T) {
	const samples = 240
	end := t0.Add(samples * time.Minute)
	now := end.Add(time.Minute)
	idle := func(g, i int) float64 { return 0 }
	pol := DefaultPolicy()
	cases := []struct {
		name    string
		f       fixture
		pol     func(*Policy)
		now     time.Time
		verdict string
		reason  string
	}{
		{name: "all zero for 4h: candidate", f: fixture{util: idle}, verdict: Candidate},
		{name: "the 0.5–1 % noise floor is idle", f: fixture{util: func(g, i int) float64 { return 0.5 + 0.5*float64(i%2) }}, verdict: Candidate},
		{name: "trained 30 minutes, then idle 3h30: candidate", f: fixture{util: func(g, i int) float64 {
			if i < 30 {
				return 95
			}
			return 0
		}}, verdict: Candidate},
		{name: "power veto: 300 W at 2 % is work", f: fixture{util: func(g, i int) float64 { return 2 },
			power: func(g, i int) float64 { return 300 }}, pol: func(p *Policy) { p.PowerVetoW = 250 }, verdict: Busy},
		{name: "power under the veto is idle", f: fixture{util: idle, power: func(g, i int) float64 { return 120 }},
			pol: func(p *Policy) { p.PowerVetoW = 250 }, verdict: Candidate},
		{name: "7 of 8 busy", f: fixture{gpus: 8, util: func(g, i int) float64 {
			if g < 7 {
				return 80
			}
			return 0
		}}, verdict: Busy},
		{name: "1 of 8 busy with busy_fraction 0.2 is idle", f: fixture{gpus: 8, util: func(g, i int) float64 {
			if g == 0 {
				return 80
			}
			return 0
		}}, pol: func(p *Policy) { p.BusyFraction = 0.2 }, verdict: Candidate},
		{name: "the threshold hit exactly is work", f: fixture{util: func(g, i int) float64 { return 15 }}, verdict: Busy},
		{name: "just under the threshold is idle", f: fixture{util: func(g, i int) float64 { return 14.99 }}, verdict: Candidate},
		{name: "low CPU with high GPU: busy", f: fixture{util: func(g, i int) float64 { return 99 }}, verdict: Busy},
		{name: "busy 30 minutes ago: idle, not yet a candidate", f: fixture{util: func(g, i int) float64 {
			if i < samples-30 {
				return 60
			}
			return 0
		}}, verdict: Idle, reason: "idle for 30m of 2h"},
		{name: "stale data", f: fixture{util: idle}, now: end.Add(time.Hour), verdict: Unknown, reason: "stale data"},
		{name: "a gap in the idle run", f: fixture{util: idle, drop: func(g, i int) bool { return i > 100 && i < 120 }},
			verdict: Unknown, reason: "a gap of 20m"},
		{name: "a null in the idle run", f: fixture{util: func(g, i int) float64 {
			if i == 200 {
				return math.NaN()
			}
			return 0
		}}, verdict: Unknown, reason: "no utilization"},
		{name: "an incomplete read (a source error)", f: fixture{util: idle, complete: false}, verdict: Unknown, reason: "incomplete"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := c.f
			if f.gpus == 0 {
				f.gpus = 4
			}
			f.samples = samples
			if c.name != "an incomplete read (a source error)" {
				f.complete = true
			}
			gpus := make([]int, f.gpus)
			for i := range gpus {
				gpus[i] = i
			}
			f.workloads = []profile.Workload{pod("ml/llama-eval-7d9f-x2x", "Deployment/llama-eval", gpus...)}
			p := pol
			if c.pol != nil {
				c.pol(&p)
			}
			at := now
			if !c.now.IsZero() {
				at = c.now
			}
			out := assess(t, f, p, at)
			if len(out) != 1 {
				t.Fatalf("%d assessments, want 1", len(out))
			}
			a := out[0]
			if a.Verdict != c.verdict || !strings.Contains(a.Reason, c.reason) {
				t.Fatalf("verdict %s (%s), want %s (%s)", a.Verdict, a.Reason, c.verdict, c.reason)
			}
			if a.Target != (Target{Kind: KindDeployment, Namespace: "ml", Name: "llama-eval"}) {
				t.Errorf("target %v", a.Target)
			}
		})
	}
}

// The 30-minutes-busy job: idle since the end of its last active sample,
// its figures by the ledger's arithmetic, to the cent.
func TestIdleSinceLastActivity(t *testing.T) {
	f := fixture{gpus: 4, samples: 240, complete: true, util: func(g, i int) float64 {
		if i < 30 {
			return 95
		}
		return 0
	}, workloads: []profile.Workload{pod("ml/llama-eval-7d9f-x2x", "Deployment/llama-eval", 0, 1, 2, 3)}}
	a := assess(t, f, DefaultPolicy(), t0.Add(241*time.Minute))[0]
	// The last active sample is i=29 at 09:29, covering to 09:30.
	if want := t0.Add(30 * time.Minute); !a.IdleSince.Equal(want) || a.AtLeast {
		t.Fatalf("idle since %v (at least %v), want %v", a.IdleSince, a.AtLeast, want)
	}
	if a.IdleFor != 210*time.Minute {
		t.Errorf("idle for %v, want 3h30m", a.IdleFor)
	}
	// 4 GPUs × 210 samples × 60 s = 14 GPU-hours at 2.49: 34.86; 9.96 an hour.
	if a.IdleGPUHours != 14 || Cents(a.USDSoFar) != 34.86 || Cents(a.USDPerHour) != 9.96 {
		t.Errorf("figures %v GPU-h, $%v, $%v/h; want 14, 34.86, 9.96", a.IdleGPUHours, a.USDSoFar, a.USDPerHour)
	}
	want := "ml/Deployment/llama-eval has held 4 × NVIDIA H100 80GB HBM3 idle for 3h30m: $34.86 so far, $9.96 an hour; it will be scaled to 0 at 2026-12-01 14:01 UTC unless kept"
	if got := Notice(a, t0.Add(301*time.Minute)); !strings.HasPrefix(got, want) {
		t.Errorf("notice\n%s\nwant it to begin\n%s", got, want)
	}
}

// A workload whose idle run began before the data is idle for at least
// the data; a startup grace spares a fresh one; scope and exemption.
func TestGraceScopeAndExemption(t *testing.T) {
	idle := func(g, i int) float64 { return 0 }
	now := t0.Add(241 * time.Minute)
	f := fixture{gpus: 2, samples: 240, complete: true, util: idle,
		workloads: []profile.Workload{pod("ml/nb-0", "StatefulSet/nb", 0), pod("ops/bare", "", 1)}}
	out := assess(t, f, DefaultPolicy(), now)
	if len(out) != 2 || out[0].Target.String() != "ml/StatefulSet/nb" || !out[0].AtLeast || out[1].Target.String() != "ops/Pod/bare" {
		t.Fatalf("assessments %+v", out)
	}
	fresh := pod("ml/nb-0", "StatefulSet/nb", 0)
	fresh.Intervals = []profile.Tenure{{StartS: 235 * 60, EndS: 240 * 60}}
	f.workloads = []profile.Workload{fresh}
	if a := assess(t, f, DefaultPolicy(), now)[0]; a.Verdict != Spared || !strings.Contains(a.Reason, "startup grace") {
		t.Errorf("fresh start: %s (%s)", a.Verdict, a.Reason)
	}
	never := pod("ml/nb-0", "StatefulSet/nb", 0)
	never.Labels[NeverLabel] = "never"
	f.workloads = []profile.Workload{never}
	if a := assess(t, f, DefaultPolicy(), now)[0]; a.Verdict != Spared {
		t.Errorf("exempt: %s (%s)", a.Verdict, a.Reason)
	}
	pol := DefaultPolicy()
	pol.Scope.Selector = "team=infra"
	if err := pol.Scope.Compile(); err != nil {
		t.Fatal(err)
	}
	f.workloads = []profile.Workload{pod("ml/nb-0", "StatefulSet/nb", 0)}
	if a := assess(t, f, pol, now)[0]; a.Verdict != Spared || !strings.Contains(a.Reason, "selector") {
		t.Errorf("selector: %s (%s)", a.Verdict, a.Reason)
	}
	pol = DefaultPolicy()
	pol.Scope.ExcludeNamespaces = []string{"ml"}
	if a := assess(t, f, pol, now)[0]; a.Verdict != Spared {
		t.Errorf("excluded namespace: %s (%s)", a.Verdict, a.Reason)
	}
}

func TestSelectorErrors(t *testing.T) {
	for _, s := range []string{"a=b,=c", "a b", "a=b=c", "!", "(x)"} {
		sc := Scope{Selector: s}
		if err := sc.Compile(); err == nil {
			t.Errorf("selector %q compiled", s)
		}
	}
	sc := Scope{Selector: "team=ml, tier!=prod,gpu,!spot"}
	if err := sc.Compile(); err != nil {
		t.Fatal(err)
	}
	if !sc.matches(map[string]string{"team": "ml", "gpu": "1"}) || sc.matches(map[string]string{"team": "ml", "gpu": "1", "spot": ""}) ||
		sc.matches(map[string]string{"team": "ml", "gpu": "1", "tier": "prod"}) {
		t.Error("selector matched wrongly")
	}
}
