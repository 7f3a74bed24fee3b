package prometheus

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

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
	HTTP         map[string]any `mapstructure:"http"`
}

func init() {
	source.Register(source.Registration{Name: profile.SourcePrometheus, Open: open})
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
	o.Generator = ro.Generator
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
	return reader{Options{URL: s.URL, HTTP: hc, Start: start, End: end, Step: step, Selector: s.Selector,
		Chunk: s.Chunk, Concurrency: s.Concurrency, Timeout: s.Timeout, Retries: s.Retries, Backoff: time.Second,
		MaxSamples: s.MaxSamples, BatchSamples: s.BatchSamples, Pushdown: s.Pushdown, OnProgress: env.Progress}}, nil
}
