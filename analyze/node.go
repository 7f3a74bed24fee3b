package analyze

import (
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

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
	byUUID    map[string]*gpuAcc // past indexFrom GPUs
	workloads workloadSet
	ctx       *gpuContext // shared by the node's GPUs
	spark     *sparkline
	topology  *hwtopo.Topology
	demand    demandAcc
	// tenure is when each workload held its GPUs, for attribution: seconds
	// from the window's start, sorted and disjoint.
	tenure map[string][]Interval
	// work is each workload's work counters (docs/units.md).
	work map[string][]*workAcc
}

// gpu finds one of the node's GPUs by UUID: by a scan while the node has
// few (a map per node would cost more than its GPUs), by an index past
// indexFrom.
func (n *nodeAcc) gpu(uuid string) *gpuAcc {
	if n.byUUID != nil {
		return n.byUUID[uuid]
	}
	for _, g := range n.gpus {
		if g.uuid == uuid {
			return g
		}
	}
	return nil
}

func (n *nodeAcc) addGPU(g *gpuAcc) {
	n.gpus = append(n.gpus, g)
	if n.byUUID != nil {
		n.byUUID[g.uuid] = g
	} else if len(n.gpus) > indexFrom {
		n.byUUID = make(map[string]*gpuAcc, len(n.gpus))
		for _, o := range n.gpus {
			n.byUUID[o.uuid] = o
		}
	}
}

// A workload's tenure is kept in seconds from the window's start (the
// input's own interval when it has none), so that the fleet can tell which
// workloads still hold their GPUs at the window's end.
func (n *nodeAcc) addWorkloads(ws []profile.Workload, labels *labelSets, keep workloadKeep, in input) {
	for _, w := range ws {
		if w.Intervals == nil {
			w.Intervals = []profile.Tenure{{StartS: in.offset, EndS: in.offset + in.spanS}}
		} else {
			ivs := make([]profile.Tenure, len(w.Intervals))
			for i, iv := range w.Intervals {
				ivs[i] = profile.Tenure{StartS: iv.StartS + in.offset, EndS: iv.EndS + in.offset}
			}
			w.Intervals = ivs
		}
		k := keep
		k.uuids = k.uuids || n.holdsMIG(w.GPUUUIDs) // MIG advice reads which devices it holds
		n.workloads.put(slimWorkload(w, labels, k)) // the latest input's state wins
	}
}

// holdsMIG reports whether one of uuids is a MIG device of the node.
func (n *nodeAcc) holdsMIG(uuids []string) bool {
	for _, u := range uuids {
		if g := n.gpu(u); g != nil && g.mig != nil {
			return true
		}
	}
	return false
}

// workloadSet holds a node's workloads by id, in a slice: a node has a
// handful, and a map's buckets would cost more than the workloads. Past
// indexFrom workloads an index keeps lookups constant.
type workloadSet struct {
	list  []profile.Workload
	index map[string]int
}

const indexFrom = 16

func (s *workloadSet) find(id string) int {
	if s.index != nil {
		if i, ok := s.index[id]; ok {
			return i
		}
		return -1
	}
	for i := range s.list {
		if s.list[i].ID == id {
			return i
		}
	}
	return -1
}

// put adds w, or replaces the workload of the same id.
func (s *workloadSet) put(w profile.Workload) {
	if i := s.find(w.ID); i >= 0 {
		s.list[i] = w
		return
	}
	s.list = append(s.list, w)
	if s.index != nil {
		s.index[w.ID] = len(s.list) - 1
	} else if len(s.list) > indexFrom {
		s.index = make(map[string]int, len(s.list))
		for i := range s.list {
			s.index[s.list[i].ID] = i
		}
	}
}

// sorted returns the workloads by id: the set's own, not copies.
func (s *workloadSet) sorted() []*profile.Workload {
	out := make([]*profile.Workload, len(s.list))
	for i := range s.list {
		out[i] = &s.list[i]
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// labelSets shares identical label maps between workloads: most carry the
// same one or two labels (namespace "ml").
type labelSets map[string]map[string]string

func (ls labelSets) intern(m map[string]string) map[string]string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + "\x00" + m[k] + "\x00")
	}
	if s, ok := ls[b.String()]; ok {
		return s
	}
	ls[b.String()] = m
	return m
}

// workloadKeep is what a node keeps of its workloads beyond workloadLabels:
// for attribution, the labels that name teams and the GPU UUIDs (which
// tell the MIG device a workload holds).
type workloadKeep struct {
	labels []string
	uuids  bool
	all    bool // every label (Cut: the ledger groups by any of them later)
}

// workloadLabels are the labels analysis and planning read; a node keeps
// no others, so that memory per node stays small in large clusters.
var workloadLabels = []string{"namespace", "app", "gpu_milli", "seedance.io/pinned", profile.ControllerLabel, ModelLabel}

// ModelLabel is the label analysis gives a workload whose counters of work
// name models (docs/units.md): the models, sorted, joined by commas; the
// key of the model level of --group-by (a ledger keeps it with the
// workload's other labels, and groups by it alike).
const ModelLabel = "seedance.io/model"

// withModels is w with ModelLabel, where its counters name a model (the
// labels copied: the caller's stay as they were).
func withModels(w profile.Workload) profile.Workload {
	var models []string
	for _, c := range w.Work {
		if c.Model != "" && !slices.Contains(models, c.Model) {
			models = append(models, c.Model)
		}
	}
	if len(models) == 0 {
		return w
	}
	slices.Sort(models)
	labels := make(map[string]string, len(w.Labels)+1)
	maps.Copy(labels, w.Labels)
	labels[ModelLabel] = strings.Join(models, ",")
	w.Labels = labels
	return w
}

// slimWorkload keeps what analysis reads of a workload: not its GPU UUIDs,
// and of its labels only workloadLabels.
func slimWorkload(w profile.Workload, labels *labelSets, keep workloadKeep) profile.Workload {
	w = withModels(w)
	w.Work = nil // folded as read (addWork)
	if !keep.uuids {
		w.GPUUUIDs = nil
	}
	if len(w.Labels) == 0 || keep.all {
		return w
	}
	kept := map[string]string{}
	for _, k := range append(workloadLabels, keep.labels...) {
		if v, ok := w.Labels[k]; ok {
			kept[k] = v
		}
	}
	if *labels == nil {
		*labels = labelSets{}
	}
	w.Labels = labels.intern(kept)
	return w
}

// runningAt counts the node's workloads still running at the end of a
// window windowS long (their tenure, in window seconds, reaches it).
func (n *nodeAcc) runningAt(windowS float64) int {
	c := 0
	for _, w := range n.workloads.list {
		if w.State != profile.StatePending && atEnd(w, windowS) {
			c++
		}
	}
	return c
}

func (n *nodeAcc) pending() []profile.Workload {
	var out []profile.Workload
	for _, w := range n.workloads.list {
		if w.State == profile.StatePending {
			out = append(out, w)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
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
// the node, keeping the pieces that last at least the window, and of them
// what lies in [0, spanS) (the runs reach into the context).
func nodeIntervals(gpus []*gpuAcc, window, spanS float64) []Interval {
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
	return clip(out, 0, spanS)
}

// clip is the parts of ascending intervals inside [lo, hi).
func clip(ivs []Interval, lo, hi float64) []Interval {
	out := ivs[:0]
	for _, iv := range ivs {
		if s, e := max(iv.StartS, lo), min(iv.EndS, hi); e > s {
			out = append(out, Interval{s, e})
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
