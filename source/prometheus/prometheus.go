package prometheus

import (
	"cmp"
	"context"
	"fmt"
	"github.com/seedance/seedance/internal/kubeapi"
	"github.com/seedance/seedance/source/dra"
	"github.com/seedance/seedance/source/queues"
	"maps"
	"math"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/seedance/seedance/internal/httpc"

	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source"
	"github.com/seedance/seedance/source/dcgm"

	"github.com/prometheus/common/config"
)

// Options configures the Prometheus source.
type Options struct {
	URL        string
	HTTP       config.HTTPClientConfig
	Start, End time.Time
	// Step is the scrape interval the user says dcgm-exporter has; 0:
	// auto. Either way each GPU's interval_s is the spacing measured on
	// its own samples (Step is only assumed for a GPU with one sample), so
	// the figures are the data's whatever Step is; a Step that the data
	// contradicts is noted in the profile.
	Step time.Duration
	// Selector narrows every query, e.g. {cluster="a"}.
	Selector    string
	Chunk       time.Duration // longest range in one query
	Concurrency int
	Timeout     time.Duration // per query
	Retries     int
	Backoff     time.Duration
	Generator   profile.Generator
	// OnProgress is called after each query.
	OnProgress func(source.ReadProgress)
	// Kube, when set, is the API server whose DRA ResourceClaims say
	// which pods hold which GPUs (docs/sharing.md).
	Kube *kubeapi.Client
	// MaxSamples bounds the samples one batch of nodes holds in memory
	// (about 20 bytes each): one chunk of it when ReadNodes keeps finished
	// chunks on disk; past it the read stops with ErrTooManySamples. 0: no
	// bound.
	MaxSamples int
	// BatchSamples is the sample values one batch of nodes is sized to
	// hold in memory (one chunk of it with ReadNodes, the whole range with
	// Read); 0: DefaultBatchSamples.
	BatchSamples int
	// Pushdown reads utilization raw and the energy counter as exact
	// aggregates, and no other metric (docs/sources.md, Pushdown).
	Pushdown bool
	// Before and After are read around [Start, End) as context samples
	// (docs/profile-format.md): the profile's window stays [Start, End),
	// and the samples outside it fix the figures at its edges.
	Before, After time.Duration
	// Align, with Pushdown, puts a chunk edge at every multiple of it (a
	// ledger's buckets): a chunk's energy aggregate then never straddles
	// a bucket.
	Align time.Duration
	// TempDir is where ReadNodes keeps the rows of a batch's finished
	// chunks until its nodes are built ("" for the system's temporary
	// directory): its memory is then one chunk of a batch, whatever the
	// range.
	TempDir string
	// Work reads the serving engines' counters of work done (docs/units.md)
	// beside dcgm-exporter's series.
	Work bool
	// Units are the user's counters (units:), read with Work.
	Units []source.WorkQuery
	// inMemory keeps every row in memory (Read, which holds the whole
	// profile anyway).
	inMemory bool
}

// ErrTooManySamples stops a read that would hold more samples than
// Options.MaxSamples: a setting to change, not a fault.
var ErrTooManySamples = fmt.Errorf("%w: too many samples", source.ErrSettings)

// ErrNoMetrics is returned when no dcgm-exporter series match.
var ErrNoMetrics = fmt.Errorf("%w: no dcgm-exporter metrics match", source.ErrNothingObserved)

// selectorMatchers turns "{a="b",c=~"d"}" into `a="b",c=~"d"`.
func selectorMatchers(sel string) (string, error) {
	sel = strings.TrimSpace(sel)
	if sel == "" {
		return "", nil
	}
	if !strings.HasPrefix(sel, "{") || !strings.HasSuffix(sel, "}") {
		return "", fmt.Errorf("--selector %q must be label matchers in braces, e.g. {cluster=\"a\"}", sel)
	}
	return strings.TrimSpace(sel[1 : len(sel)-1]), nil
}

func withMatchers(metric, matchers string) string {
	if matchers == "" {
		return metric
	}
	return metric + "{" + matchers + "}"
}

// Read reads the dcgm-exporter metrics of [Start, End] from Prometheus into
// a profile in memory. See ReadNodes.
func Read(ctx context.Context, o Options) (*profile.Profile, error) {
	var nodes []profile.Node
	o.inMemory = true
	p, err := ReadNodes(ctx, o, func(ns []profile.Node) error {
		nodes = append(nodes, ns...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	p.Nodes = nodes
	return p, nil
}

// ReadNodes reads the dcgm-exporter metrics of [Start, End] from
// Prometheus. It reads raw samples with their own timestamps through
// range-vector selectors, in chunks, so that a missed scrape stays a gap
// instead of being filled by Prometheus's 5-minute lookback. A first pass
// (last_over_time of every metric) finds the nodes; they are then read in
// batches of whole nodes of at most BatchSamples sample values, and each
// batch's nodes go to emit, by name, before the next batch is read: memory
// holds one batch, whatever the range or the number of nodes. It returns
// the profile's header (no nodes): whether the read was complete, and its
// notes.
func ReadNodes(ctx context.Context, o Options, emit func([]profile.Node) error) (*profile.Profile, error) {
	r, err := newReading(o)
	if err != nil {
		return nil, err
	}
	defer r.closeIdle()
	o = r.o
	matchers := r.matchers
	r.total = len(r.names) + kubeQueries
	if o.Kube == nil {
		r.total += kueueQueries
	}
	if o.Work {
		r.total += len(counters(o.Units)) * len(r.chunks)
	}
	var count *timeRange
	if o.Pushdown && len(r.chunks) == 1 {
		count = &r.chunks[0]
	}
	d, warnings, err := discover(ctx, r.c, r.names, o, matchers, count, func() { r.tick(nil) })
	r.warnings, r.found = warnings, d
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, fmt.Errorf("%w before any chunk of the range was read: %v", source.ErrInterrupted, ctx.Err())
	case err != nil:
		return nil, err
	case len(d.nodes) == 0:
		return nil, noMetrics(o)
	}
	if len(d.clusters) == 1 && d.clusters[""] {
		d.external = r.c.externalCluster(ctx)
	}
	batches := d.batches(samplesPerGPU(o, r.held(), len(r.names)), o.BatchSamples)
	r.total += len(batches) * len(r.names) * len(r.chunks)
	k, err := r.enrichment(ctx, matchers)
	if err != nil {
		return nil, err
	}
	p := &profile.Profile{SchemaVersion: profile.SchemaVersion, Generator: o.Generator, Source: profile.SourcePrometheus,
		StartedAt: r.win.Start.UTC(), EndedAt: r.win.End.UTC(), Complete: true, ContextS: max(o.Before, o.After).Seconds()}
	defer func() { r.spacing.finish(p, o.Step) }()
	emitted := 0
	for bi, bt := range batches {
		b, readUntil, err := r.readBatch(ctx, bt)
		interrupted := err != nil && ctx.Err() != nil
		if err != nil && !interrupted {
			b.Close()
			return nil, err
		}
		err = r.emitBatch(ctx, b, readUntil, interrupted, k, d, func(n profile.Node) error {
			emitted++
			return emit([]profile.Node{n})
		})
		if cerr := b.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("keep rows: %w", cerr)
		}
		if err != nil {
			return nil, err
		}
		if !interrupted {
			continue
		}
		if emitted == 0 {
			return nil, fmt.Errorf("%w before any chunk of the range was read: %v", source.ErrInterrupted, ctx.Err())
		}
		p.Complete = false
		if bi == 0 && readUntil.Before(r.win.End) {
			p.EndedAt = readUntil.UTC() // nothing was read past it
		}
		p.Notes = append(dedupe(r.warnings), fmt.Sprintf("interrupted: read %d of %d nodes whole; %s up to %s of the range asked (%s to %s); pending pods not read",
			r.whole, len(d.nodes), strings.Join(bt.nodes, ", "), readUntil.UTC().Format(time.RFC3339),
			r.win.Start.UTC().Format(time.RFC3339), r.win.End.UTC().Format(time.RFC3339)))
		return p, nil
	}
	if emitted == 0 {
		return nil, noMetrics(o)
	}
	r.finish(p, k, d)
	return p, nil
}

// enrichment is what the read adds to dcgm-exporter's series:
// kube-state-metrics', the counters of work done when asked for, and the
// DRA claims of the API server when one is given.
func (r *reading) enrichment(ctx context.Context, matchers string) (*kube, error) {
	o := r.o
	k := readKube(ctx, r.c, matchers, o.Start, o.End, r.win, func() { r.tick(nil) })
	if o.Work {
		step := cmp.Or(o.Step, AssumedStep)
		k.workErr = k.readWork(ctx, r.c, matchers, r.chunks, r.win.Start, step, o.Units, func() { r.tick(nil) })
	}
	if o.Kube != nil {
		var err error
		if k.claims, err = dra.Read(ctx, o.Kube); err != nil {
			return nil, fmt.Errorf("DRA claims from the API server (--kubeconfig): %w", err)
		}
		if k.queues, err = queues.Read(ctx, o.Kube); err != nil {
			return nil, fmt.Errorf("queues from the API server (--kubeconfig): %w", err)
		}
	} else {
		k.kueue = readKueueMetrics(ctx, r.c, matchers, o.Start, o.End, func() { r.tick(nil) })
	}
	return k, nil
}

// emitBatch builds a batch's nodes one at a time and hands them to emit,
// each with its pods and labels from kube-state-metrics; an interrupted
// batch's nodes are cut at readUntil. Nodes of earlier batches are whole.
func (r *reading) emitBatch(ctx context.Context, b *dcgm.Builder, readUntil time.Time, interrupted bool, k *kube, d *discovery, emit func(profile.Node) error) error {
	end := r.o.End
	if interrupted {
		end = readUntil
	}
	return b.BuildEach(r.o.Start.UnixMilli(), end.UnixMilli(), func(n profile.Node) error {
		nodes := []profile.Node{n}
		if interrupted {
			if nodes = cutAfter(nodes, readUntil.Sub(r.o.Start).Seconds()); len(nodes) == 0 {
				return nil
			}
		}
		r.spacing.count(nodes)
		k.claims.Apply(nodes)
		k.queues.Apply(nodes)
		k.apply(nodes, d.running)
		if note := r.measureUse(ctx, &nodes[0], r.o.Start.UnixMilli(), &k.shared.bad); note != "" {
			k.useNotes = append(k.useNotes, note)
		}
		if nodes = r.reframe(nodes, end); len(nodes) == 0 {
			return nil
		}
		if !interrupted {
			r.whole++
		}
		return emit(nodes[0])
	})
}

// held is the span of the range whose samples a batch holds at once: a
// chunk when finished chunks go to the row file, else the whole range.
func (r *reading) held() time.Duration {
	if r.o.inMemory {
		return r.o.End.Sub(r.o.Start)
	}
	longest := time.Duration(0)
	for _, ch := range r.chunks {
		longest = max(longest, ch.End.Sub(ch.Start))
	}
	return longest
}

// newReading checks the options (an http(s) URL, a selector of label
// matchers, a range that ends after it starts, the HTTP settings) and
// makes the reading.
func newReading(o Options) (*reading, error) {
	base, err := url.Parse(o.URL)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("%w: --prometheus-url must be an http(s) URL, e.g. http://prometheus:9090", source.ErrSettings)
	}
	matchers, err := selectorMatchers(o.Selector)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", profile.ErrInvalid, err)
	}
	if !o.End.After(o.Start) {
		return nil, fmt.Errorf("%w: the end of the range must be after its start", source.ErrSettings)
	}
	hc, err := httpc.New(o.HTTP, o.Timeout)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", profile.ErrInvalid, err)
	}
	if o.BatchSamples <= 0 {
		o.BatchSamples = DefaultBatchSamples
	}
	win := timeRange{o.Start, o.End}
	align := time.Duration(0)
	if o.Pushdown {
		align = o.Align
	}
	chunks := splitRange(o.Start, o.End, o.Chunk, align)
	o.Before, o.After = o.Before.Truncate(time.Millisecond), o.After.Truncate(time.Millisecond)
	if o.Before > 0 {
		o.Start = o.Start.Add(-o.Before)
		chunks = append([]timeRange{{o.Start, win.Start}}, chunks...)
	}
	if o.After > 0 {
		o.End = o.End.Add(o.After)
		chunks = append(chunks, timeRange{win.End, o.End})
	}
	return &reading{c: &promClient{base: base, http: hc, retries: o.Retries, backoff: o.Backoff}, o: o, names: dcgmQueryNames(), spacing: spacings{},
		matchers: matchers, chunks: chunks, win: win}, nil
}

// closeIdle closes the read's connections: its clients are its own, and
// a process that reads many times (a ledger update in steps, the loop)
// would otherwise hold every read's keep-alive connections until the
// server's limit (Prometheus's 512) stalls it (TestReadLeavesNoConnectionOpen).
func (r *reading) closeIdle() {
	r.c.http.CloseIdleConnections()
	if r.o.Kube != nil {
		r.o.Kube.CloseIdleConnections()
	}
}

// reframe makes nodes read from the start of the context before the
// window (up to end) nodes of the window: their times from its start, the
// samples around it context (profile.Node.Reframe). A GPU whose samples
// all lie after the window is dropped, and a node left with none.
func (r *reading) reframe(nodes []profile.Node, end time.Time) []profile.Node {
	if r.o.Before == 0 && r.o.After == 0 {
		return nodes
	}
	if end.After(r.win.End) {
		end = r.win.End
	}
	span := end.Sub(r.win.Start).Seconds()
	if span <= 0 {
		return nil // interrupted before the window
	}
	out := nodes[:0]
	for _, n := range nodes {
		n.Reframe(r.o.Before.Seconds(), span)
		gpus := n.GPUs[:0]
		for _, g := range n.GPUs {
			if len(g.Series.T) > 0 && g.Series.T[0] < span {
				gpus = append(gpus, g)
			}
		}
		if n.GPUs = gpus; len(gpus) > 0 {
			out = append(out, n)
		}
	}
	return out
}

// noMetrics is the error of a range with no dcgm-exporter series.
func noMetrics(o Options) error {
	return fmt.Errorf("%w %s between %s and %s: is dcgm-exporter scraped by this Prometheus, and does the selector match its labels?",
		ErrNoMetrics, orAll(o.Selector), o.Start.Format(time.RFC3339), o.End.Format(time.RFC3339))
}

// finish completes the header of a whole read: the pods' notes, the
// unscheduled work, whether the pending work is known, what pushdown
// read, and the warnings (which make the read incomplete).
func (r *reading) finish(p *profile.Profile, k *kube, d *discovery) {
	o := r.o
	p.Notes = append(p.Notes, k.notes(d)...)
	p.Unscheduled = k.unscheduled(d)
	if k.queues != nil {
		p.Queues = k.queues.Queues(p.StartedAt, p.EndedAt)
		p.Notes = append(p.Notes, k.queues.Warnings...)
	} else {
		var notes []string
		p.Queues, notes = k.kueueQueues(p)
		p.Notes = append(p.Notes, notes...)
	}
	p.Cluster = d.cluster()
	if len(d.clusters) > 1 {
		p.Notes = append(p.Notes, fmt.Sprintf("the series name %d clusters (label cluster: %s): one profile holds them all; select one (cluster=\"…\") to read a cluster alone",
			len(d.clusters), strings.Join(slices.Sorted(maps.Keys(d.clusters)), ", ")))
	}
	if p.PendingUnknown = k.unknown(o.Selector); p.PendingUnknown != "" {
		p.Notes = append(p.Notes, p.PendingUnknown+"; no drain or release is advised")
	}
	if o.Pushdown {
		p.Notes = append(p.Notes, fmt.Sprintf(profile.InfoPrefix+"read %d raw samples and %d aggregates where every metric raw is about %d samples; memory bandwidth, SM activity, PCIe, NVLink, memory, clocks and temperature were not read",
			r.samples-r.fromAggregates, r.aggregates, d.rawSamples(r, samplesPerGPU(Options{Step: o.Step}, o.End.Sub(o.Start), 1))))
	}
	if len(r.warnings) > 0 {
		p.Complete = false
		p.Notes = append(p.Notes, dedupe(r.warnings)...)
	}
}

// cluster is the cluster every series names (its cluster label), "" when
// they name none or several.
func (d *discovery) cluster() string {
	if len(d.clusters) != 1 {
		return ""
	}
	for c := range d.clusters {
		if c == "" {
			return d.external // no series names one: the server's
		}
		return c
	}
	return ""
}

// controllerOf names the controller that owns a pod, from
// kube_pod_owner: a ReplicaSet's Deployment (its name without the
// pod-template hash), else the owner itself ("StatefulSet/db").
func controllerOf(kind, name string) string {
	switch {
	case kind == "" || name == "" || kind == "<none>":
		return ""
	case kind == "ReplicaSet":
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			return "Deployment/" + name[:i]
		}
	}
	return kind + "/" + name
}

// cutAfter drops every sample after endS (seconds from the start), the
// metrics of a chunk read only in part, and the GPUs and nodes left with
// none.
func cutAfter(nodes []profile.Node, endS float64) []profile.Node {
	out := nodes[:0]
	for _, n := range nodes {
		gpus := n.GPUs[:0]
		for _, g := range n.GPUs {
			s := &g.Series
			k := sort.SearchFloat64s(s.T, math.Nextafter(endS, math.Inf(1)))
			if k == 0 {
				continue
			}
			s.T = s.T[:k]
			for m := profile.Metric(0); m < profile.NumMetrics; m++ {
				if col := s.Col(m); *col != nil {
					*col = (*col)[:k]
				}
			}
			gpus = append(gpus, g)
		}
		if n.GPUs = gpus; len(gpus) > 0 {
			out = append(out, n)
		}
	}
	return out
}

func orAll(sel string) string {
	if sel == "" {
		return "(no selector)"
	}
	return sel
}

// dcgmQueryNames lists the metrics queried: every mapped one and FB_FREE.
func dcgmQueryNames() []string {
	out := []string{}
	for _, m := range dcgm.Metrics {
		out = append(out, m.Name)
	}
	return append(out, dcgm.FBFree)
}

// addSeries adds one series' samples inside [start, end) to the builder.
func addSeries(b *dcgm.Builder, metric string, s promSeries, start, end time.Time) {
	id, ok := dcgm.ParseLabels(func(k string) string { return s.Labels[k] })
	if !ok {
		return
	}
	pairs := s.Pairs[:0]
	lo, hi := start.UnixMilli(), end.UnixMilli()
	for _, p := range s.Pairs {
		if p.TMillis >= lo && p.TMillis < hi {
			pairs = append(pairs, p)
		}
	}
	if len(pairs) > 0 {
		b.Add(id, metric, pairs)
	}
}

// timeRange is [Start, End).
type timeRange struct{ Start, End time.Time }

// splitRange cuts [start, end) into pieces of at most chunk.
func splitRange(start, end time.Time, chunk, align time.Duration) []timeRange {
	if chunk <= 0 {
		chunk = end.Sub(start)
	}
	var out []timeRange
	for t := start; t.Before(end); {
		e := t.Add(chunk)
		if next := t.Truncate(align).Add(align); align > 0 && next.Before(e) {
			e = next
		}
		if e.After(end) {
			e = end
		}
		out = append(out, timeRange{t, e})
		t = e
	}
	return out
}

// runOrdered runs n jobs on up to workers goroutines and hands their results
// to consume in job order, on one goroutine, so that results can be merged
// without locks. A job starts only when fewer than 2 × workers jobs are
// started and not yet consumed (runWindow), so that what waits in memory
// is a few answers, whatever n: a slow answer holds the next ones back
// instead of letting the others run ahead through the range.
func runOrdered(ctx context.Context, n, workers int, run func(context.Context, int) (any, error), consume func(int, any) error) error {
	workers = max(workers, 1)
	return runWindow(ctx, n, workers, 2*workers, run, consume)
}

// runWindow is runOrdered with at most window jobs started and not yet
// consumed.
func runWindow(ctx context.Context, n, workers, window int, run func(context.Context, int) (any, error), consume func(int, any) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type out struct {
		i   int
		res any
		err error
	}
	next := make(chan int)
	results := make(chan out, workers)
	slots := make(chan struct{}, window) // one per job started and not consumed
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				res, err := run(ctx, i)
				results <- out{i, res, err}
			}
		}()
	}
	go func() {
		defer close(next)
		for i := 0; i < n; i++ {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(results) }()
	waiting := map[int]any{}
	want := 0
	var firstErr error
	for r := range results {
		if r.err != nil {
			if firstErr == nil {
				firstErr = r.err
				cancel()
			}
			continue
		}
		if firstErr != nil {
			continue
		}
		waiting[r.i] = r.res
		for {
			res, ok := waiting[want]
			if !ok {
				break
			}
			delete(waiting, want)
			if err := consume(want, res); err != nil {
				firstErr = err
				cancel()
				break
			}
			want++
			<-slots
		}
	}
	return firstErr
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
