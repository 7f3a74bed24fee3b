package dcgm

import (
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/seedance/seedance/profile"
)

// Mapping maps one dcgm-exporter metric onto a profile column.
type Mapping struct {
	Name   string
	Metric profile.Metric
	Scale  float64
	// Rank orders alternatives for one column: the lowest rank a GPU
	// reports wins (GPU_UTIL over GR_ENGINE_ACTIVE, DRAM_ACTIVE over
	// MEM_COPY_UTIL).
	Rank int
}

// Metrics are the dcgm-exporter metrics seedance reads, and how.
var Metrics = []Mapping{
	{"DCGM_FI_DEV_GPU_UTIL", profile.GPUUtilPct, 1, 0},
	{"DCGM_FI_PROF_GR_ENGINE_ACTIVE", profile.GPUUtilPct, 100, 1}, // where GPU_UTIL is absent, as on MIG
	{"DCGM_FI_PROF_DRAM_ACTIVE", profile.MemBWUtilPct, 100, 0},
	{"DCGM_FI_DEV_MEM_COPY_UTIL", profile.MemBWUtilPct, 1, 1},
	{"DCGM_FI_PROF_SM_ACTIVE", profile.SMActivePct, 100, 0},
	{"DCGM_FI_DEV_FB_USED", profile.MemUsedBytes, 1 << 20, 0}, // MiB
	{"DCGM_FI_PROF_PCIE_TX_BYTES", profile.PCIeTxBytesPerS, 1, 0},
	{"DCGM_FI_PROF_PCIE_RX_BYTES", profile.PCIeRxBytesPerS, 1, 0},
	{"DCGM_FI_PROF_NVLINK_TX_BYTES", profile.NVLinkTxBytesPerS, 1, 0},
	{"DCGM_FI_PROF_NVLINK_RX_BYTES", profile.NVLinkRxBytesPerS, 1, 0},
	{"DCGM_FI_DEV_POWER_USAGE", profile.PowerW, 1, 0},
	{"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", profile.EnergyJ, 1e-3, 0}, // mJ
	{"DCGM_FI_DEV_SM_CLOCK", profile.SMClockMHz, 1, 0},
	{"DCGM_FI_DEV_GPU_TEMP", profile.TempC, 1, 0},
	{"DCGM_FI_DEV_CLOCKS_EVENT_REASONS", profile.ClockEventReasons, 1, 0},
	{"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", profile.ClockEventReasons, 1, 1},
}

// FBFree gives, with FB_USED, a GPU's memory size.
const FBFree = "DCGM_FI_DEV_FB_FREE"

// MetricByName finds a metric's mapping.
func MetricByName(name string) (Mapping, bool) {
	for _, m := range Metrics {
		if m.Name == name {
			return m, true
		}
	}
	return Mapping{}, false
}

// IsBlank reports whether v is one of DCGM's "blank" sentinels (no
// data, not found, not supported, no permission), which dcgm-exporter prints
// as numbers: 9223372036854775792–5 (int64), 2147483632–5 (int32) and
// 140737488355328–31 (fp64). They mean "not measured", never a value.
func IsBlank(v float64) bool {
	switch {
	case v >= 9.2233720368547e18:
		return true
	case v >= 2147483632 && v <= 2147483635:
		return true
	case v >= 140737488355328 && v <= 140737488355331:
		return true
	}
	return false
}

// GPUKey identifies a GPU (or MIG device) in dcgm-exporter labels.
type GPUKey struct {
	Node, UUID string
	GI         string // MIG GPU-instance id, "" for a full GPU
}

// Identity reads the node, GPU and workload labels of one series, as
// the exporters of different versions spell them.
type Identity struct {
	Key   GPUKey
	Index int
	// HasIndex is false when the series carries no gpu label: Index is 0
	// then until another series of the GPU gives it.
	HasIndex                  bool
	Model, PCIBusID, MIGProf  string
	Namespace, Pod, Container string
	// HPCJob is the HPC (Slurm) job dcgm-exporter maps the GPU to
	// (--hpc-job-mapping-dir: the hpc_job label).
	HPCJob string
	// Exporter is "namespace/pod" of dcgm-exporter's own pod when the
	// series shows it (kube-prometheus renames the workload's labels to
	// exported_* and puts the exporter's in pod/namespace/container).
	Exporter string
}

func firstLabel(get func(string) string, names ...string) string {
	for _, n := range names {
		if v := get(n); v != "" {
			return v
		}
	}
	return ""
}

// nodeLabels are the labels that name a GPU's node, the first one set
// winning: dcgm-exporter's Hostname, or what a relabeling put there.
var nodeLabels = []string{"Hostname", "hostname", "node", "kubernetes_node", "instance"}

// NodeLabel is the name of the label that names a series' node, "" when
// none does.
func NodeLabel(get func(string) string) string {
	for _, n := range nodeLabels {
		if get(n) != "" {
			return n
		}
	}
	return ""
}

// ParseLabels extracts the identity from a series' labels; ok is false
// when the series names no GPU.
func ParseLabels(get func(string) string) (Identity, bool) {
	var id Identity
	id.Key.Node = firstLabel(get, nodeLabels...)
	id.Key.UUID = firstLabel(get, "UUID", "uuid")
	gpu := firstLabel(get, "gpu")
	if id.Key.UUID == "" && gpu == "" || id.Key.Node == "" {
		return id, false // no GPU, or no node to put it on
	}
	if id.Key.UUID == "" {
		id.Key.UUID = "gpu" + gpu
	}
	if gpu != "" {
		i, err := strconv.Atoi(gpu)
		if err != nil || i < 0 || i >= profile.MaxGPUsPerNode {
			return id, false // not a GPU index: not a GPU's series
		}
		id.Index, id.HasIndex = i, true
	}
	id.Model = firstLabel(get, "modelName", "model_name")
	id.PCIBusID = normalizeBusID(firstLabel(get, "pci_bus_id", "DCGM_FI_DEV_PCI_BUSID"))
	id.Key.GI = firstLabel(get, "GPU_I_ID")
	id.MIGProf = firstLabel(get, "GPU_I_PROFILE")
	if j := get("hpc_job"); len(j) <= profile.MaxWorkloadIDBytes {
		id.HPCJob = j
	}
	if ep := get("exported_pod"); ep != "" {
		// kube-prometheus layout: the target's pod/namespace/container
		// labels (dcgm-exporter's own pod) pushed the workload's, which
		// dcgm-exporter wrote, to exported_*.
		id.Pod = ep
		id.Namespace = firstLabel(get, "exported_namespace", "pod_namespace", "namespace")
		id.Container = firstLabel(get, "exported_container", "container_name")
		if p := get("pod"); p != "" {
			id.Exporter = get("namespace") + "/" + p
		}
		return id, true
	}
	id.Namespace = firstLabel(get, "namespace", "pod_namespace")
	id.Pod = firstLabel(get, "pod", "pod_name")
	id.Container = firstLabel(get, "container", "container_name")
	// Without exported_*, pod labels are the workload's when dcgm-exporter
	// wrote them, or the exporter's own from service discovery on a GPU
	// that runs nothing: those are not a workload. The builder also drops
	// any pod seen as an exporter on another series (Exporter above).
	if isExporterName(id.Pod) || isExporterName(id.Container) {
		id.Namespace, id.Pod, id.Container = "", "", ""
	}
	return id, true
}

// isExporterName reports whether a pod or container name is dcgm-exporter's
// (nvidia-dcgm-exporter-hblfm, dcgm-exporter).
func isExporterName(s string) bool { return strings.Contains(s, "dcgm-exporter") }

// normalizeBusID writes "00000000:53:00.0" as sysfs and nvidia-smi do:
// "0000:53:00.0".
func normalizeBusID(s string) string {
	s = strings.ToLower(s)
	if len(s) == 16 && strings.HasPrefix(s, "0000") {
		s = s[4:]
	}
	return s
}

// gpuBuild accumulates one GPU's samples from dcgm-exporter series.
type gpuBuild struct {
	id       Identity
	t        []int64 // ms since epoch, ascending
	cols     [profile.NumMetrics]profile.Values
	rank     [profile.NumMetrics]int // rank of the metric that filled each column; -1 none
	fbMiB    float64                 // last FB_USED + FB_FREE, for the memory size
	pods     map[string]*seen        // by namespace/pod
	jobs     map[string]*seen        // HPC jobs seen on it
	done     []segment               // the rows flushed to the builder's row file, in order
	doneRows int
	// spacing is the median time between the samples of the first series
	// of two or more that reached the GPU (ms; 0 until one did), which
	// gives its workloads their tenure when the builder measures spacing.
	spacing int64
}

// seen is a workload on a GPU and the samples that named it, as tenure in
// milliseconds since the epoch.
type seen struct {
	id     Identity
	tenure []profile.Tenure
}

// Builder gathers samples of many GPUs into profile nodes.
type Builder struct {
	gpus      map[GPUKey]*gpuBuild
	exporters map[string]bool // namespace/pod of dcgm-exporter's own pods
	samples   int
	interval  float64 // ms; 0: no tenure
	// measure: each GPU's tenure uses its own measured spacing, and Build
	// writes it as the GPU's interval_s (MeasureSpacing).
	measure bool
	rows    *rowStore // KeepRowsIn's; nil: every row stays in memory
	flushed int       // the samples given before the last Flush
}

// MeasureSpacing makes the builder measure each GPU's sample spacing (its
// target's scrape interval) from the samples themselves: its workloads'
// tenure uses it, and Build writes it as the GPU's interval_s. The
// builder's interval is then only the fallback for a GPU with one sample.
func (b *Builder) MeasureSpacing() { b.measure = true }

// Spacing is the median time between consecutive ascending times (0 for
// fewer than two): a target's scrape interval, robust to missed scrapes
// and jitter.
func Spacing(ts []int64) int64 {
	if len(ts) < 2 {
		return 0
	}
	d := make([]int64, len(ts)-1)
	for i := 1; i < len(ts); i++ {
		d[i-1] = ts[i] - ts[i-1]
	}
	slices.Sort(d)
	return d[(len(d)-1)/2]
}

// NewBuilder returns an empty builder for samples intervalMillis apart
// (the scrape interval), which give the workloads their tenure; 0 leaves
// it out.
func NewBuilder(intervalMillis int64) *Builder {
	return &Builder{gpus: map[GPUKey]*gpuBuild{}, exporters: map[string]bool{}, interval: float64(intervalMillis)}
}

// see records that the series of pairs named a workload on the GPU.
func (b *Builder) see(g *gpuBuild, m map[string]*seen, key string, id Identity, pairs []Pair) {
	w := m[key]
	if w == nil {
		w = &seen{id: id}
		m[key] = w
	}
	if b.interval <= 0 {
		return
	}
	interval := b.interval
	if g.spacing > 0 {
		interval = float64(g.spacing)
	}
	for _, p := range pairs {
		w.tenure = profile.AddTenure(w.tenure, float64(p.TMillis), interval)
	}
}

// GPUs is how many GPUs the builder has samples of.
func (b *Builder) GPUs() int { return len(b.gpus) }

// Samples is how many samples (of every metric) the builder was given.
func (b *Builder) Samples() int { return b.samples }

// Pair is one raw sample.
type Pair struct {
	TMillis int64
	V       float64
}

// Add merges one series of a metric into its GPU. Blank sentinels become
// nulls; a column already filled by a better-ranked metric is kept.
func (b *Builder) Add(id Identity, metric string, pairs []Pair) {
	b.samples += len(pairs)
	g := b.gpus[id.Key]
	if g == nil {
		g = &gpuBuild{id: id, pods: map[string]*seen{}, jobs: map[string]*seen{}}
		for i := range g.rank {
			g.rank[i] = -1
		}
		b.gpus[id.Key] = g
	}
	if id.Model != "" {
		g.id.Model = id.Model
	}
	if id.HasIndex && !g.id.HasIndex {
		g.id.Index, g.id.HasIndex = id.Index, true
	}
	pairs = ordered(pairs)
	if b.measure && g.spacing == 0 {
		g.spacing = pairSpacing(pairs)
	}
	b.seeOwners(g, id, pairs)
	if metric == FBFree {
		if n := len(pairs); n > 0 && !IsBlank(pairs[n-1].V) {
			g.fbMiB = pairs[n-1].V // completed with FB_USED in build
		}
		return
	}
	m, ok := MetricByName(metric)
	if !ok || len(pairs) == 0 {
		return
	}
	if r := g.rank[m.Metric]; r >= 0 && r < m.Rank {
		return
	}
	if r := g.rank[m.Metric]; r > m.Rank {
		g.cols[m.Metric] = nil // a better source replaces the fallback
	}
	g.rank[m.Metric] = m.Rank
	g.merge(pairs)
	g.cols[m.Metric] = g.column(m, pairs)
}

// seeOwners notes the Slurm job, the pod and the exporter the series
// carries.
func (b *Builder) seeOwners(g *gpuBuild, id Identity, pairs []Pair) {
	if id.HPCJob != "" {
		b.see(g, g.jobs, id.HPCJob, id, pairs)
	}
	if id.Pod != "" {
		b.see(g, g.pods, id.Namespace+"/"+id.Pod, id, pairs)
	}
	if id.Exporter != "" {
		b.exporters[id.Exporter] = true
	}
}

// column is the metric's column with the pairs written in, on the GPU's
// time axis (which holds every pair's time).
func (g *gpuBuild) column(m Mapping, pairs []Pair) profile.Values {
	col := g.cols[m.Metric]
	if col == nil {
		col = make(profile.Values, len(g.t))
		for i := range col {
			col[i] = profile.Null
		}
	}
	// Every pair's time is on the axis now; start at the first one.
	j := sort.Search(len(g.t), func(i int) bool { return g.t[i] >= pairs[0].TMillis })
	for _, p := range pairs {
		for g.t[j] < p.TMillis {
			j++
		}
		v := p.V * m.Scale
		// Blank sentinels, and values no GPU can report (a ratio above 1, a
		// negative or astronomic reading), are nulls: every profile a
		// source writes must pass the profile's own limits.
		if IsBlank(p.V) || math.IsNaN(p.V) || math.IsInf(p.V, 0) || v < 0 || v > m.Metric.Limit() {
			v = profile.Null
		}
		col[j] = v
	}
	return col
}

// pairSpacing is Spacing of the pairs' times.
func pairSpacing(pairs []Pair) int64 {
	if len(pairs) < 2 {
		return 0
	}
	ts := make([]int64, len(pairs))
	for i, p := range pairs {
		ts[i] = p.TMillis
	}
	return Spacing(ts)
}

// ordered returns the pairs in time order, one per timestamp (the last
// one given wins): a misbehaving server or exposition may send them
// backwards or twice, and the time axis must ascend.
func ordered(pairs []Pair) []Pair {
	sorted := true
	for i := 1; i < len(pairs); i++ {
		if pairs[i].TMillis <= pairs[i-1].TMillis {
			sorted = false
			break
		}
	}
	if sorted {
		return pairs
	}
	out := append([]Pair(nil), pairs...)
	sort.SliceStable(out, func(a, b int) bool { return out[a].TMillis < out[b].TMillis })
	k := 0
	for i := range out {
		if k > 0 && out[k-1].TMillis == out[i].TMillis {
			out[k-1] = out[i]
			continue
		}
		out[k] = out[i]
		k++
	}
	return out[:k]
}

// merge adds the pairs' timestamps (in order, one per time) to the GPU's
// time axis, re-spacing the existing columns when new times appear (rare:
// dcgm-exporter writes every metric of a GPU at the same scrape time). Only
// the part of the axis from the pairs' first time on is looked at or moved,
// so that merging chunk after chunk costs the chunk, not the axis so far.
func (g *gpuBuild) merge(pairs []Pair) {
	n := len(g.t)
	if n > 0 && len(pairs) == 1 && pairs[0].TMillis == g.t[n-1] {
		return // another metric of the latest scrape
	}
	if n == 0 || pairs[0].TMillis > g.t[n-1] { // appending, the scrape case
		for _, p := range pairs {
			g.t = append(g.t, p.TMillis)
		}
		g.extend()
		return
	}
	from := sort.Search(n, func(i int) bool { return g.t[i] >= pairs[0].TMillis })
	j := from
	missing := false
	for _, p := range pairs {
		for j < n && g.t[j] < p.TMillis {
			j++
		}
		if j == n || g.t[j] != p.TMillis {
			missing = true
			break
		}
	}
	if !missing {
		return
	}
	// The axis from `from` on, merged with the pairs' times.
	old := append([]int64(nil), g.t[from:]...)
	tail := make([]int64, 0, len(old)+len(pairs))
	a, k := 0, 0
	for a < len(old) || k < len(pairs) {
		switch {
		case k == len(pairs) || a < len(old) && old[a] < pairs[k].TMillis:
			tail = append(tail, old[a])
			a++
		case a == len(old) || pairs[k].TMillis < old[a]:
			tail = append(tail, pairs[k].TMillis)
			k++
		default: // on the axis already
			tail = append(tail, old[a])
			a, k = a+1, k+1
		}
	}
	for m := range g.cols {
		col := g.cols[m]
		if col == nil {
			continue
		}
		vals := append(profile.Values(nil), col[from:]...)
		col = col[:from]
		i := 0
		for _, t := range tail {
			v := profile.Null
			if i < len(old) && old[i] == t {
				v = vals[i]
				i++
			}
			col = append(col, v)
		}
		g.cols[m] = col
	}
	g.t = append(g.t[:from], tail...)
}

// extend pads the columns with nulls to the length of the time axis.
func (g *gpuBuild) extend() {
	for m := range g.cols {
		for c := g.cols[m]; c != nil && len(c) < len(g.t); c = g.cols[m] {
			g.cols[m] = append(c, profile.Null)
		}
	}
}

// TimeBounds is the first and last sample time of a GPU in [lo, hi), in
// milliseconds since the epoch; ok is false when it has none there.
func (b *Builder) TimeBounds(key GPUKey, lo, hi int64) (first, last int64, ok bool) {
	g := b.gpus[key]
	if g == nil {
		return 0, 0, false
	}
	i := sort.Search(len(g.t), func(i int) bool { return g.t[i] >= lo })
	j := sort.Search(len(g.t), func(i int) bool { return g.t[i] >= hi })
	if i >= j {
		return 0, 0, false
	}
	return g.t[i], g.t[j-1], true
}

// Rows is how many samples a GPU has in [lo, hi) (milliseconds since the
// epoch): the times any metric was read at.
func (b *Builder) Rows(key GPUKey, lo, hi int64) int {
	if g := b.gpus[key]; g != nil {
		return sort.Search(len(g.t), func(i int) bool { return g.t[i] >= hi }) - sort.Search(len(g.t), func(i int) bool { return g.t[i] >= lo })
	}
	return 0
}

// AddTimes puts sample times on a GPU's time axis, with every metric null
// there unless it has a value: the times a metric that is not read was
// read at, which are samples of the GPU all the same.
func (b *Builder) AddTimes(key GPUKey, times []int64) {
	g := b.gpus[key]
	if g == nil || len(times) == 0 {
		return
	}
	pairs := make([]Pair, len(times))
	for i, t := range times {
		pairs[i] = Pair{TMillis: t}
	}
	g.merge(ordered(pairs))
}
