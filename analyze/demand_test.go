package analyze

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/seedance/seedance/profile"
)

// TestUnscheduledDemand (#26, item 5): two 8-GPU pods pending on no node
// make two of three idle 8-GPU nodes stalled, not releasable, and the
// suggestion names the waiting work; a 16-GPU pod no node can run takes
// none; the third idle node stays idle.
func TestUnscheduledDemand(t *testing.T) {
	idle := func(uuid string) []gpuSpec {
		var gs []gpuSpec
		for i := 0; i < 8; i++ {
			gs = append(gs, gpuSpec{uuid: uuid + string(rune('0'+i)), t: steps(0, 300), util: fill(0, 300)})
		}
		return gs
	}
	doc := mkProfile(t, t0, 300, 1, nodeSpec{name: "a", gpus: idle("a")}, nodeSpec{name: "b", gpus: idle("b")}, nodeSpec{name: "c", gpus: idle("c")})
	var p profile.Profile
	if err := json.Unmarshal(doc, &p); err != nil {
		t.Fatal(err)
	}
	pend := func(id string, gpus int) profile.Workload {
		return profile.Workload{ID: id, Name: strings.TrimPrefix(id, "ml/"), Kind: profile.KindPod, State: profile.StatePending, GPUCount: gpus, Labels: map[string]string{"namespace": "ml"}}
	}
	p.Unscheduled = []profile.Workload{pend("ml/train-1", 8), pend("ml/huge", 16), pend("ml/train-2", 8)}
	doc, _ = json.Marshal(&p)
	pr := DefaultParams()
	r := mustAnalyze(t, pr, doc)
	if r.Summary.StalledNodes != 2 || r.Summary.IdleNodes != 1 {
		t.Fatalf("stalled %d idle %d", r.Summary.StalledNodes, r.Summary.IdleNodes)
	}
	waiting := map[string]string{}
	for _, n := range r.Nodes {
		if len(n.WaitingFor) > 0 {
			waiting[n.WaitingFor[0]] = n.Name
		}
	}
	// Equal in size, the pods take the nodes in the order of their names.
	if len(waiting) != 2 || waiting["ml/train-1"] != "a" || waiting["ml/train-2"] != "b" || waiting["ml/huge"] != "" {
		t.Fatalf("waiting %v", waiting)
	}
	released := 0
	for _, s := range r.Suggestions {
		switch s.Kind {
		case SuggestReleaseNode:
			released++
		case SuggestRebindPending:
			if !strings.Contains(s.Text, "unscheduled work waits for GPUs it could run: ml/train-") {
				t.Errorf("%+v", s)
			}
		}
	}
	if released != 1 {
		t.Errorf("%d release suggestions, want 1", released)
	}
}

// TestUnscheduledLargestFirst: the largest waiting workload takes an idle
// node first. An 8-GPU node (the costlier) and a 1-GPU node are idle; a
// 1-GPU pod whose name sorts first and an 8-GPU pod wait: the 8-GPU pod
// takes the 8-GPU node, the 1-GPU pod the other, and both nodes stall.
func TestUnscheduledLargestFirst(t *testing.T) {
	var big []gpuSpec
	for i := range 8 {
		big = append(big, gpuSpec{uuid: "big" + string(rune('0'+i)), t: steps(0, 300), util: fill(0, 300)})
	}
	doc := mkProfile(t, t0, 300, 1, nodeSpec{name: "big", gpus: big}, nodeSpec{name: "small", gpus: []gpuSpec{{uuid: "s0", t: steps(0, 300), util: fill(0, 300)}}})
	var p profile.Profile
	if err := json.Unmarshal(doc, &p); err != nil {
		t.Fatal(err)
	}
	p.Unscheduled = []profile.Workload{
		{ID: "ml/a-one", Name: "a-one", Kind: profile.KindPod, State: profile.StatePending, GPUCount: 1},
		{ID: "ml/b-eight", Name: "b-eight", Kind: profile.KindPod, State: profile.StatePending, GPUCount: 8},
	}
	doc, _ = json.Marshal(&p)
	r := mustAnalyze(t, DefaultParams(), doc)
	for name, want := range map[string]string{"big": "ml/b-eight", "small": "ml/a-one"} {
		if n := nodeByName(r, name); n.Verdict != VerdictStalled || len(n.WaitingFor) != 1 || n.WaitingFor[0] != want {
			t.Errorf("%s: %s waiting for %v, want stalled for %s", name, n.Verdict, n.WaitingFor, want)
		}
	}
}
