package recommend

import (
	"testing"

	"github.com/seedance/seedance/hwtopo"
	"github.com/seedance/seedance/profile"
)

// migNode is a node of two H100s, GPU 0 in MIG mode with a 1g and a 3g
// device, GPU 1 whole, as a profile writes it.
func migNode(ws ...profile.Workload) profile.Node {
	gpu := func(idx int, uuid string, mig *profile.MIG, mem uint64) profile.GPU {
		return profile.GPU{Index: idx, UUID: uuid, Model: "H100", MemoryTotalBytes: mem, MIG: mig,
			Series: profile.Series{T: profile.Values{0}, GPUUtilPct: profile.Values{0}}}
	}
	return profile.Node{Name: "m", Workloads: ws, GPUs: []profile.GPU{
		gpu(0, "GPU-0", nil, 80<<30), gpu(1, "GPU-1", nil, 80<<30),
		gpu(0, "MIG-a", &profile.MIG{ParentUUID: "GPU-0", Profile: "1g.10gb", GI: 9}, 10<<30),
		gpu(0, "MIG-b", &profile.MIG{ParentUUID: "GPU-0", Profile: "3g.40gb", GI: 2}, 40<<30),
	}}
}

// TestFragmentationMIG (#25, case 6): a workload on a MIG slice (named by
// its UUID, with or without its parent's index) holds that share of the
// parent, not a free whole GPU, and its shape is one slice, not a GPU.
func TestFragmentationMIG(t *testing.T) {
	for name, w := range map[string]profile.Workload{
		"by uuid":            {ID: "ml/small", Name: "small", Kind: profile.KindPod, State: profile.StateRunning, GPUUUIDs: []string{"MIG-a"}},
		"uuid and its index": {ID: "ml/small", Name: "small", Kind: profile.KindPod, State: profile.StateRunning, GPUs: []int{0}, GPUUUIDs: []string{"MIG-a"}},
	} {
		t.Run(name, func(t *testing.T) {
			c := fromProfile(&profile.Profile{Nodes: []profile.Node{migNode(w)}}, func(string, map[string]string, string) float64 { return 1 }, 15)
			g := c.Nodes[0].GPUs
			if len(g) != 2 || g[0].UsedMilli != 143 || g[1].UsedMilli != 0 {
				t.Fatalf("GPUs %+v: want GPU 0 held 1/7 (143 milli), GPU 1 free", g)
			}
			if w := c.Workloads[0]; w.Count != 1 || w.Milli != 143 || w.MemPerGPU != 10<<30 || !w.Pinned {
				t.Fatalf("workload %+v", w)
			}
			p := fragment(c, nil, FragmentOptions{ThresholdRatio: DefaultFragmentationRatio}).Pools[0]
			if p.FreeGPUs != 1 || len(p.Shapes) != 1 || p.Shapes[0].Milli != 143 || p.Shapes[0].GPUs != 1 || p.Shapes[0].MemBytes != 10<<30 {
				t.Fatalf("free %d, shapes %+v", p.FreeGPUs, p.Shapes)
			}
			// The lone free GPU fits the slice shape: nothing stranded.
			if p.StrandedGPUs != 0 || *p.Ratio != 0 {
				t.Errorf("stranded %d ratio %v", p.StrandedGPUs, *p.Ratio)
			}
		})
	}
}

// TestFragmentationNoDemand (#25, case 6): a pool with no workload, running
// or pending, has no demand to call its free GPUs stranded by: its ratio
// is null, it is not above the threshold, no suggestion is made, and it
// says why.
func TestFragmentationNoDemand(t *testing.T) {
	c := build([]*Node{dgx("a", "H100", 8), dgx("b", "H100", 8)})
	f := fragment(c, &Plan{}, FragmentOptions{ThresholdRatio: DefaultFragmentationRatio})
	p := f.Pools[0]
	if p.FreeGPUs != 16 || p.StrandedGPUs != 0 || p.Ratio != nil || p.FGDRatio != nil || p.Above || p.Note == "" || p.AfterPlan != nil {
		t.Fatalf("%+v", p)
	}
	if s := fragmentSuggestions(f); len(s) != 0 {
		t.Fatalf("suggestions %+v", s)
	}
}

// TestFragmentationPendingOnNodeWithoutGPUs (#25, case 6): a pending
// workload on a node with no GPUs (so in no pool) counts in every pool.
func TestFragmentationPendingOnNodeWithoutGPUs(t *testing.T) {
	empty := &Node{Name: "login"}
	pend := &Workload{ID: "ml/wait", Node: "login", Pending: true, Count: 2, Milli: milliPerGPU}
	c := build([]*Node{dgx("a", "H100", 8), empty}, pod("six", "a", 0, 1, 2, 3, 4, 5), pend)
	p := fragment(c, nil, FragmentOptions{ThresholdRatio: DefaultFragmentationRatio}).Pools
	if len(p) != 1 || len(p[0].Shapes) != 2 || p[0].StrandedGPUs != 0 {
		t.Fatalf("pools %+v", p)
	}
}

// TestFragmentationExactSearch (#25, case 6): a free GPU that fits a
// linked shape only in a set that greedy growth from it misses is not
// stranded: the search is exact on nodes of up to 16 GPUs.
func TestFragmentationExactSearch(t *testing.T) {
	n := dgx("a", "H100", 8)
	nv := func(i, j int) {
		n.Topology.Matrix[i][j], n.Topology.Matrix[j][i] = "NV18", "NV18"
	}
	for i := range n.Topology.Matrix {
		for j := range n.Topology.Matrix[i] {
			if i != j {
				n.Topology.Matrix[i][j] = "SYS"
			}
		}
	}
	// A triangle 0–2–3 and a spur 0–1: through GPU 0, greedy takes 1 (the
	// first linked), then neither 2 nor 3 is linked to 1: no 3-set; the
	// exact search finds {0, 2, 3}.
	nv(0, 1)
	nv(0, 2)
	nv(0, 3)
	nv(2, 3)
	s := Shape{GPUs: 3, Milli: milliPerGPU, LinkRank: hwtopo.LinkRank("NV18")}
	c := build([]*Node{n}, pod("rest", "a", 4, 5, 6, 7))
	gpus := c.Nodes[0].GPUs
	if greedySet([]int{1, 2, 3}, 2, func(a, b int) bool { return hwtopo.LinkRank(n.Topology.Matrix[a][b]) >= s.LinkRank }) {
		t.Fatal("the case does not trip the greedy search")
	}
	if !fitsThrough(n.Topology, gpus, s, 0) {
		t.Error("GPU 0 fits the 3-GPU NVLink shape in {0, 2, 3}, but was not found")
	}
	if fitsThrough(n.Topology, gpus, s, 1) {
		t.Error("GPU 1 has one NVLink peer: no 3-GPU set through it")
	}
}
