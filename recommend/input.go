package recommend

import (
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/seedance/seedance/hwtopo"
	"github.com/seedance/seedance/profile"
)

// PinnedLabel marks a workload that must never move.
const PinnedLabel = "seedance.io/pinned"

// PriceFunc prices a GPU-hour of a model on a node (pricing.Pricer.PriceOn):
// a node's price may come from its labels or its name.
type PriceFunc func(node string, labels map[string]string, model string) float64

// FromProfile builds the planner's cluster from a profile in memory. See
// ClusterBuilder.
func FromProfile(p *profile.Profile, price PriceFunc, busyPct float64) *Cluster {
	b := NewClusterBuilder(price, busyPct)
	for ni := range p.Nodes {
		n := &p.Nodes[ni]
		for gi := range n.GPUs {
			_ = b.Add(profile.Item{Node: n.Name, GPU: &n.GPUs[gi]}) // Add never fails: its error is Walk's signature
		}
		end := *n
		end.GPUs = nil
		_ = b.Add(profile.Item{Node: n.Name, End: &end})
	}
	return b.Cluster()
}

// ClusterBuilder builds the planner's cluster from a profile read one GPU
// at a time (profile.Stream.Walk), keeping of each GPU only what planning
// needs, so that planning takes no more memory than analyzing. price gives
// the USD per hour of one GPU of a model. A GPU that no known workload
// holds but that was busy on average (mean utilization ≥ busyPct) cannot be
// freed. Only pods can be moved: processes and wrapped jobs are treated as
// pinned. A workload's share of each GPU is its "gpu_milli" label when it
// has one (1000 otherwise); its memory per GPU is its GPU memory over its
// GPUs.
type ClusterBuilder struct {
	price      PriceFunc
	busyPct    float64
	c          Cluster
	gpus       []gpuSummary // the current node's whole GPUs
	migs       []migSummary // and its MIG devices
	topologies hwtopo.Interner
}

// gpuSummary is what the planner needs of a GPU.
type gpuSummary struct {
	index    int
	uuid     string
	model    string
	memBytes uint64
	meanUtil float64
}

// migSummary is what the planner needs of a MIG device: its parent, its
// share of it and its memory.
type migSummary struct {
	uuid, parent string
	milli        int
	memBytes     uint64
}

// NewClusterBuilder starts an empty cluster.
func NewClusterBuilder(price PriceFunc, busyPct float64) *ClusterBuilder {
	return &ClusterBuilder{price: price, busyPct: busyPct}
}

// Add takes the next item of a profile: a GPU, or the end of its node.
func (b *ClusterBuilder) Add(it profile.Item) error {
	if g := it.GPU; g != nil {
		if g.MIG == nil {
			b.gpus = append(b.gpus, gpuSummary{g.Index, g.UUID, g.Model, g.MemoryTotalBytes, meanUtil(g.Series.GPUUtilPct)})
		} else {
			milli := max(1, min(MilliPerGPU, int(math.Round(g.MIG.Share()*MilliPerGPU))))
			b.migs = append(b.migs, migSummary{g.UUID, g.MIG.ParentUUID, milli, g.MemoryTotalBytes})
		}
		return nil
	}
	b.addNode(it.End)
	b.gpus, b.migs = b.gpus[:0], b.migs[:0]
	return nil
}

// Cluster returns the cluster built so far.
func (b *ClusterBuilder) Cluster() *Cluster { return &b.c }

func (b *ClusterBuilder) addNode(pn *profile.Node) {
	n := &Node{Name: pn.Name, Topology: b.topologies.Intern(pn.Topology)}
	full := b.gpus
	sort.Slice(full, func(i, j int) bool { return full[i].index < full[j].index })
	pos := map[int]int{}
	for i, g := range full {
		pos[g.index] = i
		n.GPUs = append(n.GPUs, GPU{MemBytes: g.memBytes})
		if n.Model == "" {
			n.Model = g.model
		}
		n.PricePerHour += b.price(pn.Name, pn.Labels, g.model)
	}
	held := map[int]bool{}
	for _, w := range pn.Workloads {
		cw := newWorkload(w, pn.Name)
		if cw.Pending {
			b.c.Workloads = append(b.c.Workloads, cw)
			continue
		}
		if !b.holdsMIG(cw, w, full) {
			for _, gi := range w.GPUs {
				if i, ok := pos[gi]; ok && !slices.Contains(cw.GPUs, i) {
					cw.GPUs = append(cw.GPUs, i)
				}
			}
		}
		if len(cw.GPUs) == 0 {
			continue
		}
		cw.Count = len(cw.GPUs)
		if w.GPUMemoryBytes > 0 || cw.MemPerGPU == 0 {
			cw.MemPerGPU = w.GPUMemoryBytes / uint64(cw.Count)
		}
		for _, i := range cw.GPUs {
			g := &n.GPUs[i]
			g.UsedMilli = min(MilliPerGPU, g.UsedMilli+cw.Milli)
			g.UsedMem += cw.MemPerGPU
			held[i] = true
		}
		b.c.Workloads = append(b.c.Workloads, cw)
	}
	for i, g := range full {
		if !held[i] && g.meanUtil >= b.busyPct {
			n.GPUs[i].Busy = true
		}
	}
	b.c.Nodes = append(b.c.Nodes, n)
}

// newWorkload is a profile's workload as the planner sees it: pending
// (asking for at least one GPU) or running, pinned, a batch job, a
// blocker, its share of a GPU (the gpu_milli label).
func newWorkload(w profile.Workload, node string) *Workload {
	cw := &Workload{ID: w.ID, Name: w.Name, Namespace: w.Labels["namespace"], Kind: w.Kind, Node: node,
		Pending: w.State == profile.StatePending, Count: w.GPUCount, Milli: MilliPerGPU,
		Pinned: w.Labels[PinnedLabel] == "true" || (w.Kind != profile.KindPod && w.Kind != profile.KindJob && w.State != profile.StatePending),
		Job:    w.Kind == profile.KindJob && w.State != profile.StatePending}
	if m, err := strconv.Atoi(w.Labels["gpu_milli"]); err == nil && m > 0 && m < MilliPerGPU {
		cw.Milli = m
	}
	if w.Kind == profile.KindPod && !cw.Pending {
		cw.Blocker = podBlocker(w.Labels[profile.ControllerLabel])
	}
	if cw.Pending && cw.Count < 1 {
		cw.Count = 1
	}
	return cw
}

// podBlocker says what moving a pod of that controller ("Deployment/x",
// "" for none known) loses; "" when its controller brings it back
// elsewhere as it was (a Deployment's, a ReplicaSet's).
func podBlocker(controller string) string {
	kind, _, _ := strings.Cut(controller, "/")
	switch kind {
	case "Deployment", "ReplicaSet":
		return ""
	case "":
		return "no controller is known to bring it back: evicted, it is gone"
	case "Job", "CronJob":
		return "a Job's pod: evicted, its work starts again"
	case "StatefulSet":
		return "a StatefulSet's pod: its volumes may be bound to the node"
	case "DaemonSet":
		return "a DaemonSet's pod: it runs on every node and is not moved"
	}
	return "owned by a " + kind + ", which seedance does not know to bring it back elsewhere"
}

// holdsMIG fills cw from the MIG devices w names by UUID (gpu_uuids), if
// any: it holds their parents, each for the device's share (a 3g slice is
// 3/7 of the GPU, not the whole GPU, whatever index the workload also
// names), with the device's memory when the workload's own is unknown. A
// MIG workload is pinned: moving it needs MIG configured where it goes,
// which the planner does not know.
func (b *ClusterBuilder) holdsMIG(cw *Workload, w profile.Workload, full []gpuSummary) bool {
	milli, mem := map[int]int{}, map[int]uint64{}
	for _, u := range w.GPUUUIDs {
		k := slices.IndexFunc(b.migs, func(m migSummary) bool { return m.uuid == u })
		if k < 0 {
			continue
		}
		m := b.migs[k]
		if i := slices.IndexFunc(full, func(g gpuSummary) bool { return g.uuid == m.parent }); i >= 0 {
			milli[i] += m.milli
			mem[i] += m.memBytes
		}
	}
	if len(milli) == 0 {
		return false
	}
	cw.GPUs, cw.Milli, cw.MemPerGPU, cw.Pinned = nil, 0, 0, true
	for _, i := range slices.Sorted(maps.Keys(milli)) {
		cw.GPUs = append(cw.GPUs, i)
		cw.Milli = max(cw.Milli, min(MilliPerGPU, milli[i]))
		cw.MemPerGPU = max(cw.MemPerGPU, mem[i])
	}
	return true
}

func meanUtil(v profile.Values) float64 {
	s, n := 0.0, 0
	for _, x := range v {
		if !profile.IsNull(x) {
			s += x
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return s / float64(n)
}

// refused is the plan of a profile whose pending work is unknown: nothing
// to do, and why.
func refused(why string) *Plan {
	return &Plan{SchemaVersion: PlanSchema, Moves: []Move{}, ReleasedNodes: []string{},
		Refused: "no node is released: the work waiting for GPUs is unknown (" + why + ")"}
}
