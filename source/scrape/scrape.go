package scrape

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/seedance/seedance/internal/httpc"

	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source"
	"github.com/seedance/seedance/source/dcgm"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/config"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Options configures the direct dcgm-exporter scrape source.
type Options struct {
	// Targets are host:port pairs (…/metrics is added) or full URLs.
	Targets []string
	HTTP    config.HTTPClientConfig
	// Timeout bounds one scrape; a target slower than that is a gap.
	Timeout time.Duration
	// Log, when set, gets one line when a target starts failing, at most one
	// a minute while it goes on failing, and one when it recovers.
	Log func(line string)
	// Serving are the serving engines' endpoints whose counters of work
	// done go to their pods (docs/units.md).
	Serving []ServingTarget
	// Units are the user's counters of work (units:), read from the
	// serving targets beside the built-in ones.
	Units []source.WorkQuery
}

// scrapeTarget is one endpoint and what went wrong with it.
type scrapeTarget struct {
	url           string // the URL requested, credentials included
	shown, host   string // the URL without credentials, for messages
	failed, total int
	lastErr       string
	empty         int      // scrapes without any metric seedance reads
	seen          []string // the metric names such a scrape had
	failing       bool
	lastLog       time.Time
}

// logEvery is the shortest time between two lines about one failing target.
const logEvery = time.Minute

// report logs a target's state change, or its continued failure at most
// once per logEvery.
func (t *scrapeTarget) report(log func(string), failedNow bool, now time.Time) {
	switch {
	case log == nil:
	case failedNow && (!t.failing || now.Sub(t.lastLog) >= logEvery):
		log(fmt.Sprintf("scrape %s failed: %s (%d of %d scrapes failed so far)", t.shown, t.lastErr, t.failed, t.total))
		t.lastLog = now
	case !failedNow && t.failing:
		log(fmt.Sprintf("scrape %s is back after %d failed scrape(s)", t.shown, t.failed))
	}
	t.failing = failedNow
}

// Scrape samples dcgm-exporter endpoints every ro.Interval, concurrently,
// until ro.Duration passes or ctx is done, and returns the profile. A target
// that is down is retried at every interval: its GPUs get no sample for that
// time (a gap), and the others go on. What failed is said in the profile's
// notes.
func Scrape(ctx context.Context, o Options, ro source.RecordOptions) (*profile.Profile, error) {
	if len(o.Targets) == 0 {
		return nil, fmt.Errorf("%w: no scrape targets (--targets host:9400,… or --targets-file)", source.ErrSettings)
	}
	targets := make([]*scrapeTarget, 0, len(o.Targets))
	for _, t := range o.Targets {
		st, err := parseTarget(t)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", source.ErrSettings, err)
		}
		targets = append(targets, st)
	}
	hc, err := httpc.New(o.HTTP, o.Timeout)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", source.ErrSettings, err)
	}
	defer hc.CloseIdleConnections() // the client is this run's (a loop scrapes every run)
	if ro.Clock == nil {
		ro.Clock = source.RealClock{}
	}
	b := dcgm.NewBuilder(ro.Interval.Milliseconds())
	serving := newServed(o.Serving)
	counters, unread := servedCounters(o.Units)
	var firstErr string
	start := ro.Clock.Now().UTC()
	p := &profile.Profile{SchemaVersion: profile.SchemaVersion, Generator: ro.Generator, Source: profile.SourceScrape, StartedAt: start, IntervalS: ro.Interval.Seconds()}
	lastCheckpoint := start
	interrupted, samples := false, 0
	var last time.Time
	for i := 0; ; i++ {
		target := start.Add(time.Duration(i) * ro.Interval)
		if ro.Duration > 0 && target.Sub(start) >= ro.Duration {
			break
		}
		if err := ro.Clock.WaitUntil(ctx, target); err != nil {
			interrupted = true
			break
		}
		now := ro.Clock.Now()
		if e := scrapeAll(ctx, hc, targets, b, now, o.Log); firstErr == "" {
			firstErr = e
		}
		scrapeServed(ctx, hc, serving, counters, sinceStart(now, start))
		if ctx.Err() != nil {
			interrupted = true
			break
		}
		samples++
		last = now
		if ro.OnSample != nil {
			ro.OnSample(source.Progress{Elapsed: now.Sub(start), Total: ro.Duration, Samples: samples, MeanUtil: profile.Null})
		}
		// A checkpoint holds samples; before the first one there is nothing
		// to keep, and no file is written.
		if ro.Checkpoint > 0 && ro.OnCheckpoint != nil && now.Sub(lastCheckpoint) >= ro.Checkpoint && b.GPUs() > 0 {
			lastCheckpoint = now
			if err := finishScrape(p, b, targets, last, false); err != nil {
				return nil, err
			}
			attachServed(p, serving, unread)
			if err := ro.OnCheckpoint(p); err != nil {
				return p, err
			}
		}
	}
	if b.GPUs() == 0 {
		return nil, nothingScraped(targets, firstErr)
	}
	if err := finishScrape(p, b, targets, last, !interrupted); err != nil {
		return nil, err
	}
	attachServed(p, serving, unread)
	return p, nil
}

// nothingScraped is the error of a run that got no GPU sample from any
// target: it names them and the first error.
func nothingScraped(targets []*scrapeTarget, firstErr string) error {
	urls := make([]string, 0, len(targets))
	for _, t := range targets {
		urls = append(urls, t.shown)
		if len(urls) == 5 && len(targets) > 5 {
			urls = append(urls, fmt.Sprintf("and %d more", len(targets)-5))
			break
		}
	}
	why := "no scrape completed"
	switch {
	case firstErr != "":
		why = "first error: " + firstErr
	case len(targets) > 0 && targets[0].empty > 0:
		why = "they answered without any dcgm-exporter metric seedance reads"
	}
	return fmt.Errorf("%w: no GPU sample from %s (%s)", source.ErrNothingObserved, strings.Join(urls, ", "), why)
}

func finishScrape(p *profile.Profile, b *dcgm.Builder, targets []*scrapeTarget, last time.Time, complete bool) error {
	p.Complete = complete
	p.EndedAt = last.UTC().Add(time.Duration(p.IntervalS * float64(time.Second)))
	if last.IsZero() {
		p.EndedAt = p.StartedAt
	}
	nodes, err := b.Build(p.StartedAt.UnixMilli(), p.EndedAt.UnixMilli())
	if err != nil {
		return err
	}
	p.Nodes, p.Notes = nodes, nil
	for _, t := range targets {
		if t.failed > 0 {
			p.Notes = append(p.Notes, fmt.Sprintf("target %s: %d of %d scrapes failed (last: %s)", t.shown, t.failed, t.total, t.lastErr))
		}
		if t.empty > 0 {
			seen := strings.Join(t.seen, ", ")
			if len(t.seen) > 5 {
				seen = strings.Join(t.seen[:5], ", ") + ", …"
			}
			if seen == "" {
				seen = "nothing"
			}
			p.Notes = append(p.Notes, fmt.Sprintf("target %s: %d of %d scrapes had no dcgm-exporter metric seedance reads (it had %s)", t.shown, t.empty, t.total, seen))
		}
	}
	return nil
}

func parseTarget(t string) (*scrapeTarget, error) {
	t = strings.TrimSpace(t)
	raw := t
	if !strings.Contains(t, "://") {
		raw = "http://" + t + "/metrics"
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("scrape target %q is not host:port or a URL", redactURLText(t))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("scrape target %s: the scheme must be http or https, not %q", u.Redacted(), u.Scheme)
	}
	host := u.Hostname()
	u.User = nil
	return &scrapeTarget{url: raw, shown: u.String(), host: host}, nil
}

// scrapeAll scrapes every target at once and adds their samples at time
// now. It returns the first error of this round, "" when none failed.
func scrapeAll(ctx context.Context, hc *http.Client, targets []*scrapeTarget, b *dcgm.Builder, now time.Time, log func(string)) (firstErr string) {
	type res struct {
		fams map[string]*dto.MetricFamily
		err  error
	}
	results := make([]res, len(targets))
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Add(1)
		go func(i int, t *scrapeTarget) {
			defer wg.Done()
			fams, err := scrapeOne(ctx, hc, t.url)
			results[i] = res{fams, err}
		}(i, t)
	}
	wg.Wait()
	// Added in target order, so the profile does not depend on timing.
	for i, t := range targets {
		t.total++
		if err := results[i].err; err != nil {
			t.failed++
			t.lastErr = strings.Join(strings.Fields(err.Error()), " ")
			if firstErr == "" {
				firstErr = t.shown + ": " + t.lastErr
			}
			if ctx.Err() == nil {
				t.report(log, true, now)
			}
			continue
		}
		t.report(log, false, now)
		if AddFamilies(b, results[i].fams, t.host, now) == 0 {
			t.empty++
			t.seen = t.seen[:0]
			for name := range results[i].fams {
				t.seen = append(t.seen, name)
			}
			sort.Strings(t.seen)
		}
	}
	return firstErr
}

func scrapeOne(ctx context.Context, hc *http.Client, target string) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s", httpc.RedactErr(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20)) // drained for reuse; a failure only loses the connection
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return ParseExposition(resp.Body)
}

// ParseExposition parses Prometheus text exposition with prometheus/common.
// Anything it cannot parse is an error of one line, never a panic.
func ParseExposition(r io.Reader) (fams map[string]*dto.MetricFamily, err error) {
	defer func() {
		if p := recover(); p != nil {
			fams, err = nil, fmt.Errorf("exposition parser failed: %v", p)
		}
	}()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err = parser.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("%s", strings.Join(strings.Fields(err.Error()), " "))
	}
	return fams, nil
}

// AddFamilies adds the dcgm-exporter samples of one scrape, taken at now,
// to the builder, and returns how many it added. host names the node when
// the series carry no Hostname.
func AddFamilies(b *dcgm.Builder, fams map[string]*dto.MetricFamily, host string, now time.Time) int {
	added := 0
	names := make([]string, 0, len(fams))
	for n := range fams {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		if _, ok := dcgm.MetricByName(name); !ok && name != dcgm.FBFree {
			continue
		}
		for _, m := range fams[name].Metric {
			labels := map[string]string{}
			for _, l := range m.Label {
				labels[l.GetName()] = l.GetValue()
			}
			get := func(k string) string {
				if k == "instance" && labels[k] == "" {
					return host
				}
				return labels[k]
			}
			id, ok := dcgm.ParseLabels(get)
			if !ok {
				continue
			}
			v := math.NaN()
			switch {
			case m.Gauge != nil:
				v = m.Gauge.GetValue()
			case m.Counter != nil:
				v = m.Counter.GetValue()
			case m.Untyped != nil:
				v = m.Untyped.GetValue()
			}
			t := now.UnixMilli()
			if m.TimestampMs != nil {
				t = m.GetTimestampMs()
			}
			b.Add(id, name, []dcgm.Pair{{TMillis: t, V: v}})
			added++
		}
	}
	return added
}

// redactURLText hides a password in text that may be a URL.
func redactURLText(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		return u.Redacted()
	}
	return s
}
