package analyze

// The report made of the accumulators once every input is read: each
// node's figures, the summary, the sections and the timeline.

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/seedance/seedance/pricing"
)

// report finishes every GPU and node and fills r.
func (a *analysis) report(r *Report) {
	pricer := a.p.Pricer
	if pricer == nil {
		pricer = pricing.New(nil, pricing.DefaultGPUHourUSD)
	}
	var t totals
	r.Nodes = make([]NodeReport, 0, len(a.order))
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
	r.Warnings = append(r.Warnings, PriceWarnings(pricer)...)
	r.Warnings = append(r.Warnings, a.badClaims.warnings("workload claim(s) name a GPU their node does not report, so nothing is attributed to them there")...)
	r.Warnings = append(r.Warnings, a.counterFaults.warnings(fmt.Sprintf("energy counter step(s) larger than a GPU can draw (%g kW over the step's time) were left out as counter faults", maxGPUPowerW/1000))...)
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
	idle := nodeIntervals(n.gpus, a.p.IdleWindow.Seconds(), a.windowS)
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
	if a.p.Attribution != nil || a.p.Queues != nil {
		hs, unalloc, total := a.holdings(pricer)
		if at := a.p.Attribution; at != nil {
			a.units(r, hs, at.GroupBy)
			if !at.UnitsOnly {
				r.Attribution = attribution(hs, unalloc, total, at.GroupBy)
				r.Suggestions = append(r.Suggestions, holderSuggestions(hs, at.Rules)...)
			}
		}
		if a.p.Queues != nil {
			a.queues(r, hs, total, *a.p.Queues)
		}
	}
	r.Suggestions = append(r.Suggestions, a.sharingSuggestions(pricer)...)
	if a.p.Fragmentation {
		r.StrandedMemory = a.strandedMemory()
	}
	if a.p.GPUFigures {
		r.GPUFigures = a.gpuFigures()
	}
}

// PriceWarnings are the warnings of a pricer that priced an analysis:
// models without a price, and the user's keys that priced nothing.
func PriceWarnings(pricer *pricing.Pricer) []string {
	var out []string
	if u := pricer.Unmatched(); len(u) > 0 {
		out = append(out, fmt.Sprintf("no price for %s: priced at the default $%.2f per GPU-hour (set --gpu-price)", strings.Join(u, ", "), pricer.Fallback()))
	}
	out = append(out, pricer.Disagreements()...)
	return append(out, pricer.KeyWarnings()...)
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
