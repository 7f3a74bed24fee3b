package analyze

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/seedance/seedance/hwtopo"
	"github.com/seedance/seedance/pricing"
	"github.com/seedance/seedance/profile"
)

// Params are the analysis parameters (docs/analysis.md).
type Params struct {
	IdleThresholdPct float64       // a sample is idle when util < this
	IdleWindow       time.Duration // an idle run counts when it lasts ≥ this
	// StaleAfter: a node whose newest sample ends longer than this before
	// the window does is stale (NodeReport.Stale); 0: the idle window.
	StaleAfter    time.Duration
	UnderusedPct  float64 // a node is under-used when its mean util < this
	IdleNodeShare float64 // a node is idle when idle for at least this share of its observed time
	// Pricer prices a GPU-hour by model: the run's one Pricer, which the
	// planner shares (nil: the default prices).
	Pricer           *pricing.Pricer
	EnergyUSDPerKWh  float64
	SparklineBuckets int
	// PoolBy is the node label that names the nodes' pools (the scaling
	// what-if's, NodeReport.Pool); "" pools them by GPU model.
	PoolBy string
	// Scaling, when set, adds the elastic-scaling what-if.
	Scaling *ScalingParams
	// KeepFleet keeps in Report.Fleet what a migration planner needs of
	// the nodes (recommend.FromReport).
	KeepFleet bool
	// Attribution, when set, adds who held the GPUs and their waste.
	Attribution *AttributionParams
	// Fragmentation adds the memory each GPU held during its idle runs
	// (Report.StrandedMemory).
	Fragmentation bool
	// GPUFigures adds each GPU's figures (Report.GPUFigures).
	GPUFigures bool
	// cut: Cut reads this analysis, and every GPU keeps its utilization
	// and energy track and every workload its labels.
	cut bool
}

// DefaultParams are the documented defaults.
func DefaultParams() Params {
	return Params{IdleThresholdPct: 15, IdleWindow: 60 * time.Second, UnderusedPct: 40, IdleNodeShare: 0.5,
		EnergyUSDPerKWh: 0.12, SparklineBuckets: 40}
}

// MaxScalingPeriods bounds the scaling what-if's periods (a year at 60 s
// is 525,600): its replay and its report grow with them.
const MaxScalingPeriods = 1_000_000

// ErrScaling marks scaling settings that do not fit the inputs.
var ErrScaling = errors.New("scaling settings")

// HoursPerMonth is the month of the projected savings: 365 × 24 / 12.
const HoursPerMonth = 730

// Source is one profile to analyze.
type Source struct {
	Name   string
	Stream *profile.Stream
}

// Analyze merges the sources (profiles of different nodes, or consecutive
// time ranges of the same ones) and computes the report. It reads each
// source once, one GPU at a time.
func Analyze(sources []Source, p Params) (*Report, error) {
	a, r, err := read(sources, p)
	if err != nil {
		return nil, err
	}
	a.report(r)
	return r, nil
}

// read reads every source into the analysis' accumulators: the point of
// the largest live state, before the report is made.
func read(sources []Source, p Params) (*analysis, *Report, error) {
	start, end, err := window(sources)
	if err != nil {
		return nil, nil, err
	}
	windowS := end.Sub(start).Seconds()
	a, err := newAnalysis(p, start, end)
	if err != nil {
		return nil, nil, err
	}
	r := &Report{SchemaVersion: ReportSchema, Window: Window{Start: start.UTC(), End: end.UTC(), DurationS: sig(windowS)}}
	for _, s := range sources {
		h := s.Stream.Header
		r.addInput(s.Name, h)
		a.unscheduled = h.Unscheduled // the latest input's
		in := input{offset: h.StartedAt.Sub(start).Seconds(), interval: h.IntervalS, spanS: h.EndedAt.Sub(h.StartedAt).Seconds(), only: len(sources) == 1}
		s.Stream.DropTopologyDetail() // the analysis keeps the compact form only
		s.Stream.ConvertOnly(a.reads())
		if err := s.Stream.Walk(func(it profile.Item) error { return a.item(it, in) }); err != nil {
			return nil, nil, err
		}
	}
	if a.samples() == 0 {
		names := make([]string, len(sources))
		for i, s := range sources {
			names[i] = s.Name
		}
		return nil, nil, fmt.Errorf("%w: no GPU samples in %s: nothing was observed, so there is nothing to report", profile.ErrInvalid, strings.Join(names, ", "))
	}
	return a, r, nil
}

// window is the span of the sources, in the order of their starts; more
// than profile.MaxSpan is an error.
func window(sources []Source) (start, end time.Time, err error) {
	if len(sources) == 0 {
		return start, end, fmt.Errorf("%w: no input profiles", profile.ErrInvalid)
	}
	sort.SliceStable(sources, func(i, j int) bool {
		return sources[i].Stream.Header.StartedAt.Before(sources[j].Stream.Header.StartedAt)
	})
	start, end = sources[0].Stream.Header.StartedAt, sources[0].Stream.Header.EndedAt
	for _, s := range sources {
		if s.Stream.Header.EndedAt.After(end) {
			end = s.Stream.Header.EndedAt
		}
	}
	if end.Sub(start) > profile.MaxSpan {
		return start, end, fmt.Errorf("%w: the inputs span %s, from %s to %s: more than the %d days one analysis covers",
			profile.ErrInvalid, end.Sub(start).Round(time.Hour), start.Format(time.RFC3339), end.Format(time.RFC3339), int(profile.MaxSpan.Hours()/24))
	}
	return start, end, nil
}

// newAnalysis is the accumulators of an analysis of the window.
func newAnalysis(p Params, start, end time.Time) (*analysis, error) {
	windowS := end.Sub(start).Seconds()
	periods := 0
	if p.Scaling != nil && p.Scaling.Period > 0 {
		periods = int(math.Ceil(windowS/p.Scaling.Period.Seconds() - 1e-9))
		if periods > MaxScalingPeriods {
			return nil, fmt.Errorf("%w: scaling.period %s cuts the %s window into %d periods, more than %d: choose a longer period",
				ErrScaling, p.Scaling.Period, FormatDuration(end.Sub(start)), periods, MaxScalingPeriods)
		}
	}
	a := &analysis{periods: periods, p: p, windowS: windowS, nodes: map[string]*nodeAcc{}, perGPU: true}
	if p.Scaling != nil {
		a.weights = resolveWeights(p.Scaling.Weights, p.Scaling.PreferSMActive)
	}
	if p.Attribution != nil {
		a.keep = workloadKeep{labels: p.Attribution.labels(), uuids: true}
	}
	a.keep.uuids = a.keep.uuids || p.KeepFleet // the planner reads which MIG devices a workload holds
	a.keep.all = p.cut
	return a, nil
}

// addInput records an input of the report, with its warnings: an
// incomplete run, its notes, the pending work it does not know.
func (r *Report) addInput(name string, h profile.Header) {
	r.Inputs = append(r.Inputs, Input{Name: name, Source: h.Source, StartedAt: h.StartedAt.UTC(), EndedAt: h.EndedAt.UTC(), Complete: h.Complete})
	if !h.Complete {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s is incomplete (the run was interrupted or failed part-way)", name))
	}
	for _, n := range h.Notes {
		r.Warnings = append(r.Warnings, name+": "+n)
	}
	if h.PendingUnknown != "" && r.PendingUnknown == "" {
		r.PendingUnknown = name + ": " + h.PendingUnknown
	}
}

// nodeSpread is the population standard deviation (percentage points)
// and variance (0–1 units) of the nodes' mean GPU utilization, each node
// counting once; nil when no node has a mean.
func nodeSpread(nodes []NodeReport) (stddevPct, variance *float64) {
	var us []float64
	for _, n := range nodes {
		if n.AvgGPUUtilPct != nil {
			us = append(us, *n.AvgGPUUtilPct/100)
		}
	}
	if len(us) == 0 {
		return nil, nil
	}
	m := 0.0
	for _, u := range us {
		m += u
	}
	m /= float64(len(us))
	v := 0.0
	for _, u := range us {
		v += (u - m) * (u - m)
	}
	v /= float64(len(us))
	sd, vr := sig(100*math.Sqrt(v)), sig(v)
	return &sd, &vr
}

// samples counts the GPUs with at least one sample.
func (a *analysis) samples() int {
	n := 0
	for _, node := range a.order {
		for _, g := range node.gpus {
			if g.sampled {
				n++
			}
		}
	}
	return n
}

// staleAfter is how old a node's newest sample may be at the window's end
// for the node to be described as it is now: Params.StaleAfter, else the
// idle window.
func (a *analysis) staleAfter() float64 {
	if a.p.StaleAfter > 0 {
		return a.p.StaleAfter.Seconds()
	}
	return a.p.IdleWindow.Seconds()
}

// analysis is the state of one Analyze call.
type analysis struct {
	p       Params
	windowS float64
	nodes   map[string]*nodeAcc
	order   []*nodeAcc
	nGPUs   int // GPUs (and MIG devices) of every node
	weights *loadWeights
	// perGPU: the cluster is small enough (MaxGPUTimelines) for per-GPU
	// timelines; past that, GPUs keep none and the timeline's spread is
	// across nodes, so memory per GPU stays a few hundred bytes.
	perGPU     bool
	periods    int             // scaling periods in the window
	topologies hwtopo.Interner // one copy of each kind of node
	labels     labelSets       // one copy of each set of workload labels
	models     map[string]string
	keep       workloadKeep // what attribution needs of workloads
	// unscheduled is the work that waits for GPUs on no node (the latest
	// input's profile.Unscheduled).
	unscheduled []profile.Workload
}

// model returns one shared copy of a model name.
func (a *analysis) model(m string) string {
	if s, ok := a.models[m]; ok {
		return s
	}
	if a.models == nil {
		a.models = map[string]string{}
	}
	a.models[m] = m
	return m
}

// nodeLabels keeps of a node's labels those analysis reads: the pool
// label and the labels its prices depend on; nil when none.
func (a *analysis) nodeLabels(labels map[string]string) map[string]string {
	var out map[string]string
	keys := []string{a.poolBy()}
	if a.p.Pricer != nil {
		keys = append(keys, a.p.Pricer.LabelKeys()...)
	}
	for _, k := range keys {
		if v, ok := labels[k]; ok && k != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}

// price is a GPU-hour of the model on node n (pricing.Pricer.PriceOn).
func (a *analysis) price(pricer *pricing.Pricer, n *nodeAcc, model string) float64 {
	v, _ := pricer.PriceOn(n.name, n.labels, model)
	return v
}

// poolBy is the node label that names pools, "" when none (pools are GPU
// models).
func (a *analysis) poolBy() string { return a.p.PoolBy }

// keepPerGPU gives a new GPU its own timeline while the cluster is small,
// and drops every GPU's once it is not.
func (a *analysis) keepPerGPU(g *gpuAcc) {
	if a.perGPU && a.nGPUs >= MaxGPUTimelines {
		a.perGPU = false
		for _, n := range a.order {
			for _, other := range n.gpus {
				if other.ext != nil && other.ext.rare != nil {
					other.ext.rare.own = nil
				}
			}
		}
	}
	if !a.perGPU && a.p.Attribution == nil && !a.p.Fragmentation {
		return
	}
	g.ext = &gpuExtra{tracking: a.p.Attribution != nil, keepsMem: a.p.Fragmentation, mem: strandedAcc{prevMem: profile.Null}}
	if a.perGPU || a.p.cut {
		g.ext.rare = &gpuRare{cutting: a.p.cut}
	}
	if a.perGPU {
		g.ext.rare.own = newSparkline(a.windowS, a.p.SparklineBuckets)
	}
}

func (a *analysis) node(name string) *nodeAcc {
	n := a.nodes[name]
	if n == nil {
		n = &nodeAcc{name: name, spark: newSparkline(a.windowS, a.p.SparklineBuckets)}
		if a.p.Scaling != nil && a.p.Scaling.Period > 0 {
			n.demand.periods = a.periods
		}
		a.nodes[name] = n
		a.order = append(a.order, n)
	}
	return n
}

// input is where one input lies in the window: its start (seconds from
// the window's), its sample interval and length, and whether it is the
// only one.
type input struct {
	offset, interval, spanS float64
	only                    bool
}

func (a *analysis) item(it profile.Item, in input) error {
	n := a.node(it.Node)
	if it.End != nil {
		if a.p.Attribution != nil {
			a.endTenure(n, it.End.Workloads, in)
		}
		if l := a.nodeLabels(it.End.Labels); l != nil {
			n.labels = l // the latest input's
		}
		if it.End.Topology != nil {
			n.topology = a.topologies.Intern(it.End.Topology)
		}
		n.addWorkloads(it.End.Workloads, &a.labels, a.keep, in)
		return nil
	}
	g := it.GPU
	acc := n.gpu(g.UUID)
	if acc == nil {
		if n.ctx == nil {
			n.ctx = &gpuContext{node: n.name, threshold: a.p.IdleThresholdPct, window: a.p.IdleWindow.Seconds(), spark: n.spark,
				demand: &n.demand, scaling: a.p.Scaling, weights: a.weights}
		}
		acc = &gpuAcc{uuid: g.UUID, model: a.model(g.Model), share: 1, index: int32(g.Index), memTotal: g.MemoryTotalBytes, mig: g.MIG, ctx: n.ctx}
		a.keepPerGPU(acc)
		if g.MIG != nil {
			acc.share = g.MIG.Share()
		}
		n.addGPU(acc)
		a.nGPUs++
	}
	if acc.model == "" {
		acc.model = g.Model
	}
	interval := in.interval
	if g.IntervalS > 0 {
		interval = g.IntervalS // the GPU's own spacing (docs/profile-format.md)
	}
	return acc.add(&g.Series, in.offset, interval)
}

// report finishes every GPU and node and fills r.
func (a *analysis) report(r *Report) {
	pricer := a.p.Pricer
	if pricer == nil {
		pricer = pricing.New(nil, pricing.DefaultGPUHourUSD)
	}
	var t totals
	if len(a.order) > 0 {
		r.Nodes = make([]NodeReport, 0, len(a.order))
	}
	for _, n := range a.order {
		r.Nodes = append(r.Nodes, a.nodeReport(n, pricer, &t))
	}
	sort.SliceStable(r.Nodes, func(i, j int) bool {
		if r.Nodes[i].IdleCostUSD != r.Nodes[j].IdleCostUSD {
			return r.Nodes[i].IdleCostUSD > r.Nodes[j].IdleCostUSD
		}
		return r.Nodes[i].Name < r.Nodes[j].Name
	})
	placeUnscheduled(r.Nodes, a.unscheduled)
	a.summarize(r, &t)
	r.Params = ReportParams{
		IdleThresholdPct: a.p.IdleThresholdPct, IdleWindowS: a.p.IdleWindow.Seconds(), UnderusedPct: a.p.UnderusedPct, IdleNodeShare: a.p.IdleNodeShare,
		EnergyUSDPerKWh: a.p.EnergyUSDPerKWh, Prices: pricer.Table(), DefaultGPUHourUSD: pricer.Fallback(),
		DefaultPricesUsed: pricer.DefaultsUsed(), UnpricedModelsUsed: pricer.Unmatched(), PoolBy: a.p.PoolBy,
	}
	if u := pricer.Unmatched(); len(u) > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("no price for %s: priced at the default $%.2f per GPU-hour (set --gpu-price)", strings.Join(u, ", "), pricer.Fallback()))
	}
	r.Suggestions = suggest(r.Nodes, a.nodes)
	a.sections(r, pricer)
	r.Timeline = a.timeline(r.Nodes)
	if a.perGPU {
		for i := range r.Nodes {
			for _, g := range a.nodes[r.Nodes[i].Name].gpus {
				if g.share > 0 {
					r.Nodes[i].GPUTimelines = append(r.Nodes[i].GPUTimelines, g.ext.own().values())
				}
			}
		}
	}
}

// sums are GPU-seconds and their weights summed over GPUs (each by its
// share of a physical GPU): observed, idle, utilization, idle cost,
// energy, price per hour.
type sums struct{ obs, idle, util, utilW, cost, energyJ, price float64 }

// totals are the cluster's figures, summed node by node.
type totals struct {
	sums
	bw, bwW                    float64
	covered                    []Interval
	memBWGPUs, fullWindowNodes int
	longestSpan                float64
	energyMeasured             bool
}

// nodeReport finishes a node's GPUs and makes its figures, adding them to
// the cluster's.
func (a *analysis) nodeReport(n *nodeAcc, pricer *pricing.Pricer, t *totals) NodeReport {
	nr := NodeReport{Name: n.name, PendingWorkloads: len(n.pending()), RunningWorkloads: n.runningAt(a.windowS)}
	ns, models, full := a.nodeSums(n, pricer, &nr, t)
	if full {
		t.fullWindowNodes++
	}
	nr.Models = slices.Sorted(maps.Keys(models))
	nr.Pool, _, _ = a.poolOf(n)
	nr.GPUHours = sig(ns.obs / 3600)
	nr.IdleGPUHours = sig(ns.idle / 3600)
	nr.IdleCostUSD = sig(ns.cost)
	nr.EnergyKWh = sig(ns.energyJ / 3.6e6)
	nr.PriceUSDPerHour = sig(ns.price)
	nr.AvgGPUUtilPct = mean(ns.util, ns.utilW)
	cover := n.coverage()
	t.covered = append(t.covered, cover...)
	idle := nodeIntervals(n.gpus, a.p.IdleWindow.Seconds())
	nr.ObservedS = sig(length(cover))
	if obs := length(cover); obs > 0 {
		v := sig(length(idle) / obs)
		nr.IdleShare = &v
		nr.IdleNow = len(idle) > 0 && idle[len(idle)-1].EndS >= cover[len(cover)-1].EndS-eps
		nr.DataAgeS = sig(math.Max(0, a.windowS-cover[len(cover)-1].EndS))
		if nr.DataAgeS > a.staleAfter()+eps {
			// Its data ends too long before the window does: what it
			// does now is not known, so it is not "idle now".
			nr.Stale, nr.IdleNow = true, false
		}
	}
	nr.IdleIntervals = make([]Interval, 0, len(idle))
	for _, iv := range idle {
		nr.IdleIntervals = append(nr.IdleIntervals, Interval{sig(iv.StartS), sig(iv.EndS)})
	}
	nr.UtilSparkline = n.spark.values()
	nr.Verdict = a.verdict(&nr)
	t.obs += ns.obs
	t.idle += ns.idle
	t.util += ns.util
	t.utilW += ns.utilW
	t.cost += ns.cost
	t.energyJ += ns.energyJ
	return nr
}

// nodeSums finishes a node's GPUs and sums their figures, counting its
// physical GPUs and their models into nr; full says whether a GPU's
// utilization was observed for at least one idle window.
func (a *analysis) nodeSums(n *nodeAcc, pricer *pricing.Pricer, nr *NodeReport, t *totals) (ns sums, models map[string]bool, full bool) {
	parents, bwSeen := map[string]bool{}, map[string]bool{}
	for _, g := range n.gpus {
		if p := g.parent(); p != "" {
			parents[p] = true
		}
	}
	models = map[string]bool{}
	for _, g := range n.gpus {
		g.finish()
		if parents[g.uuid] {
			g.share = 0 // its MIG devices stand for it
		}
		price := a.price(pricer, n, g.model) * g.share
		ns.energyJ += g.energyJ()
		t.energyMeasured = t.energyMeasured || g.energyMeasured()
		if g.parent() == "" { // a physical GPU, with or without MIG devices
			nr.GPUs++
			models[shortModel(g.model)] = true
		}
		if g.share == 0 {
			continue
		}
		ns.obs += g.observedS * g.share
		ns.idle += g.idleS * g.share
		ns.util += g.utilSum * g.share
		ns.utilW += g.utilW * g.share
		ns.cost += g.idleS / 3600 * price
		ns.price += price
		t.bw += g.bwSum * g.share
		t.bwW += g.bwW * g.share
		if phys := g.physical(); g.bwW > 0 && !bwSeen[phys] {
			bwSeen[phys] = true
			t.memBWGPUs++
		}
		if k := len(g.cover); k > 0 {
			t.longestSpan = math.Max(t.longestSpan, g.cover[k-1].EndS-g.cover[0].StartS)
			full = full || g.utilW > 0 && g.cover[k-1].EndS-g.cover[0].StartS >= a.p.IdleWindow.Seconds()-eps
		}
	}
	return ns, models, full
}

// summarize fills the summary from the nodes and the totals: the verdict
// counts, and the figures, null where nothing was measured.
func (a *analysis) summarize(r *Report, t *totals) {
	s := &r.Summary
	s.Nodes = len(r.Nodes)
	for _, n := range r.Nodes {
		s.GPUs += n.GPUs
		s.count(n)
	}
	s.GPUHours = sig(t.obs / 3600)
	s.AvgGPUUtilPct = mean(t.util, t.utilW)
	s.AvgMemBWUtilPct = mean(t.bw, t.bwW)
	s.NodeUtilStddevPct, s.NodeUtilVariance = nodeSpread(r.Nodes)
	s.MemBWGPUs = t.memBWGPUs
	coveredS := length(union(t.covered))
	r.Window.CoveredS = sig(coveredS)
	if t.utilW > 0 {
		s.IdleGPUHours = num(t.idle / 3600)
		s.IdleRatio = num(ratio(t.idle, t.obs))
		s.IdleCostUSD = num(t.cost)
		if coveredS > 0 {
			s.ProjectedMonthlySavingsUSD = num(t.cost / (coveredS / 3600) * HoursPerMonth)
		}
	}
	if t.energyMeasured {
		s.EnergyKWh = num(t.energyJ / 3.6e6)
		s.EnergyCostUSD = num(t.energyJ / 3.6e6 * a.p.EnergyUSDPerKWh)
	}
	s.NodesFullWindow = t.fullWindowNodes
	if w := a.p.IdleWindow.Seconds(); t.longestSpan < w-eps {
		s.Notes = append(s.Notes, fmt.Sprintf("no GPU was observed for as long as the %s idle window (the longest for %s), so nothing can count as idle: gate on summary.avg_gpu_util_pct, or pass an --idle-window shorter than the run",
			FormatDuration(a.p.IdleWindow), FormatDuration(time.Duration(t.longestSpan*float64(time.Second)))))
	}
}

// count counts a node by its verdict. An idle node that a workload still
// holds at the window's end is not spare capacity to release: counted
// apart.
func (s *Summary) count(n NodeReport) {
	switch {
	case n.Verdict == VerdictIdle && n.RunningWorkloads > 0:
		s.IdleHeldNodes++
	case n.Verdict == VerdictIdle:
		s.IdleNodes++
	case n.Verdict == VerdictStalled:
		s.StalledNodes++
	case n.Verdict == VerdictUnderused:
		s.UnderusedNodes++
	case n.Verdict == VerdictBusy:
		s.BusyNodes++
	}
}

// sections adds the sections the parameters ask for: scaling, the fleet a
// planner reads, attribution and its holder suggestions, stranded memory,
// each GPU's figures.
func (a *analysis) sections(r *Report, pricer *pricing.Pricer) {
	if a.p.Scaling != nil && a.p.Scaling.Period > 0 {
		r.Scaling = a.scalingReport(pricer)
	}
	if a.p.KeepFleet {
		r.Fleet = a.fleet()
	}
	if a.p.Attribution != nil {
		hs, unalloc, total := a.holdings(pricer)
		r.Attribution = attribution(hs, unalloc, total, a.p.Attribution.GroupBy)
		r.Suggestions = append(r.Suggestions, holderSuggestions(hs, a.p.Attribution.Rules)...)
	}
	if a.p.Fragmentation {
		r.StrandedMemory = a.strandedMemory()
	}
	if a.p.GPUFigures {
		r.GPUFigures = a.gpuFigures()
	}
}

// MaxGPUTimelines is the largest cluster whose per-GPU timelines go into
// the report (for a GPUs × time heatmap); larger ones get nodes × time.
const MaxGPUTimelines = 128

// timeline computes the cluster's utilization over the window: per slice,
// the mean over GPUs of their mean utilization, the 10th and 90th
// percentiles (the spread), and the fraction of nodes inside an idle
// interval. Past MaxGPUTimelines GPUs, the mean and spread are over nodes'
// mean utilization instead.
func (a *analysis) timeline(nodes []NodeReport) Timeline {
	buckets := a.p.SparklineBuckets
	if buckets < 1 {
		buckets = 1
	}
	t := Timeline{BucketS: sig(a.windowS / float64(buckets)), IdleNodeFraction: make([]float64, buckets)}
	vals := make([]float64, 0, a.nGPUs)
	add := func(sp *sparkline, b int) {
		if sp != nil && b < len(sp.wsum) && sp.wsum[b] > 0 {
			vals = append(vals, sp.sum[b]/sp.wsum[b])
		}
	}
	for b := 0; b < buckets; b++ {
		vals = vals[:0]
		for _, n := range a.order {
			if !a.perGPU {
				add(n.spark, b)
				continue
			}
			for _, g := range n.gpus {
				if g.share > 0 {
					add(g.ext.own(), b)
				}
			}
		}
		t.MeanUtilPct = append(t.MeanUtilPct, meanPtr(vals))
		sort.Float64s(vals)
		t.P10UtilPct = append(t.P10UtilPct, percentile(vals, 10))
		t.P90UtilPct = append(t.P90UtilPct, percentile(vals, 90))
	}
	if len(nodes) > 0 && a.windowS > 0 {
		w := a.windowS / float64(buckets)
		for _, n := range nodes {
			for _, iv := range n.IdleIntervals {
				for b := 0; b < buckets; b++ {
					lo, hi := math.Max(iv.StartS, float64(b)*w), math.Min(iv.EndS, float64(b+1)*w)
					if hi > lo {
						t.IdleNodeFraction[b] += (hi - lo) / w / float64(len(nodes))
					}
				}
			}
		}
		for b := range t.IdleNodeFraction {
			t.IdleNodeFraction[b] = sig(t.IdleNodeFraction[b])
		}
	}
	return t
}

func meanPtr(v []float64) *float64 {
	if len(v) == 0 {
		return nil
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	m := round(s/float64(len(v)), 1)
	return &m
}

// percentile is the nearest-rank percentile of sorted values.
func percentile(sorted []float64, p float64) *float64 {
	if len(sorted) == 0 {
		return nil
	}
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	if i < 0 {
		i = 0
	}
	v := round(sorted[i], 1)
	return &v
}

// verdict classifies a node (docs/analysis.md): idle or stalled only when
// idle for at least the idle-node share of its observed time, not after one
// quiet stretch.
func (a *analysis) verdict(n *NodeReport) string {
	mostlyIdle := len(n.IdleIntervals) > 0 && n.IdleShare != nil && *n.IdleShare >= a.p.IdleNodeShare-eps
	switch {
	case mostlyIdle && n.PendingWorkloads > 0:
		return VerdictStalled
	case mostlyIdle:
		return VerdictIdle
	case n.AvgGPUUtilPct == nil:
		return VerdictUnknown
	case *n.AvgGPUUtilPct < a.p.UnderusedPct:
		return VerdictUnderused
	}
	return VerdictBusy
}

// mean is sum/weight rounded, or nil when nothing was weighed: a metric
// that no sample carried is unknown, not 0.
// num is a measured figure, to 9 significant digits.
func num(x float64) *float64 {
	v := sig(x)
	return &v
}

func mean(sum, weight float64) *float64 {
	if weight == 0 {
		return nil
	}
	v := sig(sum / weight)
	return &v
}

// VerdictUnknown is the verdict of a node without utilization data.
const VerdictUnknown = "unknown"

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// Sig rounds x to 9 significant digits, as every figure of a report is
// (docs/analysis.md): for the stages after analysis that compute figures
// of their own.
func Sig(x float64) float64 { return sig(x) }

// sig rounds x to 9 significant digits: enough for every figure to be exact
// to well within 0.1 %, without binary noise in the JSON.
func sig(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	p := math.Pow(10, 8-math.Floor(math.Log10(math.Abs(x))))
	return math.Round(x*p) / p
}

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

// shortModel drops the vendor prefix: "NVIDIA H100 80GB HBM3" → "H100 80GB HBM3".
func shortModel(m string) string {
	if m == "" {
		return "unknown GPU"
	}
	return strings.TrimPrefix(m, "NVIDIA ")
}

// ExactProjectionS is the covered time from which a monthly projection is
// shown to the cent: a week. Below that it is rounded (RoundProjection).
const ExactProjectionS = 7 * 24 * 3600

// RoundProjection rounds a monthly projection to the precision its basis
// supports (docs/analysis.md): 2 significant digits from under an hour of
// covered time, 3 from under a day, whole dollars from under a week, cents
// from a week on.
func RoundProjection(v, coveredS float64) float64 {
	digits := 0
	switch {
	case coveredS < 3600:
		digits = 2
	case coveredS < 24*3600:
		digits = 3
	case coveredS < ExactProjectionS:
		return math.Round(v)
	default:
		return v
	}
	if v == 0 {
		return 0
	}
	p := math.Pow(10, float64(digits-1)-math.Floor(math.Log10(math.Abs(v))))
	return math.Round(v*p) / p
}
