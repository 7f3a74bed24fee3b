package analyze

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/pricing"

	"github.com/seedance/seedance/profile"
)

// TestOneQuietMinuteIsNotIdle is the case that made a busy node "idle":
// one 61 s stretch at 0% in 600 s at 80% otherwise. Mean utilization
// 80 × 539 / 600 = 71.87%; idle share 61 / 600 = 0.1017.
func TestOneQuietMinuteIsNotIdle(t *testing.T) {
	r, n := oneGPU(t, gpuSpec{t: steps(0, 600), util: cat(fill(80, 200), fill(0, 61), fill(80, 339))}, 600)
	nearPtr(t, "mean util", n.AvgGPUUtilPct, 80*539.0/600)
	nearPtr(t, "idle share", n.IdleShare, 61.0/600)
	near(t, "observed", n.ObservedS, 600)
	if n.Verdict != VerdictBusy || len(r.Suggestions) != 0 {
		t.Fatalf("verdict %s, suggestions %+v", n.Verdict, r.Suggestions)
	}
	// Its idle GPU-hours still count in the totals.
	near(t, "idle GPU-hours", *r.Summary.IdleGPUHours*3600, 61)
}

// TestIdleShareThreshold: the idle-node share is inclusive, and a node idle
// at the end of its observed time gets a drain, one that is not gets none.
func TestIdleShareThreshold(t *testing.T) {
	tests := []struct {
		name        string
		util        []float64
		wantVerdict string
		wantShare   float64
		wantNow     bool
		wantKind    string
	}{
		// 120 s idle of 240: share exactly 0.5, busy at the end.
		{"exactly half, idle first", cat(fill(0, 120), fill(80, 120)), VerdictIdle, 0.5, false, SuggestScheduleNode},
		// 120 s idle at the end: idle now.
		{"exactly half, idle last", cat(fill(80, 120), fill(0, 120)), VerdictIdle, 0.5, true, SuggestReleaseNode},
		// 119 s of 240 = 0.4958: mean 80 × 121 / 240 = 40.33% ≥ 40 → busy.
		{"just under half", cat(fill(0, 119), fill(80, 121)), VerdictBusy, 119.0 / 240, false, ""},
		// 119 s idle at the end, mean 30 × 121 / 240 = 15.1% < 40 → under-used.
		{"just under half, low mean", cat(fill(30, 121), fill(0, 119)), VerdictUnderused, 119.0 / 240, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := DefaultParams()
			p.Pricer = pricing.New(map[string]float64{"H100": 2}, pricing.DefaultGPUHourUSD)
			r := mustAnalyze(t, p, mkProfile(t, t0, 240, 1, nodeSpec{name: "n1", gpus: []gpuSpec{{uuid: "g", t: steps(0, 240), util: tt.util}}}))
			n := nodeByName(r, "n1")
			nearPtr(t, "idle share", n.IdleShare, tt.wantShare)
			if n.Verdict != tt.wantVerdict || n.IdleNow != tt.wantNow {
				t.Fatalf("verdict %s idle now %v, want %s %v", n.Verdict, n.IdleNow, tt.wantVerdict, tt.wantNow)
			}
			if tt.wantKind == "" {
				if len(r.Suggestions) != 0 {
					t.Fatalf("suggestions %+v", r.Suggestions)
				}
				return
			}
			s := r.Suggestions[0]
			if s.Kind != tt.wantKind || s.Command != "" {
				t.Fatalf("suggestion %+v", s)
			}
			near(t, "saving", s.SavingsUSDPerHour, 2*0.5) // $2/h × share 0.5
		})
	}
}

// TestIdleNodeShareParam: the threshold is a parameter.
func TestIdleNodeShareParam(t *testing.T) {
	doc := mkProfile(t, t0, 240, 1, nodeSpec{name: "n1", gpus: []gpuSpec{{uuid: "g", t: steps(0, 240), util: cat(fill(80, 150), fill(0, 90))}}})
	p := DefaultParams()
	if v := nodeByName(mustAnalyze(t, p, doc), "n1").Verdict; v != VerdictBusy { // 90/240 = 0.375
		t.Fatalf("default share: %s", v)
	}
	p.IdleNodeShare = 0.375
	r := mustAnalyze(t, p, doc)
	if v := nodeByName(r, "n1").Verdict; v != VerdictIdle || r.Params.IdleNodeShare != 0.375 {
		t.Fatalf("share 0.375: %s, params %+v", v, r.Params)
	}
}

// TestStalledNeedsTheShareToo: pending work and one idle minute do not make
// a busy node stalled.
func TestStalledNeedsTheShareToo(t *testing.T) {
	w := []profile.Workload{{ID: "ml/p", Name: "p", Kind: "pod", State: "pending", GPUCount: 1, Labels: map[string]string{"namespace": "ml"}}}
	doc := mkProfile(t, t0, 300, 1, nodeSpec{name: "n1", workloads: w, gpus: []gpuSpec{{uuid: "g", t: steps(0, 300), util: cat(fill(90, 200), fill(0, 100))}}})
	r := mustAnalyze(t, DefaultParams(), doc)
	if n := nodeByName(r, "n1"); n.Verdict != VerdictBusy || n.PendingWorkloads != 1 {
		t.Fatalf("verdict %s", n.Verdict)
	}
	doc = mkProfile(t, t0, 300, 1, nodeSpec{name: "n1", workloads: w, gpus: []gpuSpec{{uuid: "g", t: steps(0, 300), util: cat(fill(90, 100), fill(0, 200))}}})
	if n := nodeByName(mustAnalyze(t, DefaultParams(), doc), "n1"); n.Verdict != VerdictStalled {
		t.Fatalf("verdict %s, want stalled at share 2/3", n.Verdict)
	}
}

// TestNodeObservedIsUnionOfGPUs: GPU a sampled over [0,200), GPU b over
// [100,300), both idle throughout. Observed = 300 s (not 400); idle
// intervals = [100,200) = 100 s; share 1/3; not idle at the end (300).
func TestNodeObservedIsUnionOfGPUs(t *testing.T) {
	a := gpuSpec{uuid: "a", t: steps(0, 200), util: fill(0, 200)}
	b := gpuSpec{uuid: "b", t: steps(100, 200), util: fill(0, 200)}
	doc := mkProfile(t, t0, 300, 1, nodeSpec{name: "n1", gpus: []gpuSpec{a, b}})
	n := nodeByName(mustAnalyze(t, DefaultParams(), doc), "n1")
	near(t, "observed", n.ObservedS, 300)
	nearPtr(t, "share", n.IdleShare, 1.0/3)
	if n.Verdict == VerdictIdle || n.IdleNow {
		t.Fatalf("verdict %s now %v", n.Verdict, n.IdleNow)
	}
	p := DefaultParams()
	p.IdleNodeShare = 0.3
	n = nodeByName(mustAnalyze(t, p, doc), "n1")
	if n.Verdict != VerdictIdle || n.IdleNow {
		t.Fatalf("at 0.3: verdict %s now %v", n.Verdict, n.IdleNow)
	}
}

// TestProjectionOverCoveredTime: two one-hour profiles a day apart, one GPU
// idle throughout at $2/h. Idle cost $4 over 2 covered hours: $1,460 per
// month, not $4 / 25 h × 730 = $116.80.
func TestProjectionOverCoveredTime(t *testing.T) {
	g := gpuSpec{uuid: "g", t: steps(0, 3600), util: fill(0, 3600)}
	day1 := mkProfile(t, t0, 3600, 1, nodeSpec{name: "n1", gpus: []gpuSpec{g}})
	day2 := mkProfile(t, t0.Add(24*time.Hour), 3600, 1, nodeSpec{name: "n1", gpus: []gpuSpec{g}})
	p := DefaultParams()
	p.Pricer = pricing.New(map[string]float64{"H100": 2}, pricing.DefaultGPUHourUSD)
	r := mustAnalyze(t, p, day1, day2)
	near(t, "window", r.Window.DurationS, 25*3600)
	near(t, "covered", r.Window.CoveredS, 7200)
	near(t, "idle cost", *r.Summary.IdleCostUSD, 4)
	near(t, "projected", *r.Summary.ProjectedMonthlySavingsUSD, 4.0/2*730)
	// Two nodes over the same hour cover one hour, not two.
	other := mkProfile(t, t0, 3600, 1, nodeSpec{name: "n2", gpus: []gpuSpec{{uuid: "h", t: steps(0, 3600), util: fill(90, 3600)}}})
	r = mustAnalyze(t, p, day1, other)
	near(t, "covered by two nodes at once", r.Window.CoveredS, 3600)
	near(t, "projected", *r.Summary.ProjectedMonthlySavingsUSD, 2.0/1*730)
}

func TestRoundProjection(t *testing.T) {
	const v = 12345.678
	for _, tt := range []struct{ covered, want float64 }{
		{300, 12000},            // 5 minutes: 2 significant digits
		{3599, 12000},           //
		{3600, 12300},           // an hour to a day: 3
		{2 * 86400, 12346},      // a day to a week: whole dollars
		{7 * 86400, 12345.678},  // a week or more: as computed
		{30 * 86400, 12345.678}, //
		{300, 12000},            //
	} {
		if got := RoundProjection(v, tt.covered); got != tt.want {
			t.Errorf("RoundProjection(%v, %v) = %v, want %v", v, tt.covered, got, tt.want)
		}
	}
	if got := RoundProjection(0.0123, 60); got != 0.012 {
		t.Errorf("small value: %v", got)
	}
	if got := RoundProjection(0, 60); got != 0 {
		t.Errorf("zero: %v", got)
	}
}

// TestNoSamplesIsAnError: a profile with nodes but no GPU sample, or no
// nodes at all, is not an empty success.
func TestNoSamplesIsAnError(t *testing.T) {
	empty := mkProfile(t, t0, 60, 1)
	noSamples := mkProfile(t, t0, 60, 1, nodeSpec{name: "n1", gpus: []gpuSpec{{uuid: "g", t: []float64{}}}})
	for name, doc := range map[string][]byte{"no nodes": empty, "GPUs without samples": noSamples} {
		_, err := analyzeDocs(t, DefaultParams(), doc)
		if !errors.Is(err, profile.ErrInvalid) || !strings.Contains(err.Error(), "no GPU samples in inputA") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestShortRunNote: a 3 s job cannot hold a 60 s idle run; the report says
// so instead of reporting 0 idle as if it were measured.
func TestShortRunNote(t *testing.T) {
	r, _ := oneGPU(t, gpuSpec{t: steps(0, 3), util: fill(0, 3)}, 3)
	if len(r.Summary.Notes) != 1 || !strings.Contains(r.Summary.Notes[0], "no GPU was observed for as long as the 1m idle window (the longest for 3s)") {
		t.Fatalf("notes %q", r.Summary.Notes)
	}
	r, _ = oneGPU(t, gpuSpec{t: steps(0, 60), util: fill(0, 60)}, 60)
	if len(r.Summary.Notes) != 0 {
		t.Fatalf("a run of exactly the window got %q", r.Summary.Notes)
	}
}

// TestMissingMetricsAreNull: a metric no GPU reported is null in the
// report, never 0; the summary says how many GPUs reported it.
func TestMissingMetricsAreNull(t *testing.T) {
	a := gpuSpec{uuid: "a", t: steps(0, 60), util: fill(50, 60)}
	b := gpuSpec{uuid: "b", t: steps(0, 60), util: fill(50, 60), membw: fill(20, 60)}
	r := mustAnalyze(t, DefaultParams(), mkProfile(t, t0, 60, 1, nodeSpec{name: "n1", gpus: []gpuSpec{a}}))
	if r.Summary.AvgMemBWUtilPct != nil || r.Summary.MemBWGPUs != 0 {
		t.Fatalf("mem bw = %v from %d GPUs", *r.Summary.AvgMemBWUtilPct, r.Summary.MemBWGPUs)
	}
	b2, _ := json.Marshal(r.Summary)
	if !strings.Contains(string(b2), `"avg_mem_bw_util_pct":null`) {
		t.Errorf("JSON %s", b2)
	}
	r = mustAnalyze(t, DefaultParams(), mkProfile(t, t0, 60, 1, nodeSpec{name: "n1", gpus: []gpuSpec{a, b}}))
	nearPtr(t, "mem bw of the one GPU that has it", r.Summary.AvgMemBWUtilPct, 20)
	if r.Summary.MemBWGPUs != 1 {
		t.Errorf("mem bw GPUs %d", r.Summary.MemBWGPUs)
	}
	// No utilization at all: the node's mean is null and its verdict unknown.
	r = mustAnalyze(t, DefaultParams(), mkProfile(t, t0, 60, 1, nodeSpec{name: "n1", gpus: []gpuSpec{{uuid: "c", t: steps(0, 60), power: fill(70, 60)}}}))
	if n := nodeByName(r, "n1"); n.AvgGPUUtilPct != nil || n.Verdict != VerdictUnknown || r.Summary.AvgGPUUtilPct != nil {
		t.Fatalf("node %+v", n)
	}
}

// TestWorkloadSet: the latest state of a workload wins, lookups work past
// the indexing threshold, and order is by id.
func TestWorkloadSet(t *testing.T) {
	var s workloadSet
	var labels labelSets
	for i := 0; i < 40; i++ {
		s.put(slimWorkload(profile.Workload{ID: fmt.Sprintf("ml/p-%02d", 39-i), State: profile.StatePending,
			GPUUUIDs: []string{"GPU-x"}, Labels: map[string]string{"namespace": "ml", "pod-template-hash": "abc"}}, &labels, workloadKeep{}))
	}
	s.put(profile.Workload{ID: "ml/p-07", State: profile.StateRunning})
	if len(s.list) != 40 || s.index == nil {
		t.Fatalf("%d workloads, index %v", len(s.list), s.index != nil)
	}
	if i := s.find("ml/p-07"); i < 0 || s.list[i].State != profile.StateRunning {
		t.Fatalf("ml/p-07 at %d", i)
	}
	if i := s.find("ml/none"); i >= 0 {
		t.Fatal("found a workload that is not there")
	}
	sorted := s.sorted()
	if sorted[0].ID != "ml/p-00" || sorted[39].ID != "ml/p-39" {
		t.Fatalf("order %s … %s", sorted[0].ID, sorted[39].ID)
	}
	a, b := s.list[0], s.list[1]
	if a.GPUUUIDs != nil || len(a.Labels) != 1 || a.Labels["namespace"] != "ml" || fmt.Sprintf("%p", a.Labels) != fmt.Sprintf("%p", b.Labels) {
		t.Fatalf("slim workloads %+v %+v", a, b)
	}
}

// TestStaleNodeIsNotIdleNow (#26): a node whose data ends 29 minutes
// before the window does is not "idle now", says how old its data is, and
// gets no release command; a node with fresh data does.
func TestStaleNodeIsNotIdleNow(t *testing.T) {
	fresh := gpuSpec{uuid: "f", t: steps(0, 3600), util: fill(0, 3600)}
	old := gpuSpec{uuid: "o", t: steps(0, 3600-29*60), util: fill(0, 3600-29*60)}
	r := mustAnalyze(t, DefaultParams(), mkProfile(t, t0, 3600, 1, nodeSpec{name: "fresh", gpus: []gpuSpec{fresh}}, nodeSpec{name: "old", gpus: []gpuSpec{old}}))
	byName := map[string]NodeReport{}
	for _, n := range r.Nodes {
		byName[n.Name] = n
	}
	if n := byName["old"]; !n.Stale || n.IdleNow || n.DataAgeS != 29*60 {
		t.Errorf("old: stale %v idle_now %v age %v", n.Stale, n.IdleNow, n.DataAgeS)
	}
	if n := byName["fresh"]; n.Stale || !n.IdleNow || n.DataAgeS != 0 {
		t.Errorf("fresh: stale %v idle_now %v age %v", n.Stale, n.IdleNow, n.DataAgeS)
	}
	for _, s := range r.Suggestions {
		switch s.Node {
		case "old":
			if s.Kind != SuggestStaleData || !strings.Contains(s.Text, "29m old") {
				t.Errorf("old: %+v", s)
			}
		case "fresh":
			if s.Kind != SuggestReleaseNode {
				t.Errorf("fresh: %+v", s)
			}
		}
	}
}
