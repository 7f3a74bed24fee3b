package prometheus

import (
	"context"
	"fmt"
	"math"
	"net/url"
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
	// Step is the scrape interval of dcgm-exporter, the profile's interval_s:
	// samples further apart than 2 × Step are a gap.
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
	// MaxSamples bounds the samples read (about 20 bytes of memory each);
	// past it the read stops with ErrTooManySamples. 0: no bound.
	MaxSamples int
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

// Read reads the dcgm-exporter metrics of [Start, End] from
// Prometheus into a profile. It reads raw samples with their own timestamps
// through range-vector selectors, in chunks, so that a missed scrape stays a
// gap instead of being filled by Prometheus's 5-minute lookback.
func Read(ctx context.Context, o Options) (*profile.Profile, error) {
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
	c := &promClient{base: base, http: hc, retries: o.Retries, backoff: o.Backoff}
	chunks := splitRange(o.Start, o.End, o.Chunk)
	b := dcgm.NewBuilder(o.Step.Milliseconds())
	var warnings []string
	names := dcgmQueryNames()
	total := len(names)*len(chunks) + 6
	done := 0
	progress := func() {
		done++
		if o.OnProgress != nil {
			o.OnProgress(source.ReadProgress{Done: done, Total: total, GPUs: b.GPUs(), Samples: b.Samples()})
		}
	}
	// Chunk by chunk, every metric of a chunk: what is read so far always
	// covers [o.Start, readUntil), so an interrupted read keeps a whole
	// prefix of the range.
	type job struct{ metric, chunk int }
	var jobs []job
	for ch := range chunks {
		for m := range names {
			jobs = append(jobs, job{m, ch})
		}
	}
	// Each answer goes into the builder as soon as it is next in order, so
	// that only the builder's columns stay in memory (holding a chunk's
	// answers until the chunk was whole held every pair twice). What is
	// complete is the prefix up to readUntil; an interrupted read is cut
	// there.
	readUntil := o.Start
	answered := 0 // answers of the current chunk
	err = runOrdered(ctx, len(jobs), o.Concurrency, func(ctx context.Context, i int) (any, error) {
		j := jobs[i]
		ch := chunks[j.chunk]
		q := fmt.Sprintf("%s[%dms]", withMatchers(names[j.metric], matchers), ch.End.Sub(ch.Start).Milliseconds())
		return c.query(ctx, q, ch.End)
	}, func(i int, res any) error {
		ans := res.(*promAnswer)
		warnings = append(warnings, ans.Warnings...)
		for _, s := range ans.Series {
			addSeries(b, names[jobs[i].metric], s, o.Start, o.End)
		}
		progress()
		if answered++; answered < len(names) {
			return nil
		}
		answered = 0
		readUntil = chunks[jobs[i].chunk].End
		if o.MaxSamples > 0 && b.Samples() > o.MaxSamples {
			return fmt.Errorf("%w: more than %d samples (%d GPUs) by %s, before the end of the range: narrow it (--selector, a shorter range) or raise prometheus.max_samples (about 20 bytes of memory each)",
				ErrTooManySamples, o.MaxSamples, b.GPUs(), readUntil.UTC().Format(time.RFC3339))
		}
		return nil
	})
	interrupted := err != nil && ctx.Err() != nil
	switch {
	case interrupted && b.GPUs() == 0:
		return nil, fmt.Errorf("%w before any chunk of the range was read: %v", source.ErrInterrupted, ctx.Err())
	case interrupted:
		p := &profile.Profile{SchemaVersion: profile.SchemaVersion, Generator: o.Generator, Source: profile.SourcePrometheus,
			StartedAt: o.Start.UTC(), EndedAt: readUntil.UTC(), IntervalS: o.Step.Seconds()}
		p.Nodes = cutAfter(b.Build(o.Start.UnixMilli(), readUntil.UnixMilli()), readUntil.Sub(o.Start).Seconds())
		p.Notes = append(dedupe(warnings), fmt.Sprintf("interrupted: read %s to %s of the range asked (%s to %s); pending pods not read",
			o.Start.UTC().Format(time.RFC3339), readUntil.UTC().Format(time.RFC3339), o.Start.UTC().Format(time.RFC3339), o.End.UTC().Format(time.RFC3339)))
		return p, nil
	case err != nil:
		return nil, err
	}
	if b.GPUs() == 0 {
		return nil, fmt.Errorf("%w %s between %s and %s: is dcgm-exporter scraped by this Prometheus, and does the selector match its labels?",
			ErrNoMetrics, orAll(o.Selector), o.Start.Format(time.RFC3339), o.End.Format(time.RFC3339))
	}
	p := &profile.Profile{SchemaVersion: profile.SchemaVersion, Generator: o.Generator, Source: profile.SourcePrometheus,
		StartedAt: o.Start.UTC(), EndedAt: o.End.UTC(), IntervalS: o.Step.Seconds(), Complete: true}
	p.Nodes = b.Build(o.Start.UnixMilli(), o.End.UnixMilli())
	notes, err := addPendingPods(ctx, c, p, matchers, o.Start, o.End, progress)
	if err != nil {
		// kube-state-metrics is an enrichment: without it there are no
		// pending pods, which is said, not fatal.
		notes = append(notes, "pending pods unknown: "+err.Error())
	}
	if err := addPodLabels(ctx, c, p, matchers, o.Start, o.End, progress); err != nil {
		notes = append(notes, "pod labels unknown: "+err.Error())
	}
	p.Notes = append(p.Notes, notes...)
	if len(warnings) > 0 {
		p.Complete = false
		p.Notes = append(p.Notes, dedupe(warnings)...)
	}
	return p, nil
}

// addPodLabels gives the profile's pods the labels kube-state-metrics
// exports for them (kube_pod_labels: label_team="ml-research" becomes the
// workload label team), the last seen in the range, so that attribution can
// group by team. A label the workload has already keeps its value; names
// and values past a Kubernetes label's length are left out.
func addPodLabels(ctx context.Context, c *promClient, p *profile.Profile, matchers string, start, end time.Time, progress func()) error {
	q := fmt.Sprintf("last_over_time(kube_pod_labels{%s}[%dms])", matchers, end.Sub(start).Milliseconds())
	ans, err := c.query(ctx, q, end)
	progress()
	if err != nil {
		return err
	}
	owners, err := c.query(ctx, strings.Replace(q, "kube_pod_labels", "kube_pod_owner", 1), end)
	progress()
	if err != nil {
		return err
	}
	nsAns, err := c.query(ctx, strings.Replace(q, "kube_pod_labels", "kube_namespace_labels", 1), end)
	progress()
	if err != nil {
		return err
	}
	labels := map[string]map[string]string{}
	for _, s := range owners.Series {
		if c := controllerOf(s.Labels["owner_kind"], s.Labels["owner_name"]); c != "" && len(c) <= profile.MaxNameBytes {
			labels[s.Labels["namespace"]+"/"+s.Labels["pod"]] = map[string]string{profile.ControllerLabel: c}
		}
	}
	for _, s := range ans.Series {
		addLabels(labels, s.Labels["namespace"]+"/"+s.Labels["pod"], s.Labels)
	}
	// A namespace's labels go to its pods that lack a label of that name.
	nsLabels := map[string]map[string]string{}
	for _, s := range nsAns.Series {
		addLabels(nsLabels, s.Labels["namespace"], s.Labels)
	}
	for ni := range p.Nodes {
		for wi := range p.Nodes[ni].Workloads {
			w := &p.Nodes[ni].Workloads[wi]
			if w.Kind != profile.KindPod {
				continue
			}
			for _, from := range []map[string]string{labels[w.ID], nsLabels[w.Labels["namespace"]]} {
				for key, v := range from {
					if _, set := w.Labels[key]; !set {
						if w.Labels == nil {
							w.Labels = map[string]string{}
						}
						w.Labels[key] = v
					}
				}
			}
		}
	}
	return nil
}

// addLabels adds a kube-state-metrics series' label_* labels to to[k].
func addLabels(to map[string]map[string]string, k string, series map[string]string) {
	for name, v := range series {
		key, ok := strings.CutPrefix(name, "label_")
		if !ok || key == "" || len(key) > profile.MaxNameBytes || len(v) > profile.MaxNameBytes {
			continue
		}
		if to[k] == nil {
			to[k] = map[string]string{}
		}
		to[k][key] = v
	}
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
func splitRange(start, end time.Time, chunk time.Duration) []timeRange {
	if chunk <= 0 {
		chunk = end.Sub(start)
	}
	var out []timeRange
	for t := start; t.Before(end); t = t.Add(chunk) {
		e := t.Add(chunk)
		if e.After(end) {
			e = end
		}
		out = append(out, timeRange{t, e})
	}
	return out
}

// runOrdered runs n jobs on up to workers goroutines and hands their results
// to consume in job order, on one goroutine, so that results can be merged
// without locks and few wait in memory. The first error stops everything.
func runOrdered(ctx context.Context, n, workers int, run func(context.Context, int) (any, error), consume func(int, any) error) error {
	if workers < 1 {
		workers = 1
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type out struct {
		i   int
		res any
		err error
	}
	next := make(chan int)
	results := make(chan out, workers)
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
		}
	}
	return firstErr
}

// addPendingPods reads pods that were Pending in the window and request
// GPUs from kube-state-metrics, and adds them to their nodes. Pods not yet
// scheduled on any node are listed in a note.
func addPendingPods(ctx context.Context, c *promClient, p *profile.Profile, matchers string, start, end time.Time, progress func()) ([]string, error) {
	w := fmt.Sprintf("%dms", end.Sub(start).Milliseconds())
	sel := func(metric, extra string) string {
		m := extra
		if matchers != "" {
			m = strings.TrimSuffix(matchers+","+extra, ",")
		}
		return fmt.Sprintf("%s{%s}[%s]", metric, m, w)
	}
	queries := []string{
		fmt.Sprintf("max by (namespace, pod) (max_over_time(%s)) == 1", sel("kube_pod_status_phase", `phase="Pending"`)),
		fmt.Sprintf("sum by (namespace, pod) (max_over_time(%s))", sel("kube_pod_container_resource_requests", `resource=~"nvidia_com_gpu|nvidia_com_gpu_shared"`)),
		fmt.Sprintf("max by (namespace, pod, node) (max_over_time(%s))", sel("kube_pod_info", "")),
	}
	var vecs [3][]promSeries
	for i, q := range queries {
		ans, err := c.query(ctx, q, end)
		progress()
		if err != nil {
			return nil, err
		}
		vecs[i] = ans.Series
	}
	key := func(s promSeries) string { return s.Labels["namespace"] + "/" + s.Labels["pod"] }
	value := func(s promSeries) float64 {
		if len(s.Pairs) == 0 {
			return 0
		}
		return s.Pairs[len(s.Pairs)-1].V
	}
	gpus := map[string]float64{}
	for _, s := range vecs[1] {
		gpus[key(s)] = value(s)
	}
	nodeOf := map[string]string{}
	for _, s := range vecs[2] {
		if n := s.Labels["node"]; n != "" {
			nodeOf[key(s)] = n
		}
	}
	byName := map[string]*profile.Node{}
	for i := range p.Nodes {
		byName[p.Nodes[i].Name] = &p.Nodes[i]
	}
	var unscheduled []string
	for _, s := range vecs[0] {
		k := key(s)
		if gpus[k] <= 0 || running(p, k) {
			continue
		}
		n := byName[nodeOf[k]]
		if n == nil {
			unscheduled = append(unscheduled, k)
			continue
		}
		n.Workloads = append(n.Workloads, profile.Workload{ID: k, Name: s.Labels["pod"], Kind: profile.KindPod, State: profile.StatePending,
			GPUCount: int(gpus[k] + 0.5), Labels: map[string]string{"namespace": s.Labels["namespace"]}})
		sort.Slice(n.Workloads, func(i, j int) bool { return n.Workloads[i].ID < n.Workloads[j].ID })
	}
	if len(unscheduled) == 0 {
		return nil, nil
	}
	sort.Strings(unscheduled)
	return []string{fmt.Sprintf("%d pending GPU pod(s) not scheduled on any node: %s", len(unscheduled), strings.Join(unscheduled, ", "))}, nil
}

func running(p *profile.Profile, id string) bool {
	for _, n := range p.Nodes {
		for _, w := range n.Workloads {
			if w.ID == id && w.State == profile.StateRunning {
				return true
			}
		}
	}
	return false
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
