package prometheus

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/seedance/seedance/internal/kubeapi"
	"github.com/seedance/seedance/internal/setting"

	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source"
)

// Settings are the prometheus section of seedance's configuration (its
// HTTP client settings are read through source.Env.HTTP).
type Settings struct {
	URL          string         `mapstructure:"url"`
	Step         string         `mapstructure:"step"`
	Selector     string         `mapstructure:"selector"`
	Chunk        time.Duration  `mapstructure:"chunk"`
	Concurrency  int            `mapstructure:"concurrency"`
	Timeout      time.Duration  `mapstructure:"timeout"`
	Retries      int            `mapstructure:"retries"`
	MaxSamples   int            `mapstructure:"max_samples"`
	BatchSamples int            `mapstructure:"batch_samples"`
	Pushdown     bool           `mapstructure:"pushdown"`
	Kubeconfig   string         `mapstructure:"kubeconfig"`
	HTTP         map[string]any `mapstructure:"http"`
}

// keys are the source's settings, its section of the configuration
// (docs/configuration.md).
var keys = append([]setting.Key{
	{Key: "prometheus.url", Default: "", Cmd: "profile analyze", Flag: "prometheus-url", Help: "Prometheus holding dcgm-exporter metrics (--source prometheus; docs/sources.md)"},
	{Key: "prometheus.step", Default: "auto", Cmd: "profile analyze", Flag: "step", Help: "dcgm-exporter's scrape interval (--source prometheus): auto measures it on each target's samples, which is what the figures use; a duration (30s) is assumed only where a target has one sample, and noted when the data contradicts it"},
	{Key: "prometheus.selector", Default: "", Cmd: "profile analyze", Flag: "selector", Help: `label matchers added to every Prometheus query, e.g. '{cluster="a"}'`},
	{Key: "prometheus.chunk", Default: setting.Dur("2h"), Cmd: "profile analyze", Flag: "prometheus-chunk", Help: "longest time range one Prometheus query reads", Range: setting.Rng(1, 31*setting.Day)},
	{Key: "prometheus.concurrency", Default: 4, Cmd: "profile analyze", Flag: "prometheus-concurrency", Help: "Prometheus queries in flight at once", Range: setting.Rng(1, 64)},
	{Key: "prometheus.timeout", Default: setting.Dur("2m"), Cmd: "profile analyze", Flag: "prometheus-timeout", Help: "timeout of one Prometheus query", Range: setting.Rng(0.1, setting.Day)},
	{Key: "prometheus.max_samples", Default: 100_000_000, Help: "most samples one chunk of a batch of nodes holds in memory (about 20 bytes each); past it the read stops with a message saying how to narrow it", Range: setting.Rng(1000, 1e10)},
	{Key: "prometheus.pushdown", Default: false, Cmd: "profile analyze", Flag: "pushdown", Help: "read utilization raw and the energy counter as exact per-chunk aggregates, nothing else: the idle time, costs and energy of the raw read for about a tenth of the samples (docs/sources.md, Pushdown)"},
	{Key: "prometheus.batch_samples", Default: 2_500_000, Help: "sample values one chunk of the nodes read together holds at most (about 20 bytes of memory each): the read's working set, whatever the range or the number of nodes (finished chunks wait on disk)", Range: setting.Rng(1000, 1e10)},
	{Key: "prometheus.kubeconfig", Default: "", Cmd: "profile analyze", Flag: "kubeconfig", Help: "a kubeconfig (or in-cluster) whose API server's DRA ResourceClaims say which pods share which GPUs (docs/sharing.md) and whose Kueue objects give the queues and their quota (docs/queues.md) (--source prometheus; read-only)"},
	{Key: "prometheus.retries", Default: 3, Help: "retries of a query after a network error, timeout, 429 or 5xx", Range: setting.Rng(0, 20)},
	{Key: "prometheus.http", Default: map[string]any{}, Help: "HTTP settings: prometheus/common HTTPClientConfig (basic_auth, authorization, tls_config, proxy_url, http_headers…)", Map: true},
}, setting.HTTPKeys("prometheus")...)

func init() {
	source.Register(source.Registration{Name: profile.SourcePrometheus, Open: open, Settings: Settings{}, Keys: keys})
}

// reader reads a range of history: the whole run is one Read.
type reader struct{ o Options }

func (r reader) Profile(ctx context.Context, ro source.RecordOptions) (*profile.Profile, error) {
	o := r.o
	o.Generator = ro.Generator
	return Read(ctx, o)
}

// ProfileNodes implements source.NodeStreamer: one batch of nodes at a
// time.
func (r reader) ProfileNodes(ctx context.Context, ro source.RecordOptions, emit func([]profile.Node) error) (*profile.Profile, error) {
	o := r.o
	o.Generator, o.TempDir = ro.Generator, ro.TempDir
	return ReadNodes(ctx, o, emit)
}

func (reader) Close() error { return nil }

// ParseStep reads --step: "auto" (or empty) is 0, measured from the data;
// otherwise a duration ("30s", "1m") or plain seconds, from 1 ms to a day.
func ParseStep(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" || strings.EqualFold(s, "auto") {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		f, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, fmt.Errorf("%w: --step %q is not auto or a duration (15s, 1m)", source.ErrSettings, s)
		}
		d = time.Duration(f * float64(time.Second))
	}
	if d < time.Millisecond || d > 24*time.Hour {
		return 0, fmt.Errorf("%w: --step %s is outside 1ms–24h (or use auto)", source.ErrSettings, d)
	}
	return d, nil
}

// open checks the settings and works out the range: --start (and --end,
// default now), or the last --duration.
func open(env source.Env) (source.Profiler, error) {
	var s Settings
	if err := env.Settings("prometheus", &s); err != nil {
		return nil, err
	}
	if s.URL == "" {
		return nil, fmt.Errorf("%w: --source prometheus needs --prometheus-url (or prometheus.url in the config file)", source.ErrSettings)
	}
	step, err := ParseStep(s.Step)
	if err != nil {
		return nil, err
	}
	end := env.End
	if end.IsZero() {
		end = env.Now().UTC()
	}
	start := env.Start
	switch {
	case !start.IsZero():
		if !end.After(start) {
			return nil, fmt.Errorf("%w: --end must be after --start", source.ErrSettings)
		}
	case env.Duration > 0:
		start = end.Add(-env.Duration)
	default:
		return nil, fmt.Errorf("%w: --source prometheus needs a range: --duration 1h, or --start (and --end)", source.ErrSettings)
	}
	hc, err := env.HTTP("prometheus")
	if err != nil {
		return nil, err
	}
	var kube *kubeapi.Client
	if s.Kubeconfig != "" {
		if kube, err = kubeapi.Load(s.Kubeconfig, s.Timeout); err != nil {
			return nil, fmt.Errorf("%w: --kubeconfig: %v", source.ErrSettings, err)
		}
	}
	after := env.Reach
	if now := env.Now(); end.Add(after).After(now) {
		after = max(0, now.Sub(end).Truncate(time.Second)) // nothing is there yet
	}
	return reader{Options{URL: s.URL, HTTP: hc, Start: start, End: end, Before: env.Reach, After: after, Align: env.Align, Step: step, Selector: s.Selector,
		Chunk: s.Chunk, Concurrency: s.Concurrency, Timeout: s.Timeout, Retries: s.Retries, Backoff: time.Second,
		MaxSamples: s.MaxSamples, BatchSamples: s.BatchSamples, Pushdown: s.Pushdown, OnProgress: env.Progress, Kube: kube, Work: env.Work, Units: env.Units}}, nil
}
