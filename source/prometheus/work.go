package prometheus

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source"
	"github.com/seedance/seedance/source/dcgm"
)

// servedCounter is a serving engine's counter of work done (docs/units.md,
// Sources): its metric, the unit it counts, the label naming the model
// (none: the server serves one), and the labels its series are summed
// over (a request counter split by why each request finished).
type servedCounter struct {
	metric, unit, model string
	sumOver             []string
	// expr, when set, is the user's PromQL read in place of metric; job,
	// when set, names the label holding a Slurm job id that joins the
	// series (else namespace and pod do, by the labels pod and ns).
	expr, job, pod, ns string
}

// counters are the built-in counters and the user's (units:, docs/units.md).
func counters(user []source.WorkQuery) []servedCounter {
	out := slices.Clone(servedCounters)
	for _, q := range user {
		sc := servedCounter{metric: q.Metric, unit: q.Unit, model: q.ModelLabel, expr: q.Expr, job: q.JobLabel, pod: q.PodLabel, ns: q.NamespaceLabel}
		if sc.expr != "" {
			sc.metric = q.Unit // the series' name in warnings
		}
		out = append(out, sc)
	}
	return out
}

// query is the counter's query over one chunk, and the time to run it:
// a raw read of its metric, or its expression sampled every step.
func (sc servedCounter) query(matchers string, ch timeRange, step time.Duration) (string, time.Time) {
	if sc.expr == "" {
		return chunkQuery{metric: sc.metric}.promQL(matchers, ch)
	}
	return fmt.Sprintf("(%s)[%dms:%dms]", sc.expr, ch.End.Sub(ch.Start).Milliseconds()+1, step.Milliseconds()), ch.End
}

// id is the workload a series of the counter counts for: namespace/pod,
// or a Slurm job id; "" when its labels do not say.
func (sc servedCounter) id(labels map[string]string) string {
	if sc.job != "" {
		return labels[sc.job]
	}
	pod, ns := cmp.Or(sc.pod, "pod"), cmp.Or(sc.ns, "namespace")
	if labels[ns] == "" || labels[pod] == "" {
		return ""
	}
	return labels[ns] + "/" + labels[pod]
}

// servedCounters are the built-in counters (source.ServedCounters), each
// joined to its pod by its namespace and pod labels, as Prometheus'
// Kubernetes service discovery writes them.
var servedCounters = func() []servedCounter {
	var out []servedCounter
	for _, c := range source.ServedCounters {
		out = append(out, servedCounter{metric: c.Metric, unit: c.Unit, model: c.ModelLabel, sumOver: c.SumOver})
	}
	return out
}()

// readWork reads every served counter raw over the chunks, so that a
// restart between two readings is seen as Prometheus' increase() sees it,
// in pushdown as in a raw read. Series without a namespace and a pod
// label cannot be joined to a workload and are left out. start is the
// profile's start, from which the readings' times count.
func (k *kube) readWork(ctx context.Context, c *promClient, matchers string, chunks []timeRange, start time.Time, step time.Duration, user []source.WorkQuery, tick func()) error {
	k.work = map[string][]profile.Work{}
	for _, sc := range counters(user) {
		sums := map[string]*summed{}
		for _, ch := range chunks {
			q, at := sc.query(matchers, ch, step)
			ans, err := c.query(ctx, q, at)
			tick()
			if err != nil {
				return err
			}
			for _, s := range ans.Series {
				sc.add(sums, s, ch)
			}
		}
		for _, key := range slices.Sorted(maps.Keys(sums)) {
			sm := sums[key]
			k.work[sm.id] = append(k.work[sm.id], sm.work(sc, start))
		}
	}
	return nil
}

// summed is one counter of one pod: the readings of its series, which
// work sums over the labels the counter is summed over, reading by
// reading.
type summed struct {
	id, model, series string
	pairs             []dcgm.Pair
}

// add adds one series' readings inside the chunk to its pod's sum.
func (sc servedCounter) add(sums map[string]*summed, s promSeries, ch timeRange) {
	id := sc.id(s.Labels)
	if id == "" {
		return
	}
	labels := maps.Clone(s.Labels)
	delete(labels, "__name__")
	for _, l := range sc.sumOver {
		delete(labels, l)
	}
	key := seriesText(sc.metric, labels)
	sm := sums[key]
	if sm == nil {
		sm = &summed{id: id, model: labels[sc.model], series: key}
		sums[key] = sm
	}
	lo, hi := ch.Start.UnixMilli(), ch.End.UnixMilli()
	for _, p := range s.Pairs {
		if p.TMillis >= lo && p.TMillis < hi && !dcgm.IsBlank(p.V) {
			sm.pairs = append(sm.pairs, p)
		}
	}
}

// work is the pod's counter as the profile holds it: its readings in
// time order, those of one instant (its series' scrape) summed.
func (sm *summed) work(sc servedCounter, start time.Time) profile.Work {
	w := profile.Work{Unit: sc.unit, Model: sm.model, Series: sm.series}
	slices.SortStableFunc(sm.pairs, func(a, b dcgm.Pair) int { return cmp.Compare(a.TMillis, b.TMillis) })
	for i, p := range sm.pairs {
		if i > 0 && p.TMillis == sm.pairs[i-1].TMillis {
			w.V[len(w.V)-1] += p.V
			continue
		}
		w.T = append(w.T, float64(p.TMillis-start.UnixMilli())/1000)
		w.V = append(w.V, p.V)
	}
	return w
}

// seriesText is a series as PromQL writes it: metric{a="x",b="y"}.
func seriesText(metric string, labels map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		parts = append(parts, fmt.Sprintf("%s=%q", k, labels[k]))
	}
	return metric + "{" + strings.Join(parts, ",") + "}"
}

// applyWork gives each pod its counters, and notes the pods whose
// counters found no workload of the read (a server that holds no GPU, or
// one on a node not read).
func (k *kube) applyWork(w *profile.Workload) {
	if ws, ok := k.work[w.ID]; ok && w.State != profile.StatePending {
		w.Work = ws
		if k.workUsed == nil {
			k.workUsed = map[string]bool{}
		}
		k.workUsed[w.ID] = true
	}
}

// workNotes says what of the counters could not be used.
func (k *kube) workNotes() []string {
	var out []string
	if k.workErr != nil {
		out = append(out, fmt.Sprintf("counters of work done (vLLM, SGLang, TGI, Triton, units:) could not be read, so no unit figures: %v", k.workErr))
	}
	var left []string
	for id := range k.work {
		if !k.workUsed[id] {
			left = append(left, id)
		}
	}
	if len(left) > 0 {
		slices.Sort(left)
		out = append(out, fmt.Sprintf("serving counters of %d pod(s) that hold no GPU in the read were left out: %s", len(left), strings.Join(left, ", ")))
	}
	return out
}
