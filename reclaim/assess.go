package reclaim

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/seedance/seedance/pricing"
	"github.com/seedance/seedance/profile"
)

// Verdicts of an assessment, in the order that decides a target's when
// its workloads differ (a busy pod makes its Deployment busy).
const (
	Busy      = "busy"
	Unknown   = "unknown"
	Spared    = "spared"
	Idle      = "idle"      // idle, not yet for idle_for
	Candidate = "candidate" // idle for at least idle_for
)

var verdictRank = map[string]int{Busy: 0, Unknown: 1, Spared: 2, Idle: 3, Candidate: 4}

// Assessment is one target's verdict over the data, with its figures.
type Assessment struct {
	Target  Target
	Verdict string
	// Reason says why, in words ("last active 14:02 UTC", "a gap of 12m
	// in its samples").
	Reason string
	// Workloads are the profile's workloads of the target.
	Workloads []string
	GPUs      int
	Model     string
	// Labels are the owner's labels that route a notice and scope it
	// (namespace, team, user, account, partition, qos).
	Labels map[string]string
	// IdleSince is when its last activity ended (or the data began, when
	// AtLeast); IdleFor runs from it to the data's end.
	IdleSince time.Time
	IdleFor   time.Duration
	AtLeast   bool
	// IdleGPUHours and USDSoFar are what the idle run held and cost, by
	// the ledger's arithmetic (each sample covers its interval, priced at
	// its node's price per GPU-hour); USDPerHour is what holding its GPUs
	// costs an hour.
	IdleGPUHours, USDSoFar, USDPerHour float64
	// DataEnd is the end of the data the verdict rests on.
	DataEnd time.Time
	// Scales says that the target's kind, not one reclaim knows, is a
	// resource the API server serves with a /scale subresource (a custom
	// resource such as an Argo Rollout), found by discovery: it is scaled
	// to 0 as a Deployment is. Otherwise Unscaled, when set, says why
	// discovery found that it cannot be.
	Scales   bool
	Unscaled string
}

// Actionable says why reclaim cannot act on the assessment's target (""
// when it can).
func (a Assessment) Actionable() string {
	switch {
	case a.Scales:
		return ""
	case a.Unscaled != "":
		return a.Unscaled
	}
	return a.Target.Actionable()
}

// Verb is what the action does to the assessment's target, for a notice.
func (a Assessment) Verb() string {
	if a.Scales {
		return "scaled to 0"
	}
	return Verb(a.Target)
}

// Input is what an assessment reads.
type Input struct {
	Streams []*profile.Stream
	Pricer  *pricing.Pricer
	Policy  Policy
	// Now is the time the data must be fresh at.
	Now time.Time
}

// Assess reads the streams and returns each target's assessment, sorted by
// target. A profile that is incomplete makes every target in it unknown.
func Assess(ctx context.Context, in Input) ([]Assessment, error) {
	var all []Assessment
	var reads [profile.NumMetrics]bool
	reads[profile.GPUUtilPct], reads[profile.PowerW] = true, true
	for _, s := range in.Streams {
		s.DropTopologyDetail()
		s.ConvertOnly(reads) // the rest is checked, not converted
		a := &assessor{in: in, h: s.Header}
		if err := s.Walk(func(it profile.Item) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			a.item(it)
			return nil
		}); err != nil {
			return nil, err
		}
		all = append(all, a.out...)
	}
	return merge(all), nil
}

// assessor reads one profile, a node at a time.
type assessor struct {
	in   Input
	h    profile.Header
	gpus []*gpuData
	out  []Assessment
}

// gpuData is what an assessment keeps of one GPU of the node being read.
type gpuData struct {
	index        int
	uuid         string
	mig          bool
	model        string
	share        float64
	intervalS    float64
	t, util, pow []float64
	errs         []float64
}

func (a *assessor) item(it profile.Item) {
	if it.GPU != nil {
		a.gpus = append(a.gpus, a.keep(it.GPU))
		return
	}
	for _, w := range it.End.Workloads {
		if w.State == profile.StatePending || len(w.GPUs)+len(w.GPUUUIDs) == 0 {
			continue
		}
		if as, ok := a.workload(it.End, w); ok {
			a.out = append(a.out, as)
		}
	}
	a.gpus = a.gpus[:0]
}

func (a *assessor) keep(g *profile.GPU) *gpuData {
	d := &gpuData{index: g.Index, uuid: g.UUID, mig: g.MIG != nil, model: g.Model, share: 1, intervalS: a.h.IntervalS,
		t: slices.Clone(g.Series.T), util: slices.Clone(g.Series.GPUUtilPct), pow: slices.Clone(g.Series.PowerW)}
	if g.MIG != nil {
		d.share = g.MIG.Share()
	}
	if g.IntervalS > 0 {
		d.intervalS = g.IntervalS
	}
	for _, e := range g.Errors {
		d.errs = append(d.errs, e.T)
	}
	return d
}

// held are the node's GPUs the workload holds.
func (a *assessor) held(w profile.Workload) []*gpuData {
	var out []*gpuData
	for _, g := range a.gpus {
		if slices.Contains(w.GPUUUIDs, g.uuid) || !g.mig && slices.Contains(w.GPUs, g.index) {
			out = append(out, g)
		}
	}
	return out
}

// workload assesses one workload; ok is false for one that no longer
// holds its GPUs at the data's end.
func (a *assessor) workload(n *profile.Node, w profile.Workload) (Assessment, bool) {
	t := TargetOf(w)
	as := Assessment{Target: t, Workloads: []string{w.ID}, Labels: routeLabels(w, t)}
	gpus := a.held(w)
	as.GPUs = len(gpus)
	if len(gpus) == 0 {
		return a.verdict(as, Unknown, "none of its GPUs is in the data"), true
	}
	as.Model = gpus[0].model
	ev := a.evidence(gpus)
	as.DataEnd = a.at(ev.end)
	tenStart := 0.0
	if k := len(w.Intervals); k > 0 {
		tenStart = w.Intervals[k-1].StartS
		if w.Intervals[k-1].EndS < ev.last {
			return as, false // it let its GPUs go before the data ends
		}
	}
	for _, g := range gpus {
		as.USDPerHour += a.in.Pricer.NodePrice(n.Name, n.Labels, g.model) * g.share
	}
	if why := a.in.Policy.Scope.Out(t, w.Labels); why != "" {
		return a.verdict(as, Spared, "out of scope: "+why), true
	}
	if !a.h.Complete {
		return a.verdict(as, Unknown, "the source's read was incomplete"), true
	}
	nowS := a.in.Now.Sub(a.h.StartedAt).Seconds()
	if stale := nowS - ev.end; stale > a.in.Policy.MaxStaleness.Seconds() {
		return a.verdict(as, Unknown, fmt.Sprintf("stale data: its last sample ended %s ago", dur(stale))), true
	}
	since, atLeast := a.idleSince(gpus, tenStart)
	if why := gapIn(gpus, since, a.in.Policy.MaxGap.Seconds()); why != "" {
		return a.verdict(as, Unknown, why), true
	}
	as.IdleSince, as.AtLeast = a.at(since), atLeast
	as.IdleFor = time.Duration((ev.end - since) * float64(time.Second))
	for _, g := range gpus {
		s := idleSeconds(g, since)
		as.IdleGPUHours += s / 3600 * g.share
		as.USDSoFar += s / 3600 * a.in.Pricer.NodePrice(n.Name, n.Labels, g.model) * g.share
	}
	if len(w.Intervals) > 0 && tenStart > 0 && nowS-tenStart < a.in.Policy.StartupGrace.Seconds() {
		return a.verdict(as, Spared, fmt.Sprintf("started %s ago, inside the startup grace", dur(nowS-tenStart))), true
	}
	if as.IdleFor <= 0 {
		return a.verdict(as, Busy, "active at its last sample"), true
	}
	if as.IdleFor < a.in.Policy.IdleFor {
		return a.verdict(as, Idle, fmt.Sprintf("idle for %s of %s", dur(as.IdleFor.Seconds()), dur(a.in.Policy.IdleFor.Seconds()))), true
	}
	return a.verdict(as, Candidate, ""), true
}

func (a *assessor) verdict(as Assessment, v, reason string) Assessment {
	as.Verdict, as.Reason = v, reason
	return as
}

// at is a time of the profile (seconds from its start).
func (a *assessor) at(s float64) time.Time {
	return a.h.StartedAt.Add(time.Duration(s * float64(time.Second))).UTC()
}

// span is the evidence of a set of GPUs: first is their earliest sample,
// last the earliest of their last samples, end where that sample's
// interval ends.
type span struct{ first, last, end float64 }

func (a *assessor) evidence(gpus []*gpuData) span {
	sp := span{first: math.Inf(1), last: math.Inf(1), end: math.Inf(1)}
	for _, g := range gpus {
		if len(g.t) == 0 {
			return span{first: 0, last: math.Inf(-1), end: math.Inf(-1)}
		}
		sp.first = math.Min(sp.first, g.t[0])
		if l := g.t[len(g.t)-1]; l < sp.last {
			sp.last, sp.end = l, l+g.intervalS
		}
	}
	return sp
}

// active says whether the GPU worked at its sample i.
func (a *assessor) active(g *gpuData, i int) bool {
	p := a.in.Policy
	if i < len(g.util) && g.util[i] >= p.ThresholdPct {
		return true
	}
	return p.PowerVetoW > 0 && i < len(g.pow) && g.pow[i] >= p.PowerVetoW
}

// idleSince is where the workload's last activity ended: the end of the
// last sample at which more than BusyFraction of its GPUs were active,
// else the start of its tenure or of the data (atLeast: it was idle for
// all of the data).
func (a *assessor) idleSince(gpus []*gpuData, tenStart float64) (since float64, atLeast bool) {
	since, found := a.lastActivity(gpus, tenStart)
	if found {
		return since, false
	}
	first := math.Inf(1)
	for _, g := range gpus {
		if i, _ := slices.BinarySearch(g.t, tenStart); i < len(g.t) {
			first = math.Min(first, g.t[i])
		}
	}
	return math.Max(first, tenStart), tenStart == 0
}

// lastActivity is the end of the last sample from tenStart at which more
// than BusyFraction of the GPUs were active. Where any one active GPU is
// activity (BusyFraction 0, or one GPU), it is each GPU's last active
// sample, read backwards; otherwise the samples are counted by time.
func (a *assessor) lastActivity(gpus []*gpuData, tenStart float64) (float64, bool) {
	since, found := math.Inf(-1), false
	if a.in.Policy.BusyFraction == 0 || len(gpus) == 1 {
		for _, g := range gpus {
			for i := len(g.t) - 1; i >= 0 && g.t[i] >= tenStart; i-- {
				if a.active(g, i) {
					since, found = math.Max(since, g.t[i]+g.intervalS), true
					break
				}
			}
		}
		return since, found
	}
	count := map[float64]int{}
	ends := map[float64]float64{}
	for _, g := range gpus {
		for i, t := range g.t {
			if t >= tenStart && a.active(g, i) {
				count[t]++
				ends[t] = math.Max(ends[t], t+g.intervalS)
			}
		}
	}
	for t, c := range count {
		if float64(c) > a.in.Policy.BusyFraction*float64(len(gpus)) && ends[t] > since {
			since, found = ends[t], true
		}
	}
	return since, found
}

// gapIn says what makes the idle run's data unfit: a null utilization, a
// source error, or samples further apart than maxGap after since.
func gapIn(gpus []*gpuData, since, maxGap float64) string {
	for _, g := range gpus {
		prev := since
		for i, t := range g.t {
			if t < since {
				continue
			}
			if i >= len(g.util) || profile.IsNull(g.util[i]) {
				return fmt.Sprintf("GPU %d has no utilization at a sample of its idle run", g.index)
			}
			if t-prev > maxGap+1e-9 && t > since {
				return fmt.Sprintf("a gap of %s in GPU %d's samples", dur(t-prev), g.index)
			}
			prev = t
		}
		for _, e := range g.errs {
			if e >= since {
				return fmt.Sprintf("GPU %d has source errors in its idle run", g.index)
			}
		}
	}
	return ""
}

// idleSeconds is the time the GPU's samples from since cover.
func idleSeconds(g *gpuData, since float64) float64 {
	i, _ := slices.BinarySearch(g.t, since)
	return float64(len(g.t)-i) * g.intervalS
}

// routeLabels are the labels of a workload that route its notice.
func routeLabels(w profile.Workload, t Target) map[string]string {
	out := map[string]string{}
	for _, k := range []string{"team", "user", "account", "partition", "qos", NeverLabel} {
		if v := w.Labels[k]; v != "" {
			out[k] = v
		}
	}
	if t.Namespace != "" {
		out["namespace"] = t.Namespace
	}
	return out
}

// merge folds the workloads of one target into its assessment: the
// target's verdict is its workloads' lowest ranked one; figures add up;
// the idle run is the shortest.
func merge(all []Assessment) []Assessment {
	by := map[Target]int{}
	var out []Assessment
	for _, a := range all {
		i, ok := by[a.Target]
		if !ok {
			by[a.Target] = len(out)
			out = append(out, a)
			continue
		}
		m := &out[i]
		if verdictRank[a.Verdict] < verdictRank[m.Verdict] {
			m.Verdict, m.Reason = a.Verdict, a.Reason
		}
		m.Workloads = append(m.Workloads, a.Workloads...)
		m.GPUs += a.GPUs
		m.IdleGPUHours += a.IdleGPUHours
		m.USDSoFar += a.USDSoFar
		m.USDPerHour += a.USDPerHour
		if a.IdleSince.After(m.IdleSince) {
			m.IdleSince, m.IdleFor, m.AtLeast = a.IdleSince, a.IdleFor, a.AtLeast
		}
		if m.DataEnd.IsZero() || !a.DataEnd.IsZero() && a.DataEnd.Before(m.DataEnd) {
			m.DataEnd = a.DataEnd
		}
	}
	slices.SortFunc(out, func(a, b Assessment) int {
		if a.Target.String() < b.Target.String() {
			return -1
		}
		if a.Target.String() > b.Target.String() {
			return 1
		}
		return 0
	})
	return out
}

// dur writes seconds as 2h10m, 45m, 30s.
func dur(s float64) string {
	d := time.Duration(math.Round(s)) * time.Second
	switch {
	case d >= time.Hour:
		h, m := d/time.Hour, (d%time.Hour)/time.Minute
		if m == 0 {
			return fmt.Sprintf("%dh", h)
		}
		return fmt.Sprintf("%dh%dm", h, m)
	case d >= time.Minute:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return fmt.Sprintf("%ds", d/time.Second)
}
