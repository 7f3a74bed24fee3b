package queues

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/seedance/seedance/profile"
)

// Kueue's own Prometheus metrics (kubernetes-sigs/kueue v0.19.2,
// pkg/metrics/metrics.go), read where the API server is not
// (docs/queues.md, Kueue, from its metrics): a ClusterQueue's GPU quota
// and limits (kueue_cluster_queue_nominal_quota, _borrowing_limit,
// _lending_limit, by cohort, flavor and resource; a limit that is not set
// is +Inf), its root cohort (kueue_cluster_queue_info), and over time
// what it reserved and what waited (kueue_cluster_queue_resource_reservation,
// _resource_pending). They name no workload: the queues they give have
// WorkloadsUnknown set.

// MetricSeries is one series of a metric as read: its labels and its
// samples, ordered by time.
type MetricSeries struct {
	Labels  map[string]string
	Samples []MetricSample
}

// MetricSample is one sample: Unix milliseconds and value.
type MetricSample struct {
	TMillis int64
	V       float64
}

// KueueMetrics is what a read of Kueue's metrics found: the raw samples
// of the quota series at the end of the window (the latest series of a
// queue, flavor and resource counts: a queue whose cohort changed has an
// older series too) and of the reservations and waits over it.
type KueueMetrics struct {
	Nominal, Borrowing, Lending, Info []MetricSeries
	Reserved, Pending                 []MetricSeries
}

// MetricsHold is how long a sample of a gauge holds when no later one
// follows: Prometheus' default lookback (query.lookback-delta), after
// which PromQL itself no longer sees the series.
const MetricsHold = 5 * time.Minute

// FromMetrics gives the ClusterQueues of Kueue's metrics with their spans
// in seconds from start, cut to [start, end], and warnings naming what
// could not be read (a series without its queue, a quota that is not a
// count). A queue's reservations (and waits) are one step function, the
// sum of its GPU resources' series over flavors, each sample holding until
// the next of its series or MetricsHold.
func FromMetrics(m KueueMetrics, start, end time.Time) ([]profile.Queue, []string) {
	qs := map[string]*profile.Queue{}
	unknown := map[string]bool{}
	var warnings []string
	get := func(s MetricSeries) *profile.Queue {
		name := s.Labels["cluster_queue"]
		if name == "" || !IsGPU(s.Labels["resource"]) {
			return nil
		}
		if qs[name] == nil {
			qs[name] = &profile.Queue{Name: name, Kind: profile.QueueKueue, Cohort: s.Labels["cohort"], WorkloadsUnknown: true}
		}
		return qs[name]
	}
	for _, s := range newest(m.Nominal, "cluster_queue", "flavor", "resource") {
		q, v := get(s), latest(s)
		if q == nil {
			continue
		}
		if !(v >= 0 && v <= 1e9) {
			warnings = append(warnings, fmt.Sprintf("kueue_cluster_queue_nominal_quota of ClusterQueue %s flavor %s %s is %v, not a count of GPUs: its quota is unknown",
				q.Name, s.Labels["flavor"], s.Labels["resource"], v))
			unknown[q.Name] = true
			continue
		}
		q.NominalGPUs = addTo(q.NominalGPUs, v)
		if f := s.Labels["flavor"]; f != "" && !slices.Contains(q.Flavors, f) {
			q.Flavors = append(q.Flavors, f)
		}
	}
	limits(newest(m.Borrowing, "cluster_queue", "flavor", "resource"), get, func(q *profile.Queue) **float64 { return &q.BorrowingLimitGPUs })
	limits(newest(m.Lending, "cluster_queue", "flavor", "resource"), get, func(q *profile.Queue) **float64 { return &q.LendingLimitGPUs })
	out := make([]profile.Queue, 0, len(qs))
	reserved, pending := byQueue(m.Reserved), byQueue(m.Pending)
	for _, name := range slices.Sorted(maps.Keys(qs)) {
		q := qs[name]
		if unknown[name] {
			q.NominalGPUs = nil
		}
		q.Admitted = metricSpans(reserved[name], start, end)
		q.Pending = metricSpans(pending[name], start, end)
		if len(q.Admitted)+len(q.Pending) > profile.MaxQueueSpans {
			warnings = append(warnings, fmt.Sprintf("ClusterQueue %s: its reservations and waits change more than %d times in the window: not read", name, profile.MaxQueueSpans))
			q.Admitted, q.Pending = nil, nil
		}
		out = append(out, *q)
	}
	return out, append(warnings, rootCohorts(out, newest(m.Info, "cluster_queue"))...)
}

// newest keeps, of the series that share the values of the key labels,
// the one with the latest sample that is a number (a staleness marker
// reads as NaN); of several as late, the first by their labels.
func newest(ss []MetricSeries, key ...string) []MetricSeries {
	best := map[string]int{}
	var order []string
	lastAt := func(s MetricSeries) int64 {
		if l, ok := lastNumber(s); ok {
			return l.TMillis
		}
		return math.MinInt64
	}
	type keyed struct {
		labels string // fmt.Sprint sorts a map's keys
		s      MetricSeries
	}
	ks := make([]keyed, len(ss))
	for i, s := range ss {
		ks[i] = keyed{fmt.Sprint(s.Labels), s}
	}
	slices.SortStableFunc(ks, func(a, b keyed) int { return strings.Compare(a.labels, b.labels) })
	sorted := make([]MetricSeries, len(ks))
	for i, k := range ks {
		sorted[i] = k.s
	}
	for i, s := range sorted {
		k := ""
		for _, l := range key {
			k += s.Labels[l] + "\x00"
		}
		j, seen := best[k]
		if !seen {
			order = append(order, k)
		}
		if !seen || lastAt(s) > lastAt(sorted[j]) {
			best[k] = i
		}
	}
	out := make([]MetricSeries, 0, len(order))
	for _, k := range order {
		out = append(out, sorted[best[k]])
	}
	return out
}

// limits sums each queue's finite limits of one kind over its flavors
// (+Inf: not set).
func limits(ss []MetricSeries, get func(MetricSeries) *profile.Queue, field func(*profile.Queue) **float64) {
	for _, s := range ss {
		if q, v := get(s), latest(s); q != nil && v >= 0 && v <= 1e9 {
			f := field(q)
			*f = addTo(*f, v)
		}
	}
}

// rootCohorts gives each queue the root of its cohort's tree as
// kueue_cluster_queue_info names it (Kueue's cohorts form trees; the
// queues of a tree borrow from one another). Without it (Kueue's
// MetricsForCohorts feature gate off) a queue keeps its own cohort, with a
// warning.
func rootCohorts(qs []profile.Queue, info []MetricSeries) []string {
	root := map[string]string{}
	for _, s := range info {
		if r := s.Labels["root_cohort"]; r != "" && !math.IsNaN(latest(s)) {
			root[s.Labels["cluster_queue"]] = r
		}
	}
	var own []string
	for i := range qs {
		if r := root[qs[i].Name]; r != "" {
			qs[i].Cohort = r
		} else if qs[i].Cohort != "" {
			own = append(own, qs[i].Name)
		}
	}
	if len(own) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("kueue_cluster_queue_info names no root cohort of ClusterQueue(s) %s (Kueue's MetricsForCohorts feature gate off?): each is in its own cohort, not its tree's root", strings.Join(own, ", "))}
}

// latest is the series' latest sample that is a number, NaN when none.
func latest(s MetricSeries) float64 {
	if l, ok := lastNumber(s); ok {
		return l.V
	}
	return math.NaN()
}

// lastNumber is the series' latest sample that is a number (a staleness
// marker reads as NaN); ok is false when it has none.
func lastNumber(s MetricSeries) (MetricSample, bool) {
	for i := len(s.Samples) - 1; i >= 0; i-- {
		if !math.IsNaN(s.Samples[i].V) {
			return s.Samples[i], true
		}
	}
	return MetricSample{}, false
}

func addTo(p *float64, v float64) *float64 {
	if p == nil {
		return &v
	}
	s := *p + v
	return &s
}

// piece is a sample's hold: value v from a to b (Unix ms).
type piece struct {
	a, b int64
	v    float64
}

// byQueue is the GPU series of ss by their ClusterQueue.
func byQueue(ss []MetricSeries) map[string][]MetricSeries {
	out := map[string][]MetricSeries{}
	for _, s := range ss {
		if q := s.Labels["cluster_queue"]; q != "" && IsGPU(s.Labels["resource"]) {
			out[q] = append(out[q], s)
		}
	}
	return out
}

// metricSpans is one queue's GPU series summed into one step function over
// [start, end]: a span for each stretch of one positive value, in seconds
// from start, naming no workload.
func metricSpans(ss []MetricSeries, start, end time.Time) []profile.QueueSpan {
	from, to := start.UnixMilli(), end.UnixMilli()
	var ps []piece
	for _, s := range ss {
		ps = append(ps, holds(s.Samples, from, to)...)
	}
	return stepSpans(ps, from)
}

// holds is each sample's hold, cut to [from, to]: until the next sample,
// at most MetricsHold. A value that is not a finite count holds nothing.
func holds(ss []MetricSample, from, to int64) []piece {
	var out []piece
	for i, s := range ss {
		b := s.TMillis + MetricsHold.Milliseconds()
		if i+1 < len(ss) {
			b = min(b, ss[i+1].TMillis)
		}
		a, b := max(s.TMillis, from), min(b, to)
		if b > a && s.V > 0 && s.V <= 1e9 {
			out = append(out, piece{a, b, s.V})
		}
	}
	return out
}

// stepSpans sums the pieces into a step function and gives its stretches
// of one positive value as spans in seconds from `from`.
func stepSpans(ps []piece, from int64) []profile.QueueSpan {
	type edge struct {
		t int64
		d float64
	}
	edges := make([]edge, 0, 2*len(ps))
	for _, p := range ps {
		edges = append(edges, edge{p.a, p.v}, edge{p.b, -p.v})
	}
	sort.Slice(edges, func(i, j int) bool { return edges[i].t < edges[j].t })
	var out []profile.QueueSpan
	level := 0.0
	for i := 0; i < len(edges); {
		t := edges[i].t
		for ; i < len(edges) && edges[i].t == t; i++ {
			level += edges[i].d
		}
		if math.Abs(level) < 1e-9 {
			level = 0
		}
		if k := len(out) - 1; k >= 0 && out[k].EndS < 0 { // open
			if math.Abs(level-out[k].GPUs) < 1e-9 {
				continue
			}
			out[k].EndS = float64(t-from) / 1000
		}
		if level > 0 && i < len(edges) {
			out = append(out, profile.QueueSpan{GPUs: level, StartS: float64(t-from) / 1000, EndS: -1})
		}
	}
	return out
}
