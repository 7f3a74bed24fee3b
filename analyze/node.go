package analyze

import (
	"math"
	"regexp"
	"sort"
	"strconv"

	"github.com/seedance/seedance/hwtopo"
	"github.com/seedance/seedance/profile"
)

// sparkline accumulates a node's utilization in equal slices of the window.
type sparkline struct {
	width     float64
	sum, wsum []float64
}

func newSparkline(windowS float64, buckets int) *sparkline {
	if buckets < 1 || windowS <= 0 {
		buckets, windowS = 1, 1
	}
	return &sparkline{width: windowS / float64(buckets), sum: make([]float64, buckets), wsum: make([]float64, buckets)}
}

func (s *sparkline) add(t, util, cov float64) {
	i := int(t / s.width)
	if i < 0 {
		i = 0
	}
	if i >= len(s.sum) {
		i = len(s.sum) - 1
	}
	s.sum[i] += util * cov
	s.wsum[i] += cov
}

func (s *sparkline) values() []*float64 {
	out := make([]*float64, len(s.sum))
	for i := range s.sum {
		if s.wsum[i] > 0 {
			v := round(s.sum[i]/s.wsum[i], 1)
			out[i] = &v
		}
	}
	return out
}

// nodeAcc gathers one node's GPUs and workloads across inputs.
type nodeAcc struct {
	name      string
	labels    map[string]string
	gpus      []*gpuAcc
	workloads map[string]profile.Workload
	spark     *sparkline
	topology  *hwtopo.Topology
	demand    demandAcc
}

func (n *nodeAcc) addWorkloads(ws []profile.Workload) {
	for _, w := range ws {
		n.workloads[w.ID] = w // the latest input's state wins
	}
}

// running counts the node's running workloads.
func (n *nodeAcc) running() int {
	c := 0
	for _, w := range n.workloads {
		if w.State != profile.StatePending {
			c++
		}
	}
	return c
}

func (n *nodeAcc) pending() []profile.Workload {
	var out []profile.Workload
	for _, w := range n.workloads {
		if w.State == profile.StatePending {
			out = append(out, w)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

var migSlices = regexp.MustCompile(`(?:^|\.)(\d+)g\.`)

// migShare is the fraction of its parent GPU that a MIG device holds: its
// GPU-instance slices out of the 7 of an A100, H100, H200 or B200.
func migShare(p string) float64 {
	m := migSlices.FindStringSubmatch(p)
	if m == nil {
		return 1.0 / 7
	}
	n, _ := strconv.Atoi(m[1])
	return math.Min(1, float64(n)/7)
}

// intersect returns the pieces common to two sorted lists of intervals.
func intersect(a, b []Interval) []Interval {
	var out []Interval
	for i, j := 0, 0; i < len(a) && j < len(b); {
		lo, hi := math.Max(a[i].StartS, b[j].StartS), math.Min(a[i].EndS, b[j].EndS)
		if hi > lo {
			out = append(out, Interval{lo, hi})
		}
		if a[i].EndS < b[j].EndS {
			i++
		} else {
			j++
		}
	}
	return out
}

// nodeIntervals is the intersection of the counted idle runs of every GPU of
// the node, keeping the pieces that last at least the window.
func nodeIntervals(gpus []*gpuAcc, window float64) []Interval {
	var cur []Interval
	first := true
	for _, g := range gpus {
		if g.share == 0 {
			continue
		}
		if first {
			cur, first = append([]Interval(nil), g.runs...), false
			continue
		}
		cur = intersect(cur, g.runs)
	}
	out := cur[:0:0]
	for _, iv := range cur {
		if iv.EndS-iv.StartS >= window-eps {
			out = append(out, iv)
		}
	}
	return out
}

// union merges intervals (in any order) into sorted, disjoint pieces.
func union(ivs []Interval) []Interval {
	sorted := append([]Interval(nil), ivs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].StartS < sorted[j].StartS })
	var out []Interval
	for _, iv := range sorted {
		if k := len(out); k > 0 && iv.StartS <= out[k-1].EndS+eps {
			out[k-1].EndS = math.Max(out[k-1].EndS, iv.EndS)
			continue
		}
		out = append(out, iv)
	}
	return out
}

// length is the total length of disjoint intervals.
func length(ivs []Interval) float64 {
	total := 0.0
	for _, iv := range ivs {
		total += iv.EndS - iv.StartS
	}
	return total
}

// coverage is the union of the coverage of the node's GPUs.
func (n *nodeAcc) coverage() []Interval {
	var all []Interval
	for _, g := range n.gpus {
		all = append(all, g.cover...)
	}
	return union(all)
}
