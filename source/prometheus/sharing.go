package prometheus

import (
	"context"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/seedance/seedance/source/dcgm"

	"github.com/seedance/seedance/profile"
)

// Shared GPUs (docs/sharing.md). What a cluster says of them besides
// dcgm-exporter, read once per profile: what each pod asked of a GPU
// (HAMi's scheduler: vGPUCoreAllocated, vGPUMemoryAllocated by device;
// kube-state-metrics: requests of nvidia.com/gpucores, gpumem and
// volcano's vgpu-cores, vgpu-memory), the device plugin's sharing strategy
// of each node (GPU feature discovery's nvidia.com/gpu.sharing-strategy
// label, in kube_node_labels) and the pods that asked for the renamed
// shared resource (nvidia.com/gpu.shared). Then, node by node, each pod's
// measured utilization of a GPU it shares (HAMi's monitor:
// Device_utilization_desc_of_container).

// useLookbackMS is how far before a node's first sample its pods' readings
// are read: the latest one before it may stand for it.
const useLookbackMS = 120_000

// shareQueries is how many queries readSharing runs.
const shareQueries = 4

// sharing is what readSharing found.
type sharing struct {
	asked    map[string]*profile.Sharing // by namespace/pod
	strategy map[string]string           // by node: time-slicing or mps
	err      error
	bad      rangeNotes // readings out of range, here and in measureUse
}

// request is a resource that asks for part of a GPU: what it sets, its
// largest sensible value and its unit.
type request struct {
	set  func(s *profile.Sharing, v float64)
	max  float64
	unit string
}

// fractional are kube-state-metrics' names of the resources that ask for
// part of a GPU, and what each asks in: cores in percent, memory in MiB.
var fractional = map[string]request{
	"nvidia_com_gpucores":    {func(s *profile.Sharing, v float64) { s.CoresPct = v }, 100, "cores in percent"},
	"volcano_sh_vgpu_cores":  {func(s *profile.Sharing, v float64) { s.CoresPct = v }, 100, "cores in percent"},
	"nvidia_com_gpumem":      {func(s *profile.Sharing, v float64) { s.MemoryBytes = uint64(v) << 20 }, maxMiB, "memory in MiB"},
	"volcano_sh_vgpu_memory": {func(s *profile.Sharing, v float64) { s.MemoryBytes = uint64(v) << 20 }, maxMiB, "memory in MiB"},
	"nvidia_com_gpu_shared":  {func(s *profile.Sharing, v float64) { s.Mode = profile.ShareTimeSlicing }, 1 << 20, "GPUs"},
}

// maxMiB is the most memory a request may ask, in MiB: what the format
// holds in bytes.
const maxMiB = float64(int64(profile.MaxValue) >> 20)

// readSharing reads the requests and strategies; what fails is said in
// the notes, not fatal (the split is then even).
func readSharing(ctx context.Context, c *promClient, matchers string, start, end time.Time, tick func()) *sharing {
	s := &sharing{asked: map[string]*profile.Sharing{}, strategy: map[string]string{}}
	w := end.Sub(start).Milliseconds()
	sel := func(metric, extra string) string {
		return fmt.Sprintf("%s{%s}[%dms]", metric, strings.Trim(matchers+","+extra, ","), w)
	}
	names := make([]string, 0, len(fractional))
	for n := range fractional {
		names = append(names, n)
	}
	sort.Strings(names)
	queries := []string{
		fmt.Sprintf("sum by (namespace, pod, resource) (max_over_time(%s))", sel("kube_pod_container_resource_requests", `resource=~"`+strings.Join(names, "|")+`"`)),
		fmt.Sprintf("max by (podnamespace, podname) (last_over_time(%s))", sel("vGPUCoreAllocated", "")),
		fmt.Sprintf("max by (podnamespace, podname) (last_over_time(%s))", sel("vGPUMemoryAllocated", "")),
		fmt.Sprintf("last_over_time(%s)", sel("kube_node_labels", "")),
	}
	var ans [shareQueries]*promAnswer
	for i, q := range queries {
		a, err := c.query(ctx, q, end)
		tick()
		if err != nil {
			s.err = err
			return s
		}
		ans[i] = a
	}
	for _, x := range ans[0].Series {
		rq, known := fractional[x.Labels["resource"]]
		if v := last(x); known && s.bad.ok("kube_pod_container_resource_requests", x.Labels, v, rq.max, rq.unit) && v > 0 {
			rq.set(s.ask(x.Labels["namespace"]+"/"+x.Labels["pod"]), v)
		}
	}
	for _, x := range ans[1].Series { // HAMi's own figure wins: it is per device
		if v := last(x); s.bad.ok("vGPUCoreAllocated", x.Labels, v, 100, "cores in percent") && v > 0 {
			s.ask(x.Labels["podnamespace"] + "/" + x.Labels["podname"]).CoresPct = v
		}
	}
	for _, x := range ans[2].Series {
		if v := last(x); s.bad.ok("vGPUMemoryAllocated", x.Labels, v, profile.MaxValue, "bytes") && v > 0 {
			s.ask(x.Labels["podnamespace"] + "/" + x.Labels["podname"]).MemoryBytes = uint64(v)
		}
	}
	for _, x := range ans[3].Series {
		switch v := x.Labels["label_nvidia_com_gpu_sharing_strategy"]; v {
		case profile.ShareTimeSlicing, profile.ShareMPS:
			s.strategy[x.Labels["node"]] = v
		}
	}
	return s
}

func (s *sharing) ask(pod string) *profile.Sharing {
	if s.asked[pod] == nil {
		s.asked[pod] = &profile.Sharing{}
	}
	return s.asked[pod]
}

func last(x promSeries) float64 {
	if len(x.Pairs) == 0 {
		return 0
	}
	return x.Pairs[len(x.Pairs)-1].V
}

// apply gives the pods of nodes what they asked and their sharing mode:
// fractional when they asked for cores or memory, MIG on a MIG device,
// else the node's strategy when it shares its GPUs.
func (s *sharing) apply(nodes []profile.Node) {
	for ni := range nodes {
		n := &nodes[ni]
		for wi := range n.Workloads {
			w := &n.Workloads[wi]
			if w.Kind != profile.KindPod || w.State == profile.StatePending {
				continue
			}
			sh := profile.Sharing{}
			if a := s.asked[w.ID]; a != nil {
				sh = *a
				if sh.CoresPct > 0 || sh.MemoryBytes > 0 {
					sh.Mode = profile.ShareFractional
				}
			}
			if sh.Mode == "" && len(w.GPUUUIDs) > 0 && onMIG(n, w.GPUUUIDs[0]) {
				sh.Mode = profile.ShareMIG
			}
			if st := s.strategy[n.Name]; st != "" && (sh.Mode == "" || sh.Mode == profile.ShareTimeSlicing) {
				sh.Mode = st
			}
			if milli, ok := gpuMilli(w.Labels["gpu_milli"]); ok {
				sh.Milli = milli
			}
			if sh != (profile.Sharing{}) {
				w.Sharing = &sh
			}
		}
	}
}

func onMIG(n *profile.Node, uuid string) bool {
	for _, g := range n.GPUs {
		if g.UUID == uuid {
			return g.MIG != nil
		}
	}
	return false
}

// gpuMilli reads openb's gpu_milli pod label.
func gpuMilli(v string) (int, bool) {
	m, err := strconv.Atoi(v)
	if err != nil || m < 1 || m > 1000 {
		return 0, false
	}
	return m, true
}

// sharedGPUs lists the UUIDs of a node's GPUs that two running pods or
// more hold, whose use is worth measuring.
func sharedGPUs(n *profile.Node) []string {
	holders := map[int]int{}
	for _, w := range n.Workloads {
		if w.State != profile.StatePending {
			for _, g := range w.GPUs {
				holders[g]++
			}
		}
	}
	var out []string
	for _, g := range n.GPUs {
		if g.MIG == nil && holders[g.Index] >= 2 {
			out = append(out, g.UUID)
		}
	}
	return out
}

// measureUse reads HAMi's per-container utilization of the node's shared
// GPUs over its samples (startMS is the time its series' t count from)
// and gives each such GPU a usage column per pod measured on it: the mean
// of the pod's readings (its containers' summed, at most 100) in each
// sample's stretch, else its latest reading not older than twice its
// spacing, else null. A reading out of [0, 100] is ignored and counted in
// bad. A failed query leaves the GPUs unmeasured and says
// so in the returned note.
func (r *reading) measureUse(ctx context.Context, n *profile.Node, startMS int64, bad *rangeNotes) string {
	uuids := sharedGPUs(n)
	if len(uuids) == 0 {
		return ""
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, g := range n.GPUs {
		if t := g.Series.T; len(t) > 0 {
			lo, hi = math.Min(lo, t[0]), math.Max(hi, t[len(t)-1])
		}
	}
	if lo > hi {
		return ""
	}
	quoted := make([]string, len(uuids))
	for i, u := range uuids {
		quoted[i] = regexp.QuoteMeta(u)
	}
	span := int64(math.Round((hi-lo)*1000)) + useLookbackMS
	q := fmt.Sprintf(`Device_utilization_desc_of_container{%s}[%dms]`,
		strings.Trim(r.matchers+`,deviceuuid=~"`+strings.Join(quoted, "|")+`"`, ","), span)
	at := time.UnixMilli(startMS + int64(math.Round(hi*1000)) + 1)
	ans, err := r.c.query(ctx, q, at)
	if err != nil {
		return "per-pod GPU utilization (HAMi) unknown, shared GPUs split by request or evenly: " + err.Error()
	}
	byGPU := map[string]map[string][]dcgm.Pair{}
	for _, x := range ans.Series {
		u, pod := x.Labels["deviceuuid"], x.Labels["podnamespace"]+"/"+x.Labels["podname"]
		if byGPU[u] == nil {
			byGPU[u] = map[string][]dcgm.Pair{}
		}
		byGPU[u][pod] = sumPairs(byGPU[u][pod], bad.keep("Device_utilization_desc_of_container", x.Labels, x.Pairs, 100, "percent"))
	}
	for gi := range n.GPUs {
		g := &n.GPUs[gi]
		pods := byGPU[g.UUID]
		for _, pod := range slices.Sorted(maps.Keys(pods)) {
			col := alignUse(g.Series.T, startMS, pods[pod])
			if col != nil && held(n, pod, g.Index) {
				g.Usage = append(g.Usage, profile.Usage{Workload: pod, UtilPct: col})
			}
		}
	}
	return ""
}

func held(n *profile.Node, id string, index int) bool {
	for _, w := range n.Workloads {
		if w.ID == id {
			for _, g := range w.GPUs {
				if g == index {
					return true
				}
			}
		}
	}
	return false
}

// sumPairs adds b's readings to a's (two containers of one pod), by time.
func sumPairs(a, b []dcgm.Pair) []dcgm.Pair {
	if a == nil {
		return b
	}
	byT := map[int64]float64{}
	for _, p := range append(a, b...) {
		byT[p.TMillis] += p.V
	}
	out := make([]dcgm.Pair, 0, len(byT))
	for t, v := range byT {
		out = append(out, dcgm.Pair{TMillis: t, V: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].TMillis < out[j].TMillis })
	return out
}

// alignUse is a pod's readings as a column of the GPU's samples t
// (seconds from startMS): the mean of those in [t[i], t[i+1]) (the last
// sample's stretch as long as the one before it), else the latest before
// t[i] not older than twice the readings' median spacing; nil when no
// sample got a value.
func alignUse(t profile.Values, startMS int64, pairs []dcgm.Pair) profile.Values {
	if len(t) == 0 || len(pairs) == 0 {
		return nil
	}
	lookback := 2 * medianSpacing(pairs)
	out := make(profile.Values, len(t))
	j, got := 0, false
	for i := range t {
		lo := float64(startMS) + math.Round(t[i]*1000)
		hi := lo + 1
		switch {
		case i+1 < len(t):
			hi = float64(startMS) + math.Round(t[i+1]*1000)
		case i > 0:
			hi = lo + (t[i]-t[i-1])*1000
		}
		for j < len(pairs) && float64(pairs[j].TMillis) < lo {
			j++
		}
		sum, k := 0.0, 0
		for m := j; m < len(pairs) && float64(pairs[m].TMillis) < hi; m++ {
			sum, k = sum+pairs[m].V, k+1
		}
		switch {
		case k > 0:
			out[i] = sum / float64(k)
		case j > 0 && lo-float64(pairs[j-1].TMillis) <= lookback:
			out[i] = pairs[j-1].V
		default:
			out[i] = profile.Null
			continue
		}
		out[i] = math.Max(0, math.Min(100, out[i]))
		got = true
	}
	if !got {
		return nil
	}
	return out
}

// medianSpacing is the median time between readings in ms (60 s with one).
func medianSpacing(pairs []dcgm.Pair) float64 {
	if len(pairs) < 2 {
		return 60000
	}
	d := make([]float64, len(pairs)-1)
	for i := range d {
		d[i] = float64(pairs[i+1].TMillis - pairs[i].TMillis)
	}
	sort.Float64s(d)
	return d[len(d)/2]
}
