package recommend

import (
	"reflect"
	"strings"
	"testing"
)

// fragmented is the hand-computed case of docs/analysis.md
// ("Fragmentation"): four DGX H100s whose shapes are 4, 3 and 2 GPUs, three
// of each, with 5 free GPUs of which 3 stand alone.
func fragmented() *Cluster {
	return build([]*Node{dgx("a", "H100", 8), dgx("b", "H100", 8), dgx("c", "H100", 8), dgx("d", "H100", 8)},
		pod("train-a", "a", 0, 1, 2, 3), pod("job-a", "a", 4, 5, 6),
		pod("train-b", "b", 4, 5, 6, 7), pod("job-b", "b", 0, 1, 2),
		pod("job-c", "c", 0, 1, 2), pod("infer-c1", "c", 3, 4), pod("infer-c2", "c", 6, 7),
		pod("train-d", "d", 0, 1, 2, 3), pod("infer-d", "d", 4, 5))
}

func TestFragmentationHandComputed(t *testing.T) {
	c := fragmented()
	// c's second 2-GPU pod moves next to d's: c keeps 5, 6, 7 free (room
	// for a 3-GPU shape), d none.
	from := "c"
	plan := &Plan{Moves: []Move{{Workload: "ml/infer-c2", From: &from, To: "d", GPUs: []int{6, 7}}}}
	f := fragment(c, plan, FragmentOptions{ThresholdRatio: DefaultFragmentationRatio})
	if len(f.Pools) != 1 {
		t.Fatalf("pools: %+v", f.Pools)
	}
	p := f.Pools[0]
	if p.Nodes != 4 || p.GPUs != 32 || p.FreeGPUs != 5 || !reflect.DeepEqual(p.FreePerNode, []int{0, 3, 1}) {
		t.Errorf("free: %+v", p)
	}
	if p.StrandedGPUs != 3 || *p.Ratio != 0.6 || !p.Above {
		t.Errorf("stranded %d, ratio %v, above %v; want 3, 0.6, true", p.StrandedGPUs, *p.Ratio, p.Above)
	}
	want := []StrandedSet{{"a", []int{7}}, {"b", []int{3}}, {"c", []int{5}}}
	if !reflect.DeepEqual(p.StrandedOn, want) {
		t.Errorf("stranded on %+v, want %+v", p.StrandedOn, want)
	}
	if len(p.Shapes) != 3 || p.Shapes[0].GPUs != 4 || p.Shapes[0].Workloads != 3 || p.Shapes[2].GPUs != 2 || p.Shapes[2].Workloads != 3 {
		t.Errorf("shapes: %+v", p.Shapes)
	}
	// FGD: a, b and c's lone GPU fits no shape (1 each); d's two fit the
	// 2-GPU shape only: 2 × (1/3 + 1/3). 3 + 4/3 of 5 free.
	// Both to 9 significant digits (docs/analysis.md).
	if p.FGDUnusableGPUs != 4.33333333 || *p.FGDRatio != 0.866666667 {
		t.Errorf("FGD %v (ratio %v), want 4.33333333 (0.866666667)", p.FGDUnusableGPUs, *p.FGDRatio)
	}
	a := p.AfterPlan
	if a == nil || a.FreeGPUs != 5 || a.StrandedGPUs != 2 || *a.Ratio != 0.4 || a.Unstranded != 1 {
		t.Errorf("after the plan: %+v", a)
	}
	s := fragmentSuggestions(f)
	if len(s) != 1 || s[0].Kind != suggestFragmentation || !strings.Contains(s[0].Text, "3 of its 5 free GPUs are stranded (fragmentation ratio 0.60, above 0.35) on a, b, c") ||
		!strings.Contains(s[0].Text, "(4, 3 or 2 GPUs)") || !strings.Contains(s[0].Text, "un-strands 1 of them") {
		t.Errorf("suggestions: %+v", s)
	}
}

// TestFragmentationFractional: a half-used GPU is a fragment for a whole
// GPU shape but not for a half-GPU one, and a free GPU that a fractional
// shape can use is not stranded.
func TestFragmentationFractional(t *testing.T) {
	half := pod("half", "e", 0)
	half.Milli = 500
	c := build([]*Node{dgx("e", "A100", 8)}, half, pod("six", "e", 1, 2, 3, 4, 5, 6))
	f := fragment(c, nil, FragmentOptions{ThresholdRatio: 0.35})
	p := f.Pools[0]
	if p.FreeGPUs != 1 || p.StrandedGPUs != 0 || *p.Ratio != 0 || p.Above || p.AfterPlan != nil {
		t.Errorf("%+v", p)
	}
	// Capacity 0.5 + 1. The half shape fits (nothing smaller than 0.5 is
	// free: 0); the 6-GPU one fits nowhere (1.5). Each is half the shapes.
	if p.FGDUnusableGPUs != 0.75 || *p.FGDRatio != 0.5 {
		t.Errorf("FGD %v (%v), want 0.75 (0.5)", p.FGDUnusableGPUs, *p.FGDRatio)
	}
}

// TestFragmentationEdges: nothing free gives a null ratio; a ratio exactly
// at the threshold is not above it; a pending shape that names no node
// counts in every pool; busy GPUs are not free.
func TestFragmentationEdges(t *testing.T) {
	full := build([]*Node{dgx("f", "H100", 8)}, pod("all", "f", 0, 1, 2, 3, 4, 5, 6, 7))
	if p := fragment(full, nil, FragmentOptions{ThresholdRatio: 0.35}).Pools[0]; p.Ratio != nil || p.FGDRatio != nil || p.Above {
		t.Errorf("nothing free: %+v", p)
	}
	// g (H100) has GPUs 0 and 1 free; h (B200) has 2–6 free and GPU 7
	// busy. The pending 8-GPU workload names no node: a shape of both pools.
	g, h := dgx("g", "H100", 8), dgx("h", "B200", 8)
	h.GPUs[7].Busy = true
	pend := &Workload{ID: "ml/big", Pending: true, Count: 8, Milli: milliPerGPU}
	c := build([]*Node{g, h}, pod("six", "g", 2, 3, 4, 5, 6, 7), pod("pair", "h", 0, 1), pend)
	f := fragment(c, nil, FragmentOptions{ThresholdRatio: 0.5})
	if len(f.Pools) != 2 || f.Pools[0].Model != "B200" || f.Pools[1].Model != "H100" {
		t.Fatalf("pools %+v", f.Pools)
	}
	b2, h1 := f.Pools[0], f.Pools[1]
	// B200: 5 free (2–6), shapes 8 (pending) and 2 (pair): the pair fits.
	if b2.FreeGPUs != 5 || b2.StrandedGPUs != 0 || len(b2.Shapes) != 2 {
		t.Errorf("B200: %+v", b2)
	}
	// H100: 2 free (0, 1), shapes 8 (pending) and 6: both stranded; ratio
	// 1 > 0.5.
	if h1.FreeGPUs != 2 || h1.StrandedGPUs != 2 || *h1.Ratio != 1 || !h1.Above {
		t.Errorf("H100: %+v", h1)
	}
	// Exactly at the threshold is not above it.
	if p := fragment(c, nil, FragmentOptions{ThresholdRatio: 1}).Pools[1]; p.Above {
		t.Errorf("ratio 1 at threshold 1 is above: %+v", p)
	}
}
