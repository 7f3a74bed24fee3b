package analyze

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/pricing"
	"github.com/seedance/seedance/profile"
)

// TestStaleAfter: a node is stale when its data ends longer before the
// window's end than Params.StaleAfter (not when exactly that long), or
// than the idle window when that is not set.
func TestStaleAfter(t *testing.T) {
	for _, c := range []struct {
		after time.Duration
		want  float64
	}{{0, 60}, {10 * time.Second, 10}, {-time.Second, 60}} {
		a := &analysis{p: Params{StaleAfter: c.after, IdleWindow: time.Minute}}
		if got := a.staleAfter(); got != c.want {
			t.Errorf("StaleAfter %s: %v s, want %v", c.after, got, c.want)
		}
	}
	// Node b's data ends 30 s before the window's end.
	a := nodeSpec{name: "a", gpus: []gpuSpec{{uuid: "GPU-a", t: every10(13), util: fill(50, 13)}}}
	b := nodeSpec{name: "b", gpus: []gpuSpec{{uuid: "GPU-b", t: every10(10), util: fill(50, 10)}}}
	for _, c := range []struct {
		after time.Duration
		stale bool
	}{{0, false}, {20 * time.Second, true}, {30 * time.Second, false}} {
		p := DefaultParams()
		p.StaleAfter = c.after
		r := mustAnalyze(t, p, mkProfile(t, t0, 130, 10, a, b))
		if n := nodeByName(r, "b"); n.Stale != c.stale || nodeByName(r, "a").Stale {
			t.Errorf("StaleAfter %s: b stale %v (age %v s), want %v", c.after, n.Stale, n.DataAgeS, c.stale)
		}
	}
}

// TestPendingUnknownFirst: the report's pending_unknown is the first input's
// that has one, named by the input.
func TestPendingUnknownFirst(t *testing.T) {
	var r Report
	r.addInput("a", profile.Header{Complete: true})
	r.addInput("b", profile.Header{Complete: true, PendingUnknown: "no kube-state-metrics"})
	r.addInput("c", profile.Header{Complete: true, PendingUnknown: "squeue failed"})
	if r.PendingUnknown != "b: no kube-state-metrics" {
		t.Fatalf("pending_unknown %q", r.PendingUnknown)
	}
}

// TestWindowSpan: inputs may span profile.MaxSpan exactly, not a second
// more.
func TestWindowSpan(t *testing.T) {
	src := func(start, end time.Time) Source {
		return Source{Stream: &profile.Stream{Header: profile.Header{StartedAt: start, EndedAt: end}}}
	}
	end := t0.Add(profile.MaxSpan)
	if _, got, err := window([]Source{src(t0.Add(time.Hour), end), src(t0, t0.Add(time.Hour))}); err != nil || !got.Equal(end) {
		t.Fatalf("exactly MaxSpan: %v, end %s", err, got)
	}
	if _, _, err := window([]Source{src(t0, t0.Add(time.Hour)), src(t0.Add(time.Hour), end.Add(time.Second))}); !errors.Is(err, profile.ErrInvalid) ||
		!strings.HasSuffix(err.Error(), "more than the 400 days one analysis covers") {
		t.Fatalf("MaxSpan and a second: %v", err)
	}
}

// TestScalingPeriodsBound: a scaling period may cut the window into
// MaxScalingPeriods periods, not one more; a window that is a whole number
// of periods has that many, not one more.
func TestScalingPeriodsBound(t *testing.T) {
	window := time.Duration(MaxScalingPeriods) * time.Second
	for _, c := range []struct {
		period time.Duration
		ok     bool
	}{{time.Second, true}, {time.Second - time.Millisecond, false}} {
		a, err := newAnalysis(Params{Scaling: &ScalingParams{Period: c.period}}, t0, t0.Add(window))
		if (err == nil) != c.ok || c.ok && a.periods != MaxScalingPeriods {
			t.Errorf("period %s: %v", c.period, err)
		}
	}
	a, err := newAnalysis(Params{Scaling: &ScalingParams{}}, t0, t0.Add(time.Hour))
	if err != nil || a.periods != 0 {
		t.Fatalf("no period: %v, %d periods", err, a.periods)
	}
	if n := a.node("x"); n.demand.periods != 0 {
		t.Fatalf("no period: the node has %d", n.demand.periods)
	}
	a, _ = newAnalysis(Params{Scaling: &ScalingParams{Period: time.Minute}}, t0, t0.Add(time.Hour))
	if n := a.node("x"); n.demand.periods != 60 {
		t.Fatalf("a minute's period over an hour: the node has %d", n.demand.periods)
	}
}

// TestPoolLabel: the node label PoolBy names is the node's pool, the
// latest input's; a label the analysis does not read is not kept.
func TestPoolLabel(t *testing.T) {
	n := func(pool string) nodeSpec {
		return nodeSpec{name: "a", labels: map[string]string{"pool": pool, "zone": "z"}, gpus: []gpuSpec{{uuid: "GPU-a", t: every10(7), util: fill(50, 7)}}}
	}
	p := DefaultParams()
	p.PoolBy = "pool"
	r := mustAnalyze(t, p, mkProfile(t, t0, 70, 10, n("train")), mkProfile(t, t0.Add(70*time.Second), 70, 10, n("serve")))
	if got := r.Nodes[0].Pool; got != "serve" {
		t.Fatalf("pool %q, want the latest input's, serve", got)
	}
	a := &analysis{p: p}
	if got := fmt.Sprint(a.nodeLabels(map[string]string{"pool": "x", "zone": "z", "": "e"})); got != "map[pool:x]" {
		t.Fatalf("kept %s", got)
	}
	if a.nodeLabels(map[string]string{"zone": "z"}) != nil {
		t.Fatal("labels kept where none is read")
	}
}

// TestGPUTimelinesBound: a cluster of MaxGPUTimelines GPUs gets a timeline
// per GPU; one more GPU, and none does.
func TestGPUTimelinesBound(t *testing.T) {
	for _, c := range []struct{ gpus, want int }{{MaxGPUTimelines, MaxGPUTimelines}, {MaxGPUTimelines + 1, 0}} {
		var nodes []nodeSpec
		for i := 0; i < c.gpus; i += 8 {
			n := nodeSpec{name: fmt.Sprintf("n%03d", i/8)}
			for j := i; j < min(i+8, c.gpus); j++ {
				n.gpus = append(n.gpus, gpuSpec{uuid: fmt.Sprintf("GPU-%d", j), t: every10(3), util: fill(50, 3)})
			}
			nodes = append(nodes, n)
		}
		r := mustAnalyze(t, DefaultParams(), mkProfile(t, t0, 30, 10, nodes...))
		got := 0
		for _, n := range r.Nodes {
			got += len(n.GPUTimelines)
		}
		if got != c.want {
			t.Errorf("%d GPUs: %d timelines, want %d", c.gpus, got, c.want)
		}
	}
}

// TestModelFirstSeen: a GPU's model is the first its inputs give.
func TestModelFirstSeen(t *testing.T) {
	n := func(model string) nodeSpec {
		return nodeSpec{name: "a", gpus: []gpuSpec{{uuid: "GPU-a", model: model, t: every10(7), util: fill(50, 7)}}}
	}
	r := mustAnalyze(t, DefaultParams(), mkProfile(t, t0, 70, 10, n("NVIDIA A100-SXM4-80GB")), mkProfile(t, t0.Add(70*time.Second), 70, 10, n("NVIDIA H100 80GB HBM3")))
	if got := strings.Join(r.Nodes[0].Models, ","); got != "A100-SXM4-80GB" {
		t.Fatalf("models %s", got)
	}
}

// TestCheckGroupBy: a grouping needs a level, and each level must be one
// the attribution knows; team= needs a label.
func TestCheckGroupBy(t *testing.T) {
	for _, c := range []struct {
		levels []string
		ok     bool
	}{{nil, false}, {[]string{}, false}, {[]string{"namespace", "team=team", "user", "account", "workload", "controller"}, true}, {[]string{"team="}, false}, {[]string{"pod"}, false}} {
		if err := CheckGroupBy(c.levels); (err == nil) != c.ok || err != nil && !errors.Is(err, ErrGroupBy) {
			t.Errorf("%q: %v", c.levels, err)
		}
	}
	p := AttributionParams{GroupBy: []string{"team=squad", "user"}}
	if got := strings.Join(p.labels(), ","); got != profile.ControllerLabel+",team,user,account,squad" {
		t.Errorf("labels %s", got)
	}
}

// TestAttributeSummedRows: a ledger row that sums several workloads counts
// them all in its group, beside the workloads counted one by one; a group
// that held nothing has no efficiency.
func TestAttributeSummedRows(t *testing.T) {
	w := func(id, ns string) profile.Workload {
		return profile.Workload{ID: id, Labels: map[string]string{"namespace": ns}}
	}
	held := []Held{
		{Keys: []string{"a"}, Workloads: 3, HeldH: 3, UsedH: 1, IdleH: 2, CostUSD: 4},
		{Workload: w("a/x", "a"), HeldH: 1, UsedH: 1},
		{Workload: w("b/y", "b"), HeldH: 1, UsedH: 0.5, IdleH: 0.5, CostUSD: 1},
	}
	at := Attribute(held, Held{}, Held{HeldH: 5, UsedH: 2.5, IdleH: 2.5, CostUSD: 5}, []string{"namespace"})
	if len(at.Groups) != 2 || at.Groups[0].Key[0] != "a" || at.Groups[0].Workloads != 4 || at.Groups[1].Workloads != 1 {
		t.Fatalf("groups %+v", at.Groups)
	}
	nearPtr(t, "a's efficiency", at.Groups[0].Efficiency, 0.5)
	if at.Unallocated.Efficiency != nil {
		t.Fatalf("nothing unallocated, yet an efficiency %v", *at.Unallocated.Efficiency)
	}
}

// TestBasisOf: one rule that split a group's hours names it; two or more
// are "mixed", with each one's hours; none is not known.
func TestBasisOf(t *testing.T) {
	var h [nBases]float64
	if name, by := basisOf(h); name != "" || by != nil {
		t.Errorf("none: %q %v", name, by)
	}
	h[1] = 2
	if name, by := basisOf(h); name != basis(1).String() || by != nil {
		t.Errorf("one: %q %v", name, by)
	}
	h[0] = 1
	name, by := basisOf(h)
	if name != "mixed" || len(by) != 2 || by[basis(0).String()] != 1 || by[basis(1).String()] != 2 {
		t.Errorf("two: %q %v", name, by)
	}
}

// TestAttributionMIGShare: a MIG device counts its share of its GPU in
// held, used and idle GPU-hours, and costs its share of the GPU's price.
// A 3g device (3/7) at 10 % for 120 s, held by one pod, the GPU at
// $7/h: held 120 × 3/7 s, used a tenth of it, idle all of it, cost
// 120/3600 h × $3/h = $0.10.
func TestAttributionMIGShare(t *testing.T) {
	ts := every10(12)
	n := nodeSpec{name: "n", gpus: []gpuSpec{
		{uuid: "MIG-1", model: "TestGPU", t: ts, util: fill(10, 12), mig: &profile.MIG{ParentUUID: "GPU-p", Profile: "3g.40gb", GI: 1}},
	}, workloads: []profile.Workload{{ID: "a/p", Name: "p", Kind: profile.KindPod, State: profile.StateRunning, GPUUUIDs: []string{"MIG-1"}, Labels: map[string]string{"namespace": "a"}}}}
	p := DefaultParams()
	p.Pricer = pricing.New(nil, 7)
	p.Attribution = &AttributionParams{GroupBy: []string{"namespace"}}
	r := mustAnalyze(t, p, mkProfile(t, t0, 120, 10, n))
	if r.Attribution == nil || len(r.Attribution.Groups) != 1 {
		t.Fatalf("%+v", r.Attribution)
	}
	g := r.Attribution.Groups[0]
	h := 120.0 / 3600 * 3 / 7
	near(t, "held", g.HeldGPUHours, h)
	near(t, "used", g.UsedGPUHours, h/10)
	near(t, "idle", g.IdleHeldGPUHours, h)
	near(t, "cost", g.WasteCostUSD, 0.1)
}

// TestNodeFiguresHandComputed: a node's figures worked by hand. Two GPUs
// at $2/h for 120 s at 10 s: GPU-0 at 0 % (idle throughout) with an
// energy counter of 100 W that jumps 1 MJ in one step (a counter fault,
// left out: 10 steps of 1000 J), GPU-1 at 50 % drawing 100 W (12 samples
// of 10 s: 12000 J). A second node seen for 30 s only, shorter than the
// idle window, has no full window, nor has one without utilization (and
// a GPU without a sample), nor one seen for 50 s from 50 s; one seen for
// exactly the idle window has one. Nodes are ordered by idle cost.
func TestNodeFiguresHandComputed(t *testing.T) {
	ts := every10(12)
	counter := make([]float64, 12)
	for i := range counter {
		counter[i] = 1000 * float64(i)
		if i >= 5 {
			counter[i] += 1e6
		}
	}
	n := nodeSpec{name: "b", gpus: []gpuSpec{
		{uuid: "GPU-0", model: "TestGPU", t: ts, util: fill(0, 12), energy: counter},
		{uuid: "GPU-1", model: "TestGPU", t: ts, util: fill(50, 12), power: fill(100, 12)},
	}}
	short := nodeSpec{name: "a", gpus: []gpuSpec{{uuid: "GPU-2", t: every10(3), util: fill(80, 3)}}}
	busy := nodeSpec{name: "c", gpus: []gpuSpec{{uuid: "GPU-3", t: ts, util: fill(80, 12)}}}
	noUtil := nodeSpec{name: "d", gpus: []gpuSpec{{uuid: "GPU-4", t: ts, power: fill(100, 12)}, {uuid: "GPU-5", t: []float64{}}}}
	late := nodeSpec{name: "e", gpus: []gpuSpec{{uuid: "GPU-6", t: []float64{50, 60, 70, 80, 90}, util: fill(80, 5)}}}
	exact := nodeSpec{name: "f", gpus: []gpuSpec{{uuid: "GPU-7", t: every10(6), util: fill(80, 6)}}}
	p := DefaultParams()
	p.Pricer = pricing.New(nil, 2)
	r := mustAnalyze(t, p, mkProfile(t, t0, 120, 10, n, short, busy, noUtil, late, exact))
	if r.Nodes[0].Name != "b" || r.Nodes[1].Name != "a" {
		t.Fatalf("order %s, %s: want the idle cost first", r.Nodes[0].Name, r.Nodes[1].Name)
	}
	nr := r.Nodes[0]
	near(t, "GPU-hours", nr.GPUHours, 240.0/3600)
	near(t, "idle GPU-hours", nr.IdleGPUHours, 120.0/3600)
	near(t, "idle cost", nr.IdleCostUSD, 120.0/3600*2)
	near(t, "energy", nr.EnergyKWh, 22000/3.6e6)
	near(t, "price", nr.PriceUSDPerHour, 4)
	nearPtr(t, "utilization", nr.AvgGPUUtilPct, 25)
	near(t, "observed", nr.ObservedS, 120)
	if r.Summary.NodesFullWindow != 3 {
		t.Errorf("nodes with a full window: %d, want 3 (b, c and f)", r.Summary.NodesFullWindow)
	}
	want := "1 energy counter step(s) larger than a GPU can draw (10 kW over the step's time) were left out as counter faults: [GPU GPU-0 on node b, 1001000 J in 10 s at 50.000 s]"
	if !slices.Contains(r.Warnings, want) {
		t.Errorf("warnings %q, want %q", r.Warnings, want)
	}
}

// TestMIGParentTimeline: a GPU whose MIG devices stand for it has no
// timeline of its own; its devices have one each.
func TestMIGParentTimeline(t *testing.T) {
	ts := every10(12)
	n := nodeSpec{name: "n", gpus: []gpuSpec{
		{uuid: "GPU-p", t: ts, util: fill(100, 12)},
		{uuid: "MIG-1", t: ts, util: fill(10, 12), membw: fill(20, 12), mig: &profile.MIG{ParentUUID: "GPU-p", Profile: "3g.40gb", GI: 1}},
		{uuid: "MIG-2", t: ts, util: fill(90, 12), membw: fill(40, 12), mig: &profile.MIG{ParentUUID: "GPU-p", Profile: "4g.40gb", GI: 2}},
	}}
	r := mustAnalyze(t, DefaultParams(), mkProfile(t, t0, 120, 10, n))
	if got := len(r.Nodes[0].GPUTimelines); got != 2 || r.Nodes[0].GPUs != 1 {
		t.Fatalf("%d timelines, %d GPUs: want 2 and 1", got, r.Nodes[0].GPUs)
	}
	// The devices' figures weigh by their shares, 3/7 and 4/7: the GPU's
	// own series counts for nothing.
	nr := r.Nodes[0]
	near(t, "GPU-hours", nr.GPUHours, 120.0/3600)
	near(t, "idle GPU-hours", nr.IdleGPUHours, 120.0/3600*3/7)
	nearPtr(t, "utilization", nr.AvgGPUUtilPct, 10*3.0/7+90*4.0/7)
	nearPtr(t, "memory bandwidth", r.Summary.AvgMemBWUtilPct, 20*3.0/7+40*4.0/7)
	if m := r.Timeline.MeanUtilPct[0]; m == nil || *m != 50 {
		t.Errorf("the timeline's mean %v, want the devices' 50 (not the GPU's own 100)", m)
	}
	if r.Summary.MemBWGPUs != 1 {
		t.Errorf("memory bandwidth from %d GPUs, want the one physical GPU", r.Summary.MemBWGPUs)
	}
}

// TestShortRunNoteLateStart: the span TestShortRunNote compares with the
// idle window is from a GPU's first covered second to its last, wherever
// in the window its data starts.
func TestShortRunNoteLateStart(t *testing.T) {
	for _, c := range []struct {
		n    int
		note bool
	}{{5, true}, {8, false}} {
		ts := steps(0, c.n)
		for i := range ts {
			ts[i] = 30 + 10*ts[i]
		}
		r := mustAnalyze(t, DefaultParams(), mkProfile(t, t0, 120, 10, nodeSpec{name: "a", gpus: []gpuSpec{{uuid: "GPU-a", t: ts, util: fill(0, c.n)}}}))
		got := len(r.Summary.Notes) > 0 && strings.HasPrefix(r.Summary.Notes[0], "no GPU was observed for as long as the 1m idle window")
		if got != c.note {
			t.Errorf("%d samples from 30 s: note %v (%q), want %v", c.n, got, r.Summary.Notes, c.note)
		}
	}
}

// TestSummaryCounts: the summary counts each node once by its verdict, an
// idle node a workload still holds apart from the idle ones; without any
// utilization the idle figures are null, not 0.
func TestSummaryCounts(t *testing.T) {
	ts := every10(12)
	node := func(name string, util float64, ws ...profile.Workload) nodeSpec {
		return nodeSpec{name: name, gpus: []gpuSpec{{uuid: "GPU-" + name, t: ts, util: fill(util, 12)}}, workloads: ws}
	}
	held := profile.Workload{ID: "a/p", Name: "p", Kind: profile.KindPod, State: profile.StateRunning, GPUs: []int{0}}
	r := mustAnalyze(t, DefaultParams(), mkProfile(t, t0, 120, 10, node("held", 0, held), node("idle", 0), node("under", 30), node("busy", 80), node("busy2", 90)))
	s := r.Summary
	if s.IdleHeldNodes != 1 || s.IdleNodes != 1 || s.UnderusedNodes != 1 || s.BusyNodes != 2 || s.StalledNodes != 0 {
		t.Fatalf("idle held %d, idle %d, underused %d, busy %d, stalled %d", s.IdleHeldNodes, s.IdleNodes, s.UnderusedNodes, s.BusyNodes, s.StalledNodes)
	}
	r = mustAnalyze(t, DefaultParams(), mkProfile(t, t0, 120, 10, nodeSpec{name: "p", gpus: []gpuSpec{{uuid: "GPU-p", t: ts, power: fill(100, 12)}}}))
	s = r.Summary
	if s.IdleGPUHours != nil || s.IdleRatio != nil || s.IdleCostUSD != nil || s.ProjectedMonthlySavingsUSD != nil {
		t.Fatalf("idle figures without utilization: %v %v %v %v", s.IdleGPUHours, s.IdleRatio, s.IdleCostUSD, s.ProjectedMonthlySavingsUSD)
	}
}

// TestTimelineBuckets: the timeline has SparklineBuckets slices of the
// window (one when none is asked for); a scaling period of 0 asks for no
// scaling section; a priced model gets no price warning.
func TestTimelineBuckets(t *testing.T) {
	n := nodeSpec{name: "a", gpus: []gpuSpec{{uuid: "GPU-a", t: every10(12), util: fill(50, 12)}}}
	for _, c := range []struct {
		buckets, want int
		bucketS       float64
	}{{40, 40, 3}, {0, 1, 120}, {1, 1, 120}} {
		p := DefaultParams()
		p.SparklineBuckets = c.buckets
		p.Scaling = &ScalingParams{}
		r := mustAnalyze(t, p, mkProfile(t, t0, 120, 10, n))
		if len(r.Timeline.MeanUtilPct) != c.want || len(r.Timeline.IdleNodeFraction) != c.want {
			t.Errorf("%d buckets: %d slices", c.buckets, len(r.Timeline.MeanUtilPct))
		}
		near(t, "bucket", r.Timeline.BucketS, c.bucketS)
		if r.Scaling != nil {
			t.Error("a scaling section without a period")
		}
		for _, w := range r.Warnings {
			if strings.HasPrefix(w, "no price for") {
				t.Errorf("a priced model: %s", w)
			}
		}
	}
}

// TestTimelineHandComputed: four slices of 30 s over 120 s. GPU a1 is at
// 0 % for the first minute and 100 % for the second, a2 at 50 %, b1 at
// 0 % throughout (node b idle all the window), c1 has no utilization (it
// counts in no slice). Slices 1–2: [0 0 50], mean 16.7, p10 0, p90 50;
// slices 3–4: [0 50 100], mean 50, p10 0, p90 100. One node of three is
// idle in each slice.
func TestTimelineHandComputed(t *testing.T) {
	ts := every10(12)
	nodes := []nodeSpec{
		{name: "a", gpus: []gpuSpec{{uuid: "a1", t: ts, util: cat(fill(0, 6), fill(100, 6))}, {uuid: "a2", t: ts, util: fill(50, 12)}}},
		{name: "b", gpus: []gpuSpec{{uuid: "b1", t: ts, util: fill(0, 12)}}},
		{name: "c", gpus: []gpuSpec{{uuid: "c1", t: ts, power: fill(100, 12)}}},
	}
	p := DefaultParams()
	p.SparklineBuckets = 4
	r := mustAnalyze(t, p, mkProfile(t, t0, 120, 10, nodes...))
	tl := r.Timeline
	str := func(vs []*float64) string {
		var out []string
		for _, v := range vs {
			if v == nil {
				out = append(out, "null")
				continue
			}
			out = append(out, fmt.Sprint(*v))
		}
		return strings.Join(out, " ")
	}
	if got := str(tl.MeanUtilPct); got != "16.7 16.7 50 50" {
		t.Errorf("mean %s", got)
	}
	if got := str(tl.P10UtilPct); got != "0 0 0 0" {
		t.Errorf("p10 %s", got)
	}
	if got := str(tl.P90UtilPct); got != "50 50 100 100" {
		t.Errorf("p90 %s", got)
	}
	if got := fmt.Sprint(tl.IdleNodeFraction); got != "[0.333333333 0.333333333 0.333333333 0.333333333]" {
		t.Errorf("idle node fraction %s", got)
	}
	// Each node's own sparkline: a's two GPUs' mean, b's, none for c.
	for name, want := range map[string]string{"a": "25 25 75 75", "b": "0 0 0 0", "c": "null null null null"} {
		if got := str(nodeByName(r, name).UtilSparkline); got != want {
			t.Errorf("node %s's sparkline %s, want %s", name, got, want)
		}
	}
}

// TestFleetTopology: the fleet keeps a node's topology (the latest input's)
// for the planner; a node without one has none.
func TestFleetTopology(t *testing.T) {
	topo := dgxA100(t)
	var gpus []gpuSpec
	for i := range topo.GPUs {
		gpus = append(gpus, gpuSpec{uuid: fmt.Sprintf("GPU-%d", i), t: every10(7), util: fill(50, 7)})
	}
	p := DefaultParams()
	p.KeepFleet = true
	r := mustAnalyze(t, p, mkProfile(t, t0, 70, 10, nodeSpec{name: "a", gpus: gpus, topology: topo}, nodeSpec{name: "b", gpus: gpus[:1]}))
	if a := r.Fleet.Nodes[0]; a.Topology == nil || !slices.EqualFunc(a.Topology.Matrix, topo.Matrix, slices.Equal) {
		t.Fatalf("node a's topology: %+v", a.Topology)
	}
	if r.Fleet.Nodes[1].Topology != nil {
		t.Fatal("node b has a topology")
	}
}

// TestAttributionPastGPUTimelines: past MaxGPUTimelines GPUs the GPUs keep
// no timeline, and attribution (of a pod that held its GPU for the half
// of the window when it was at 50 %) and stranded memory are still made
// of every GPU.
func TestAttributionPastGPUTimelines(t *testing.T) {
	var nodes []nodeSpec
	for i := 0; i <= MaxGPUTimelines/8; i++ {
		n := nodeSpec{name: fmt.Sprintf("n%03d", i), workloads: []profile.Workload{{ID: "a/p", Name: "p", Kind: profile.KindPod, State: profile.StateRunning, GPUs: []int{0}, Labels: map[string]string{"namespace": "a"},
			Intervals: []profile.Tenure{{StartS: 0, EndS: 60}}}}}
		for j := range 8 {
			n.gpus = append(n.gpus, gpuSpec{uuid: fmt.Sprintf("GPU-%d-%d", i, j), t: every10(12), util: cat(fill(50, 6), fill(0, 6)), mem: fill(1<<30, 12), memTotal: 80 << 30})
		}
		nodes = append(nodes, n)
	}
	doc := mkProfile(t, t0, 120, 10, nodes...)
	p := DefaultParams()
	p.Attribution = &AttributionParams{GroupBy: []string{"namespace"}}
	r := mustAnalyze(t, p, doc)
	if len(r.Nodes[0].GPUTimelines) != 0 {
		t.Fatal("timelines past MaxGPUTimelines")
	}
	if r.Attribution == nil || len(r.Attribution.Groups) != 1 {
		t.Fatalf("attribution %+v", r.Attribution)
	}
	near(t, "held", r.Attribution.Groups[0].HeldGPUHours, float64(len(nodes))*60/3600)
	near(t, "used", r.Attribution.Groups[0].UsedGPUHours, float64(len(nodes))*0.5*60/3600)
	p = DefaultParams()
	p.Fragmentation = true
	if r := mustAnalyze(t, p, doc); len(r.StrandedMemory) != 8*len(nodes) {
		t.Fatalf("%d GPUs with stranded memory, want %d", len(r.StrandedMemory), 8*len(nodes))
	}
}

// TestBadClaimsWarning: running workloads that claim a GPU index or a MIG
// device their node does not report are counted in one warning that names
// the first five and says how many more; a claim of a device the node
// has, and a pending workload's, are not.
func TestBadClaimsWarning(t *testing.T) {
	ts := every10(7)
	ws := []profile.Workload{{ID: "a/mig", Name: "mig", Kind: profile.KindPod, State: profile.StateRunning, GPUUUIDs: []string{"MIG-1", "MIG-9"}}}
	for i := range 6 {
		ws = append(ws, profile.Workload{ID: fmt.Sprintf("a/p%d", i), Name: "p", Kind: profile.KindPod, State: profile.StateRunning, GPUs: []int{3}})
	}
	ws = append(ws, profile.Workload{ID: "a/waiting", Name: "waiting", Kind: profile.KindPod, State: profile.StatePending, GPUs: []int{7}})
	n := nodeSpec{name: "n", workloads: ws, gpus: []gpuSpec{
		{uuid: "GPU-0", t: ts, util: fill(50, 7)},
		{uuid: "MIG-1", t: ts, util: fill(50, 7), mig: &profile.MIG{ParentUUID: "GPU-0", Profile: "3g.40gb", GI: 1}},
	}}
	r := mustAnalyze(t, DefaultParams(), mkProfile(t, t0, 70, 10, n))
	want := "7 workload claim(s) name a GPU their node does not report, so nothing is attributed to them there: [a/mig on node n: GPU MIG-9 a/p0 on node n: GPU index 3 a/p1 on node n: GPU index 3 a/p2 on node n: GPU index 3 a/p3 on node n: GPU index 3] (and 2 more)"
	if !slices.Contains(r.Warnings, want) {
		t.Fatalf("warnings %q\nwant %q", r.Warnings, want)
	}
	var f faults
	for i := range maxFaultsNamed {
		f.add(fmt.Sprint(i))
	}
	if got := f.warnings("x"); len(got) != 1 || got[0] != "5 x: [0 1 2 3 4]" {
		t.Fatalf("exactly %d: %q", maxFaultsNamed, got)
	}
}

// TestInputsTouching: a second input whose first sample is at the first
// input's last sample's time overlaps it, and is refused; one a sample
// later follows it.
func TestInputsTouching(t *testing.T) {
	n := nodeSpec{name: "n", gpus: []gpuSpec{{uuid: "GPU-0", t: every10(6), util: fill(50, 6)}}}
	first := mkProfile(t, t0, 60, 10, n)
	_, err := analyzeDocs(t, DefaultParams(), first, mkProfile(t, t0.Add(50*time.Second), 60, 10, n))
	if !errors.Is(err, profile.ErrInvalid) || !strings.Contains(err.Error(), "inputs overlap: GPU GPU-0 on node n has two samples at or around 50.000 s") {
		t.Fatalf("touching: %v", err)
	}
	if _, err := analyzeDocs(t, DefaultParams(), first, mkProfile(t, t0.Add(60*time.Second), 60, 10, n)); err != nil {
		t.Fatalf("following: %v", err)
	}
}

// TestFleetMeanUtil: the fleet's GPUs carry their mean utilization, null
// for a GPU without a reading.
func TestFleetMeanUtil(t *testing.T) {
	ts := every10(12)
	n := nodeSpec{name: "n", gpus: []gpuSpec{{uuid: "GPU-0", t: ts, util: cat(fill(20, 6), fill(60, 6))}, {uuid: "GPU-1", t: ts, power: fill(100, 12)}}}
	p := DefaultParams()
	p.KeepFleet = true
	r := mustAnalyze(t, p, mkProfile(t, t0, 120, 10, n))
	gs := r.Fleet.Nodes[0].GPUs
	if len(gs) != 2 || gs[0].MeanUtilPct != 40 || !profile.IsNull(gs[1].MeanUtilPct) {
		t.Fatalf("fleet GPUs %+v", gs)
	}
}

// TestCounterFaultBound: an energy counter step of exactly what a GPU can
// draw in its time (10 kW × 10 s) is energy; a joule more is a fault.
func TestCounterFaultBound(t *testing.T) {
	for _, c := range []struct {
		step   float64
		energy float64
		faults bool
	}{{1e5, 1e5, false}, {1e5 + 1, 0, true}} {
		n := nodeSpec{name: "n", gpus: []gpuSpec{{uuid: "GPU-0", t: every10(3), util: fill(50, 3), energy: []float64{0, c.step, c.step}}}}
		r := mustAnalyze(t, DefaultParams(), mkProfile(t, t0, 30, 10, n))
		nearPtr(t, "energy", r.Summary.EnergyKWh, c.energy/3.6e6)
		if got := len(r.Warnings) > 0 && strings.Contains(strings.Join(r.Warnings, "\n"), "counter fault"); got != c.faults {
			t.Errorf("step %v J: fault %v, want %v", c.step, got, c.faults)
		}
	}
}

// TestInstantWindow: a profile whose window is one instant (started_at =
// ended_at, one sample) is analyzed without dividing by its zero length:
// its sparkline has one empty slice, its figures are zero.
func TestInstantWindow(t *testing.T) {
	r, err := analyzeDocs(t, DefaultParams(), mkProfile(t, t0, 0, 10, nodeSpec{name: "n", gpus: []gpuSpec{{uuid: "GPU-0", t: []float64{0}, util: []float64{50}}}}))
	if err != nil {
		t.Fatal(err)
	}
	n := r.Nodes[0]
	if len(n.UtilSparkline) != 1 || n.UtilSparkline[0] != nil || n.GPUHours != 0 || n.Verdict != VerdictUnknown || n.AvgGPUUtilPct != nil {
		t.Fatalf("node %+v", n)
	}
}

// TestSecondInputTenure: a workload's tenure in a later input is moved by
// that input's start: a pod that held GPU-0 for [30, 60) s of the second
// two-minute input held it for 30 s, [150, 180) of the window. A pod in
// both inputs is one workload, the latest input's.
func TestSecondInputTenure(t *testing.T) {
	g := []gpuSpec{{uuid: "GPU-0", model: "TestGPU", t: every10(12), util: fill(50, 12)}}
	stay := profile.Workload{ID: "a/stay", Name: "stay", Kind: profile.KindPod, State: profile.StateRunning, GPUs: []int{0}, Labels: map[string]string{"namespace": "a"}}
	brief := profile.Workload{ID: "b/brief", Name: "brief", Kind: profile.KindPod, State: profile.StateRunning, GPUs: []int{0}, Labels: map[string]string{"namespace": "b"},
		Intervals: []profile.Tenure{{StartS: 30, EndS: 60}}}
	first := mkProfile(t, t0, 120, 10, nodeSpec{name: "n", gpus: g, workloads: []profile.Workload{stay}})
	second := mkProfile(t, t0.Add(120*time.Second), 120, 10, nodeSpec{name: "n", gpus: g, workloads: []profile.Workload{stay, brief}})
	p := DefaultParams()
	p.Attribution = &AttributionParams{GroupBy: []string{"namespace"}}
	r := mustAnalyze(t, p, first, second)
	if n := r.Nodes[0]; n.RunningWorkloads != 1 {
		t.Errorf("running workloads %d, want 1 (a/stay once)", n.RunningWorkloads)
	}
	var b *AttributionGroup
	for i := range r.Attribution.Groups {
		if r.Attribution.Groups[i].Key[0] == "b" {
			b = &r.Attribution.Groups[i]
		}
	}
	if b == nil {
		t.Fatalf("groups %+v", r.Attribution.Groups)
	}
	// For its 30 s, b/brief shares GPU-0 with a/stay: half of it.
	near(t, "b held", b.HeldGPUHours, 15.0/3600)
}

// TestManyWorkloadsReplaced: past indexFrom workloads a node looks them up
// by an index; a later input's state still replaces each one's: 20 pods
// running in the first input, the same 20 in the second with the last
// two pending, are 18 running and 2 pending.
func TestManyWorkloadsReplaced(t *testing.T) {
	g := []gpuSpec{{uuid: "GPU-0", t: every10(12), util: fill(50, 12)}}
	var ws []profile.Workload
	for i := range 20 {
		ws = append(ws, profile.Workload{ID: fmt.Sprintf("a/p%02d", i), Name: "p", Kind: profile.KindPod, State: profile.StateRunning, GPUs: []int{0}})
	}
	later := slices.Clone(ws)
	for i := 18; i < 20; i++ {
		later[i].State, later[i].GPUs, later[i].GPUCount = profile.StatePending, nil, 1
	}
	r := mustAnalyze(t, DefaultParams(), mkProfile(t, t0, 120, 10, nodeSpec{name: "n", gpus: g, workloads: ws}),
		mkProfile(t, t0.Add(120*time.Second), 120, 10, nodeSpec{name: "n", gpus: g, workloads: later}))
	if n := r.Nodes[0]; n.RunningWorkloads != 18 || n.PendingWorkloads != 2 {
		t.Fatalf("running %d, pending %d: want 18 and 2", n.RunningWorkloads, n.PendingWorkloads)
	}
}

// TestIntersect: the pieces two GPUs' idle runs have in common, whichever
// list's interval ends first.
func TestIntersect(t *testing.T) {
	a := []Interval{{0, 70}, {80, 200}}
	b := []Interval{{0, 200}}
	for _, c := range [][2][]Interval{{a, b}, {b, a}} {
		if got := fmt.Sprint(intersect(c[0], c[1])); got != "[{0 70} {80 200}]" {
			t.Errorf("intersect(%v, %v) = %s", c[0], c[1], got)
		}
	}
	if got := intersect([]Interval{{0, 10}, {20, 30}}, []Interval{{5, 25}}); fmt.Sprint(got) != "[{5 10} {20 25}]" {
		t.Errorf("got %v", got)
	}
}

// TestStrandedMemoryHandComputed: GPUs idle for 120 s (one counted run):
// a holds 2 GiB of its 80 the whole run (2 GiB mean, 2 × 120 / 3600 =
// 0.0667 GiB-hours), b holds 1 GiB with no size known, c holds none (not
// listed), d holds 4 GiB but computes (not idle: not listed). The most
// GiB-hours first, ties (e is a's twin) in the profile's order.
func TestStrandedMemoryHandComputed(t *testing.T) {
	ts := every10(12)
	gib := float64(1 << 30)
	n := nodeSpec{name: "n", gpus: []gpuSpec{
		{uuid: "GPU-a", model: "TestGPU", t: ts, util: fill(0, 12), mem: fill(2*gib, 12), memTotal: 80 << 30},
		{uuid: "GPU-b", model: "TestGPU", t: ts, util: fill(0, 12), mem: fill(gib, 12)},
		{uuid: "GPU-c", model: "TestGPU", t: ts, util: fill(0, 12), mem: fill(0, 12), memTotal: 80 << 30},
		{uuid: "GPU-d", model: "TestGPU", t: ts, util: fill(90, 12), mem: fill(4*gib, 12), memTotal: 80 << 30},
		{uuid: "GPU-e", model: "TestGPU", t: ts, util: fill(0, 12), mem: fill(2*gib, 12), memTotal: 80 << 30},
	}}
	p := DefaultParams()
	p.Fragmentation = true
	r := mustAnalyze(t, p, mkProfile(t, t0, 120, 10, n))
	var got []string
	for _, s := range r.StrandedMemory {
		got = append(got, fmt.Sprintf("%s idle %v held %v mean %v GiB %v GiB-h of %v", s.UUID, s.IdleS, s.HeldS, s.MeanGiB, s.GiBHours, s.MemTotalGiB))
	}
	want := "GPU-a idle 120 held 120 mean 2 GiB 0.0667 GiB-h of 80; GPU-e idle 120 held 120 mean 2 GiB 0.0667 GiB-h of 80; GPU-b idle 120 held 120 mean 1 GiB 0.0333 GiB-h of 0"
	if strings.Join(got, "; ") != want {
		t.Fatalf("stranded\n%s\nwant\n%s", strings.Join(got, "; "), want)
	}
}

// TestGPUFiguresHandComputed: the per-GPU figures rules read, by hand.
// GPU-a idle for 120 s at 10 % holding 2 GiB of 80 and drawing 100 W
// (12000 J); GPU-b drawing power without a utilization reading or memory.
func TestGPUFiguresHandComputed(t *testing.T) {
	ts := every10(12)
	n := nodeSpec{name: "n", gpus: []gpuSpec{
		{uuid: "GPU-a", model: "TestGPU", t: ts, util: fill(10, 12), power: fill(100, 12), mem: fill(2<<30, 12), memTotal: 80 << 30},
		{uuid: "GPU-b", model: "TestGPU", t: ts, power: fill(100, 12)},
	}}
	p := DefaultParams()
	p.GPUFigures, p.Fragmentation = true, true
	r := mustAnalyze(t, p, mkProfile(t, t0, 120, 10, n))
	var got []string
	for _, g := range r.GPUFigures {
		util, mem := "null", "null"
		if g.AvgGPUUtilPct != nil {
			util = fmt.Sprint(*g.AvgGPUUtilPct)
		}
		if g.IdleMemGiB != nil {
			mem = fmt.Sprint(*g.IdleMemGiB)
		}
		got = append(got, fmt.Sprintf("%s %d util %s obs %v idle %v kWh %v of %v GiB idle mem %s", g.UUID, g.Index, util, g.ObservedS, g.IdleS, g.EnergyKWh, g.MemTotalGiB, mem))
	}
	want := "GPU-a 0 util 10 obs 120 idle 120 kWh 0.00333333333 of 80 GiB idle mem 2; GPU-b 1 util null obs 120 idle 0 kWh 0.00333333333 of 0 GiB idle mem null"
	if strings.Join(got, "; ") != want {
		t.Fatalf("GPU figures\n%s\nwant\n%s", strings.Join(got, "; "), want)
	}
}
