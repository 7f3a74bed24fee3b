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
	if len(waiting) != 2 || waiting["ml/train-1"] == "" || waiting["ml/train-2"] == "" || waiting["ml/huge"] != "" {
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
