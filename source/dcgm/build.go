package dcgm

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"

	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source"
)

// Build returns the nodes, sorted by name, their GPUs by index and MIG id,
// with t relative to start, and their workloads with their tenure in
// [start, end]; it fails when two GPUs of a node have one index. See
// BuildEach for a builder that keeps its rows in a file.
func (b *Builder) Build(startMillis, endMillis int64) ([]profile.Node, error) {
	var out []profile.Node
	err := b.BuildEach(startMillis, endMillis, func(n profile.Node) error {
		out = append(out, n)
		return nil
	})
	return out, err
}

// BuildEach builds the nodes as Build does and hands them to emit one at a
// time, in name order: a builder that keeps its rows in a file
// (KeepRowsIn) then holds one node's whole range in memory, not every
// node's, and first lets go of the chunk each GPU kept for the next one
// when its every row is in the file.
func (b *Builder) BuildEach(startMillis, endMillis int64, emit func(profile.Node) error) error {
	byNode := map[string][]*gpuBuild{}
	for _, g := range b.gpus {
		g.dropEmptyRows()
		byNode[g.id.Key.Node] = append(byNode[g.id.Key.Node], g)
	}
	for _, name := range slices.Sorted(maps.Keys(byNode)) {
		n, err := b.node(name, byNode[name], startMillis, endMillis)
		if err != nil {
			return err
		}
		if err := emit(n); err != nil {
			return err
		}
	}
	return nil
}

// node builds one node from its GPUs.
func (b *Builder) node(name string, gpus []*gpuBuild, startMillis, endMillis int64) (profile.Node, error) {
	n := profile.Node{Name: name}
	if err := oneGPUPerIndex(name, gpus); err != nil {
		return n, err // before reading any GPU's rows
	}
	for _, g := range gpus {
		gpu, err := b.gpu(g, startMillis)
		if err != nil {
			return n, err
		}
		n.GPUs = append(n.GPUs, gpu)
		for _, key := range slices.Sorted(maps.Keys(g.pods)) {
			if p := g.pods[key]; !b.exporters[key] {
				mergePod(&n, p, g)
			}
		}
		for _, j := range slices.Sorted(maps.Keys(g.jobs)) {
			mergeJob(&n, j, g.jobs[j], g)
		}
	}
	b.finishTenure(&n, startMillis, endMillis)
	sort.Slice(n.GPUs, func(i, j int) bool {
		a, b := n.GPUs[i], n.GPUs[j]
		if a.Index != b.Index {
			return a.Index < b.Index
		}
		return a.UUID < b.UUID
	})
	sort.Slice(n.Workloads, func(i, j int) bool { return n.Workloads[i].ID < n.Workloads[j].ID })
	return n, nil
}

// oneGPUPerIndex refuses a node on which two GPUs (not MIG devices, which
// share their parent's index) have one index: the profile format allows
// one, and which of them is the node's GPU there is not for a source to
// guess. dcgm-exporter's gpu label gives the index; two UUIDs under one
// happen when a GPU was replaced within the window or two hosts' series
// carry one node name, and a series without the label has no index.
func oneGPUPerIndex(node string, gpus []*gpuBuild) error {
	at := map[int]*gpuBuild{}
	for _, g := range gpus {
		if g.id.Key.GI != "" {
			continue
		}
		o := at[g.id.Index]
		if o == nil {
			at[g.id.Index] = g
			continue
		}
		a, b := o.id, g.id
		if a.Key.UUID > b.Key.UUID {
			a, b = b, a
		}
		why := "a GPU replaced within the window, or two hosts' series under one node name"
		if !a.HasIndex || !b.HasIndex {
			why = "a series without dcgm-exporter's gpu label has no index (has a relabeling dropped it?)"
		}
		return fmt.Errorf("node %q: GPUs %q and %q both have index %d: %s", node, a.Key.UUID, b.Key.UUID, a.Index, why)
	}
	return nil
}

// finishTenure turns the workloads' tenure, which Build gathered in
// milliseconds from every GPU, into the profile's: seconds from start,
// none when it is the whole range. A workload seen only outside the range
// is dropped.
func (b *Builder) finishTenure(n *profile.Node, startMillis, endMillis int64) {
	if b.interval <= 0 {
		return
	}
	ws := n.Workloads[:0]
	for _, w := range n.Workloads {
		ivs, ok := profile.FinishTenure(profile.JoinTenure(w.Intervals, 0), float64(startMillis), 1e-3, float64(endMillis-startMillis)/1e3)
		if ok {
			w.Intervals = ivs
			ws = append(ws, w)
		}
	}
	n.Workloads = ws
}

func mergePod(n *profile.Node, s *seen, g *gpuBuild) {
	p := s.id
	id := p.Namespace + "/" + p.Pod
	for i := range n.Workloads {
		if w := &n.Workloads[i]; w.ID == id {
			source.AddSorted(&w.GPUs, g.id.Index)
			w.GPUCount = len(w.GPUs)
			w.Intervals = append(w.Intervals, s.tenure...)
			return
		}
	}
	w := profile.Workload{ID: id, Name: p.Pod, Kind: profile.KindPod, State: profile.StateRunning, GPUs: []int{g.id.Index}, GPUCount: 1,
		Labels: map[string]string{"namespace": p.Namespace}, Intervals: append([]profile.Tenure(nil), s.tenure...)}
	if p.Container != "" {
		w.Labels["container"] = p.Container
	}
	if g.id.Key.GI != "" {
		w.GPUUUIDs = []string{migUUID(g.id)}
	}
	n.Workloads = append(n.Workloads, w)
}

// mergeJob adds g to the HPC job's workload on n: a running Slurm job,
// named as squeue and scontrol name it.
func mergeJob(n *profile.Node, job string, s *seen, g *gpuBuild) {
	for i := range n.Workloads {
		if w := &n.Workloads[i]; w.ID == job && w.Kind == profile.KindJob {
			source.AddSorted(&w.GPUs, g.id.Index)
			w.GPUCount = len(w.GPUs)
			w.Intervals = append(w.Intervals, s.tenure...)
			return
		}
	}
	n.Workloads = append(n.Workloads, profile.Workload{ID: job, Name: job, Kind: profile.KindJob, State: profile.StateRunning,
		GPUs: []int{g.id.Index}, GPUCount: 1, Intervals: append([]profile.Tenure(nil), s.tenure...)})
}

// migUUID names a MIG device that dcgm-exporter labels with its parent's
// UUID and its GPU-instance id.
func migUUID(id Identity) string {
	return fmt.Sprintf("%s/gi%s", id.Key.UUID, id.Key.GI)
}

// gpu is one GPU of the profile, with its whole time axis (allRows).
func (b *Builder) gpu(g *gpuBuild, startMillis int64) (profile.GPU, error) {
	out := profile.GPU{Index: g.id.Index, UUID: g.id.Key.UUID, Model: g.id.Model, PCIBusID: g.id.PCIBusID}
	if g.id.Key.GI != "" {
		gi, _ := strconv.Atoi(g.id.Key.GI)
		out.UUID = migUUID(g.id)
		out.MIG = &profile.MIG{ParentUUID: g.id.Key.UUID, Profile: g.id.MIGProf, GI: gi}
	}
	ts, cols, err := b.allRows(g)
	if err != nil {
		return out, err
	}
	if b.measure {
		out.IntervalS = float64(Spacing(ts)) / 1e3
	}
	out.Series.T = make(profile.Values, len(ts))
	for i, t := range ts {
		out.Series.T[i] = float64(t-startMillis) / 1e3
	}
	for m := profile.Metric(0); m < profile.NumMetrics; m++ {
		if cols[m] == nil {
			out.Unsupported = append(out.Unsupported, m.String())
			continue
		}
		*out.Series.Col(m) = cols[m]
	}
	if used := cols[profile.MemUsedBytes]; g.fbMiB > 0 && len(used) > 0 {
		last := used[len(used)-1]
		if !profile.IsNull(last) {
			out.MemoryTotalBytes = uint64(last + g.fbMiB*(1<<20))
		}
	}
	return out, nil
}
