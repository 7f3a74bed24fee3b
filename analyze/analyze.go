package analyze

import (
	"context"
	"errors"
	"fmt"
	"math"
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
	// Queues, when set, adds each queue's quota against its measured use
	// and the hoarding verdict (docs/queues.md).
	Queues *QueueParams
	// Fragmentation adds the memory each GPU held during its idle runs
	// (Report.StrandedMemory).
	Fragmentation bool
	// GPUFigures adds each GPU's figures (Report.GPUFigures).
	GPUFigures bool
	// cut: Cut reads this analysis, and every GPU keeps its utilization
	// and energy track and every workload its labels.
	cut bool
	// cutAt are Cut's times: the work counters sum their increases by
	// piece as they are read (workAcc.byPiece).
	cutAt []time.Time
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
// source once, one GPU at a time. Cancelling ctx stops it between two
// items of a profile (a node's header, a GPU) with ctx's error.
func Analyze(ctx context.Context, sources []Source, p Params) (*Report, error) {
	a, r, err := read(ctx, sources, p)
	if err != nil {
		return nil, err
	}
	a.report(r)
	return r, nil
}

// read reads every source into the analysis' accumulators: the point of
// the largest live state, before the report is made.
func read(ctx context.Context, sources []Source, p Params) (*analysis, *Report, error) {
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
		if len(h.Queues) > 0 { // each input's spans, the latest quota
			a.queueList = profile.MergeQueues(a.queueList, profile.ShiftQueues(h.Queues, in.offset, windowS))
		}
		s.Stream.DropTopologyDetail() // the analysis keeps the compact form only
		s.Stream.ConvertOnly(a.reads())
		if err := s.Stream.Walk(func(it profile.Item) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			return a.item(it, in)
		}); err != nil {
			return nil, nil, err
		}
	}
	if !a.sampled() {
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
	a.keep.uuids = a.keep.uuids || p.Queues != nil
	a.keep.uuids = a.keep.uuids || p.KeepFleet // the planner reads which MIG devices a workload holds
	a.keep.all = p.cut
	for _, t := range p.cutAt {
		a.cutS = append(a.cutS, t.Sub(start).Seconds())
	}
	return a, nil
}

// Reads is the metrics whose values an analysis with p reads: a reader
// that converts only these (profile.Stream.ConvertOnly) changes none of
// its figures. The ledger reads its input files so.
func Reads(p Params) [profile.NumMetrics]bool {
	a := &analysis{p: p}
	if p.Scaling != nil {
		a.weights = resolveWeights(p.Scaling.Weights, p.Scaling.PreferSMActive)
	}
	return a.reads()
}

// CutReads is the metrics whose values Cut reads with p: fewer than an
// analysis does (no bandwidth).
func CutReads(p Params) [profile.NumMetrics]bool {
	p.cut = true
	return Reads(p)
}

// addInput records an input of the report, with its warnings: an
// incomplete run, its notes, the pending work it does not know.
func (r *Report) addInput(name string, h profile.Header) {
	r.Inputs = append(r.Inputs, Input{Name: name, Source: h.Source, StartedAt: h.StartedAt.UTC(), EndedAt: h.EndedAt.UTC(), Complete: h.Complete})
	if !h.Complete {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s is incomplete (the run was interrupted or failed part-way)", name))
	}
	for _, n := range h.Notes {
		if profile.IsInfo(n) {
			r.Summary.Notes = append(r.Summary.Notes, name+": "+n)
			continue
		}
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

// sampled reports whether a GPU has at least one sample.
func (a *analysis) sampled() bool {
	for _, node := range a.order {
		for _, g := range node.gpus {
			if g.sampled {
				return true
			}
		}
	}
	return false
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
	cutS       []float64       // Cut's times, seconds from the window's start
	labels     labelSets       // one copy of each set of workload labels
	models     map[string]string
	keep       workloadKeep // what attribution needs of workloads
	// unscheduled is the work that waits for GPUs on no node (the latest
	// input's profile.Unscheduled).
	unscheduled []profile.Workload
	// queueList is the latest input's queues, their spans in the window's
	// seconds.
	queueList []profile.Queue
	// badClaims are the workloads that name GPUs their node does not
	// report, counterFaults the energy steps no GPU could draw (claims.go).
	badClaims, counterFaults faults
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
	if !a.perGPU && !a.p.tracks() && !a.p.Fragmentation {
		return
	}
	g.ext = &gpuExtra{tracking: a.p.tracks(), keepsMem: a.p.Fragmentation, mem: strandedAcc{prevMem: profile.Null}}
	if a.perGPU || a.p.cut || g.ext.tracking {
		g.ext.rare = &gpuRare{keepsEnergy: a.p.cut || g.ext.tracking}
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

// tracks says whether the analysis splits each GPU's time among its
// holders (attribution, unit figures, queues).
func (p Params) tracks() bool { return p.Attribution != nil || p.Queues != nil }

func (a *analysis) item(it profile.Item, in input) error {
	n := a.node(it.Node)
	if it.End != nil {
		if a.p.tracks() {
			a.endTenure(n, it.End.Workloads, in)
		}
		if l := a.nodeLabels(it.End.Labels); l != nil {
			n.labels = l // the latest input's
		}
		if it.End.Topology != nil {
			n.topology = a.topologies.Intern(it.End.Topology)
		}
		a.badClaims.check(n, it.End.Workloads)
		a.addWork(n, it.End.Workloads, in)
		n.addWorkloads(it.End.Workloads, &a.labels, a.keep, in)
		return nil
	}
	g := it.GPU
	acc := n.gpu(g.UUID)
	if acc == nil {
		if n.ctx == nil {
			n.ctx = &gpuContext{node: n.name, threshold: a.p.IdleThresholdPct, window: a.p.IdleWindow.Seconds(), spark: n.spark, spanS: a.windowS, faults: &a.counterFaults,
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
		acc.model = a.model(g.Model)
	}
	interval := in.interval
	if g.IntervalS > 0 {
		interval = g.IntervalS // the GPU's own spacing (docs/profile-format.md)
	}
	return acc.add(&g.Series, g.Usage, in.offset, interval)
}
