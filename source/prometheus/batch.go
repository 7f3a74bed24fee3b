package prometheus

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/seedance/seedance/source"
	"github.com/seedance/seedance/source/dcgm"
)

// DefaultBatchSamples is how many sample values one batch of nodes holds
// in memory at most (about 20 bytes each; one chunk of it when finished
// chunks go to the row file): the working set of a read, whatever the
// range and the cluster's size.
const DefaultBatchSamples = 2_500_000

// discovery is what a first pass over the range says of the cluster: its
// nodes, with the label that names each and its GPUs, and the pods that
// ran on them.
type discovery struct {
	nodes   map[string]*foundNode
	running map[string]bool // namespace/pod
	// counts, when the discovery counted the samples of the one chunk a
	// pushdown read has, are each metric's count per GPU over it (by the
	// metric's position in the names read): the answers the chunk's count
	// queries would give (pushdown.given).
	counts *counts
	// clusters are the values of the series' cluster label ("" for a
	// series without one), to name the profile's cluster; external is the
	// server's cluster external label, for series that carry none.
	clusters map[string]bool
	external string
}

type foundNode struct {
	label     string                 // the series' label that names the node (Hostname…)
	uuidLabel string                 // the one that names its GPUs (UUID, uuid), "" when none does
	gpus      map[dcgm.GPUKey]uint32 // the metrics (bits by index in the names read) each has
	// mixed: some series of the node are named by another label than
	// label (a batch's matcher on label would not select them).
	mixed bool
}

// discover lists the series of every metric read, with one value each
// (last_over_time over the range), and keeps their labels. With count
// (a pushdown read of one chunk), the value is the metric's sample count
// over that chunk instead (count_over_time, the chunk's own count query),
// so that the chunk need not ask it again: a 5-minute read asks half the
// queries.
func discover(ctx context.Context, c *promClient, names []string, o Options, matchers string, count *timeRange, tick func()) (*discovery, []string, error) {
	d := &discovery{nodes: map[string]*foundNode{}, running: map[string]bool{}, clusters: map[string]bool{}}
	if count != nil {
		d.counts = newCounts(len(names))
	}
	var warnings []string
	err := runOrdered(ctx, len(names), o.Concurrency, func(ctx context.Context, i int) (any, error) {
		if count != nil {
			q, at := chunkQuery{metric: names[i], fn: "count_over_time"}.promQL(matchers, *count)
			return c.query(ctx, q, at)
		}
		q := fmt.Sprintf("last_over_time(%s[%dms])", withMatchers(names[i], matchers), o.End.Sub(o.Start).Milliseconds())
		return c.query(ctx, q, o.End)
	}, func(i int, res any) error {
		ans := res.(*promAnswer)
		warnings = append(warnings, ans.Warnings...)
		for _, s := range ans.Series {
			get := func(k string) string { return s.Labels[k] }
			id, ok := dcgm.ParseLabels(get)
			if !ok {
				continue
			}
			n := d.nodes[id.Key.Node]
			if n == nil {
				n = &foundNode{label: dcgm.NodeLabel(get), gpus: map[dcgm.GPUKey]uint32{}}
				d.nodes[id.Key.Node] = n
			}
			n.mixed = n.mixed || dcgm.NodeLabel(get) != n.label
			if d.counts != nil && len(s.Pairs) > 0 {
				d.counts.add(i, id.Key, int(s.Pairs[0].V))
			}
			for _, l := range []string{"UUID", "uuid"} {
				if get(l) != "" && n.uuidLabel == "" {
					n.uuidLabel = l
				}
			}
			n.gpus[id.Key] |= 1 << i
			d.clusters[get("cluster")] = true
			if id.Pod != "" {
				d.running[id.Namespace+"/"+id.Pod] = true
			}
		}
		tick()
		return nil
	})
	return d, warnings, err
}

// batch is whole nodes read together, selected by one matcher.
type batch struct {
	nodes     []string
	matcher   string // Hostname=~"node-a|node-b"
	gpus      map[dcgm.GPUKey]uint32
	uuidLabel string // the label that names every GPU of the batch, "" when not one
	mixed     bool   // some node's series are not all named by the matcher's label
}

// batches groups the nodes, by name, into batches of at most budget sample
// values (one node at least), each of nodes named by the same label.
// perGPU is what one GPU holds at once: a chunk's samples when finished
// chunks go to the builder's row file, the range's when they stay in
// memory.
func (d *discovery) batches(perGPU, budget int) []batch {
	byLabel := map[string][]string{}
	for name, n := range d.nodes {
		byLabel[n.label] = append(byLabel[n.label], name)
	}
	labels := make([]string, 0, len(byLabel))
	for l := range byLabel {
		labels = append(labels, l)
	}
	sort.Strings(labels)
	var out []batch
	for _, label := range labels {
		names := byLabel[label]
		sort.Strings(names)
		var cur []string
		size := 0
		flush := func() {
			if len(cur) > 0 {
				bt := batch{nodes: cur, matcher: nodeMatcher(label, cur), gpus: map[dcgm.GPUKey]uint32{}, uuidLabel: d.nodes[cur[0]].uuidLabel}
				for _, name := range cur {
					for k, m := range d.nodes[name].gpus {
						bt.gpus[k] = m
					}
					if d.nodes[name].uuidLabel != bt.uuidLabel {
						bt.uuidLabel = ""
					}
					bt.mixed = bt.mixed || d.nodes[name].mixed
				}
				out = append(out, bt)
				cur, size = nil, 0
			}
		}
		for _, name := range names {
			s := len(d.nodes[name].gpus) * perGPU
			if len(cur) > 0 && size+s > budget {
				flush()
			}
			cur = append(cur, name)
			size += s
		}
		flush()
	}
	return out
}

// nodeMatcher selects the series of the named nodes.
func nodeMatcher(label string, nodes []string) string {
	quoted := make([]string, len(nodes))
	for i, n := range nodes {
		quoted[i] = regexp.QuoteMeta(n)
	}
	return fmt.Sprintf("%s=~%q", label, strings.Join(quoted, "|"))
}

// samplesPerGPU estimates the sample values of one GPU over a span: every
// metric at every step (with pushdown, at most three metrics).
func samplesPerGPU(o Options, span time.Duration, metrics int) int {
	if o.Pushdown {
		metrics = min(metrics, 3)
	}
	step := o.Step
	if step <= 0 {
		step = AssumedStep
	}
	steps := math.Ceil(span.Seconds() / step.Seconds())
	return int(math.Min(steps*float64(metrics), math.MaxInt32))
}

// reading is the state of one Read across its batches.
type reading struct {
	c        *promClient
	o        Options
	names    []string
	matchers string
	chunks   []timeRange
	win      timeRange // the window asked for, without its context
	warnings []string
	spacing  spacings
	done     int // queries
	total    int
	gpus     int // read so far, of batches before the current one
	whole    int // nodes emitted whole
	samples  int
	// aggregates counts the values pushdown read in place of raw samples,
	// fromAggregates the readings it made of them (counted in samples).
	aggregates, fromAggregates int
	found                      *discovery
}

func (r *reading) tick(b *dcgm.Builder) {
	r.done++
	if r.o.OnProgress != nil {
		p := source.ReadProgress{Done: r.done, Total: r.total, GPUs: r.gpus, Samples: r.samples}
		if b != nil {
			p.GPUs += b.GPUs()
			p.Samples += b.Samples()
		}
		r.o.OnProgress(p)
	}
}

// chunkQuery is one query of every chunk: a raw read of a metric (fn ""),
// or, with pushdown, an aggregate of one over the chunk; extra narrows it
// (a matcher on some GPUs' UUIDs).
type chunkQuery struct {
	metric, fn, extra string
}

// promQL is the query over one chunk [start, end) and the time to run it
// at. A raw read is the chunk's range selector at its end; an aggregate is
// evaluated at end − 1 ms, so that no sample at end is in it.
//
// Engines differ at a range selector's left edge: Prometheus 2.x includes
// a sample exactly on it, VictoriaMetrics and Prometheus 3 do not. Every
// window is therefore asked 1 ms wider on the left, from start − 1 ms, so
// that every engine answers with the sample exactly at start; seedance
// cuts what lies before start from raw answers (addSeries), and reads raw
// where Prometheus 2.x could have put a sample at start − 1 ms into an
// aggregate (pushdown.edge). Any two engines then read the same samples,
// at any --start, by construction.
func (q chunkQuery) promQL(matchers string, ch timeRange) (string, time.Time) {
	ch.Start = ch.Start.Add(-time.Millisecond)
	if q.extra != "" {
		if matchers != "" {
			matchers += ","
		}
		matchers += q.extra
	}
	if q.fn == "" {
		return fmt.Sprintf("%s[%dms]", withMatchers(q.metric, matchers), ch.End.Sub(ch.Start).Milliseconds()), ch.End
	}
	at := ch.End.Add(-time.Millisecond)
	return fmt.Sprintf("%s(%s[%dms])", q.fn, withMatchers(q.metric, matchers), at.Sub(ch.Start).Milliseconds()), at
}

// rawPlan reads the metrics raw.
func (r *reading) rawPlan(names []string, extra map[string]string) []chunkQuery {
	out := make([]chunkQuery, len(names))
	for i, n := range names {
		out[i] = chunkQuery{metric: n, extra: extra[n]}
	}
	return out
}

// readBatch reads every metric of one batch's nodes, chunk by chunk, into
// a builder. Each answer goes into the builder as soon as it is next in
// order, and each finished chunk's rows go to the builder's row file
// (unless the read is kept in memory), so that memory holds one chunk of
// the batch. On an error it returns what was read, whole up to readUntil.
// The caller builds the nodes from the builder and closes it.
func (r *reading) readBatch(ctx context.Context, bt batch) (b *dcgm.Builder, readUntil time.Time, err error) {
	o := r.o
	step := o.Step
	if step <= 0 {
		step = AssumedStep
	}
	b = dcgm.NewBuilder(step.Milliseconds())
	b.MeasureSpacing()
	if !o.inMemory {
		b.KeepRowsIn(o.TempDir)
	}
	matchers := bt.matcher
	if r.matchers != "" {
		matchers = r.matchers + "," + bt.matcher
	}
	plan := r.rawPlan(r.names, nil)
	var pd *pushdown
	if o.Pushdown {
		pd = r.newPushdown(bt)
		plan = pd.plan
		r.total += (len(plan) - len(r.names)) * len(r.chunks)
	}
	type job struct{ query, chunk int }
	var jobs []job
	for ch := range r.chunks {
		for q := range plan {
			jobs = append(jobs, job{q, ch})
		}
	}
	readUntil = o.Start
	answered := 0 // answers of the current chunk
	err = runOrdered(ctx, len(jobs), o.Concurrency, func(ctx context.Context, i int) (any, error) {
		j := jobs[i]
		q, at := plan[j.query].promQL(matchers, r.chunks[j.chunk])
		return r.c.query(ctx, q, at)
	}, func(i int, res any) error {
		ans := res.(*promAnswer)
		r.warnings = append(r.warnings, ans.Warnings...)
		q, ch := plan[jobs[i].query], r.chunks[jobs[i].chunk]
		if pd != nil {
			pd.answer(q, ch, ans.Series)
		}
		if q.fn == "" {
			for _, s := range ans.Series {
				addSeries(b, q.metric, s, ch.Start, ch.End)
			}
		}
		r.tick(b)
		if answered++; answered < len(plan) {
			return nil
		}
		answered = 0
		return r.finishChunk(ctx, b, pd, bt, matchers, ch, &readUntil)
	})
	r.gpus += b.GPUs()
	r.samples += b.Samples()
	return b, readUntil, err
}

// finishChunk completes a chunk whose every answer is in the builder: its
// pushdown reads, the bound on what one batch holds, and the move of its
// rows to the row file. readUntil becomes the chunk's end.
func (r *reading) finishChunk(ctx context.Context, b *dcgm.Builder, pd *pushdown, bt batch, matchers string, ch timeRange, readUntil *time.Time) error {
	if pd != nil {
		if err := pd.finish(ctx, b, matchers, ch); err != nil {
			return err
		}
	}
	*readUntil = ch.End
	if o := r.o; o.MaxSamples > 0 && b.Held() > o.MaxSamples {
		return fmt.Errorf("%w: more than %d samples (%d GPUs of %d nodes read together) in the chunk that ends at %s: narrow it (--selector, a shorter --prometheus-chunk), lower prometheus.batch_samples, or raise prometheus.max_samples (about 20 bytes of memory each)",
			ErrTooManySamples, o.MaxSamples, b.GPUs(), len(bt.nodes), ch.End.UTC().Format(time.RFC3339))
	}
	return b.Flush(ch.End.UnixMilli())
}
