package recommend

import (
	"fmt"
	"testing"

	"github.com/seedance/seedance/profile"
)

// TestNewWorkloadByHand: how a profile's workload becomes the planner's,
// field by field, at each edge (pending or running, pod, job or process,
// the gpu_milli label at 0, 1, 999 and 1000, a pending workload asking for
// no GPU count).
func TestNewWorkloadByHand(t *testing.T) {
	noCtl := podBlocker("")
	cases := []struct {
		name string
		w    profile.Workload
		want string // pending pinned job milli count blocker
	}{
		{"running pod", profile.Workload{Kind: profile.KindPod, GPUCount: 1}, "false false false 1000 1 " + noCtl},
		{"pinned pod", profile.Workload{Kind: profile.KindPod, GPUCount: 1, Labels: map[string]string{PinnedLabel: "true"}}, "false true false 1000 1 " + noCtl},
		{"pod of a Deployment", profile.Workload{Kind: profile.KindPod, GPUCount: 1, Labels: map[string]string{profile.ControllerLabel: "Deployment/x"}}, "false false false 1000 1 "},
		{"pending pod", profile.Workload{Kind: profile.KindPod, State: profile.StatePending, GPUCount: 2}, "true false false 1000 2 "},
		{"pending pod asking for none", profile.Workload{Kind: profile.KindPod, State: profile.StatePending}, "true false false 1000 1 "},
		{"running pod holding none", profile.Workload{Kind: profile.KindPod}, "false false false 1000 0 " + noCtl},
		{"running job", profile.Workload{Kind: profile.KindJob, GPUCount: 1}, "false false true 1000 1 "},
		{"pending job", profile.Workload{Kind: profile.KindJob, State: profile.StatePending, GPUCount: 1}, "true false false 1000 1 "},
		{"running process", profile.Workload{Kind: profile.KindProcess, GPUCount: 1}, "false true false 1000 1 "},
		{"pending process", profile.Workload{Kind: profile.KindProcess, State: profile.StatePending, GPUCount: 1}, "true false false 1000 1 "},
		{"gpu_milli 250", milli("250"), "false false false 250 1 " + noCtl},
		{"gpu_milli 1", milli("1"), "false false false 1 1 " + noCtl},
		{"gpu_milli 999", milli("999"), "false false false 999 1 " + noCtl},
		{"gpu_milli 0 is a whole GPU", milli("0"), "false false false 1000 1 " + noCtl},
		{"gpu_milli 1000", milli("1000"), "false false false 1000 1 " + noCtl},
		{"gpu_milli 1500 is a whole GPU", milli("1500"), "false false false 1000 1 " + noCtl},
		{"gpu_milli not a number", milli("half"), "false false false 1000 1 " + noCtl},
	}
	for _, c := range cases {
		w := newWorkload(&c.w, "n")
		got := fmt.Sprintf("%v %v %v %d %d %s", w.Pending, w.Pinned, w.Job, w.Milli, w.Count, w.Blocker)
		if got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

func milli(v string) profile.Workload {
	return profile.Workload{Kind: profile.KindPod, GPUCount: 1, Labels: map[string]string{"gpu_milli": v}}
}

// TestFromProfileByHand: GPUs listed out of order are the node's by index,
// the node's model is its first GPU's, a GPU no workload holds is busy
// when its mean utilization (nulls left out) reaches busyPct exactly, and
// the mean of no sample is 0.
func TestFromProfileByHand(t *testing.T) {
	null := profile.Null
	p := &profile.Profile{Nodes: []profile.Node{{Name: "n", GPUs: []profile.GPU{
		{Index: 2, UUID: "g2", Model: "H100", MemoryTotalBytes: 30, Series: profile.Series{GPUUtilPct: profile.Values{null}}},
		{Index: 0, UUID: "g0", Model: "H100", MemoryTotalBytes: 10, Series: profile.Series{GPUUtilPct: profile.Values{10, null, 30}}},
		{Index: 1, UUID: "g1", Model: "A100", MemoryTotalBytes: 20, Series: profile.Series{GPUUtilPct: profile.Values{19.5, 20}}},
	}}}}
	c := fromProfile(p, func(string, map[string]string, string) float64 { return 1 }, 20)
	n := c.Nodes[0]
	got := fmt.Sprintf("%s %v %v", n.Model, n.PricePerHour, n.GPUs)
	if want := "H100 3 [{10 0 0 true} {20 0 0 false} {30 0 0 false}]"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	for _, c := range []struct {
		v    profile.Values
		want float64
	}{{profile.Values{10, null, 30}, 20}, {nil, 0}, {profile.Values{null}, 0}, {profile.Values{5}, 5}} {
		if got := meanUtil(c.v); got != c.want {
			t.Errorf("meanUtil(%v) = %v, want %v", c.v, got, c.want)
		}
	}
}
