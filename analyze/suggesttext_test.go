package analyze

import (
	"strconv"
	"strings"
	"testing"

	"github.com/seedance/seedance/pricing"
	"github.com/seedance/seedance/profile"
)

// TestNodeSuggestionTexts: the node suggestions' figures and texts worked
// by hand, 10 minutes at 10 s, one $2/h GPU per node, in order of savings
// (ties in the report's order):
//
//   - pend: idle throughout with a pod pending on it: stalled, look at why;
//   - rel: idle throughout: release it, all of its price;
//   - sched: idle [0, 120) and [180, 480) (70 %), busy at the end: $1.40/h at stake;
//   - late: busy, then idle for the last 5 minutes: release it, half its price;
//   - pend2: the same with a pod pending on it: stalled, half the time;
//   - stale: idle for the 5 minutes it has data, a pod pending: its data is 5 minutes old.
func TestNodeSuggestionTexts(t *testing.T) {
	ts := every10(60)
	gpu := func(util []float64) []gpuSpec {
		return []gpuSpec{{uuid: "GPU", model: "TestGPU", t: ts[:len(util)], util: util}}
	}
	pending := []profile.Workload{{ID: "ml/q", Name: "q", Kind: profile.KindPod, State: profile.StatePending, GPUCount: 1}}
	nodes := []nodeSpec{
		{name: "rel", gpus: gpu(fill(0, 60))},
		{name: "sched", gpus: gpu(cat(fill(0, 12), fill(90, 6), fill(0, 30), fill(90, 12)))},
		{name: "pend", gpus: gpu(fill(0, 60)), workloads: pending},
		{name: "stale", gpus: gpu(fill(0, 30)), workloads: pending},
		{name: "late", gpus: gpu(cat(fill(90, 30), fill(0, 30)))},
		{name: "pend2", gpus: gpu(cat(fill(90, 30), fill(0, 30))), workloads: pending},
	}
	for i := range nodes {
		nodes[i].gpus[0].uuid += "-" + nodes[i].name
	}
	p := DefaultParams()
	p.Pricer = pricing.New(nil, 2)
	r := mustAnalyze(t, p, mkProfile(t, t0, 600, 10, nodes...))
	want := []string{
		SuggestRebindPending + " $2: pend: 1 pending workload(s) (ml/q) while its 1 × TestGPU sat idle for 10m (100% of 10m observed): look at why they are not scheduled here",
		SuggestReleaseNode + " $2: rel: idle 100% of 10m observed and idle now for 10m (1 × TestGPU), release it: saves about $2.00/h (100% of its $2.00/h)",
		SuggestScheduleNode + " $1.4: sched: idle 70% of 10m observed, in 2 stretches (1 × TestGPU) but busy at the end of the window: scale it down on a schedule or consolidate its work; about $1.40/h at stake",
		SuggestReleaseNode + " $1: late: idle 50% of 10m observed and idle now for 5m (1 × TestGPU), release it: saves about $1.00/h (50% of its $2.00/h)",
		SuggestRebindPending + " $1: pend2: 1 pending workload(s) (ml/q) while its 1 × TestGPU sat idle for 5m (50% of 10m observed): look at why they are not scheduled here",
		SuggestStaleData + " $0: stale: idle 100% of 5m observed, but its newest sample is 5m old at the end of the window: what it does now is unknown; check its exporter before acting on it (no command)",
	}
	var got []string
	for _, s := range r.Suggestions {
		got = append(got, s.Kind+" $"+strings.TrimSuffix(strings.TrimRight(fmtFloat(s.SavingsUSDPerHour), "0"), ".")+": "+s.Text)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("suggestions\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }
