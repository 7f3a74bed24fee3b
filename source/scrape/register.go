package scrape

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/seedance/seedance/internal/setting"

	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source"
)

// Settings are the scrape section of seedance's configuration (its HTTP
// client settings are read through source.Env.HTTP).
type Settings struct {
	Targets     []string       `mapstructure:"targets"`
	TargetsFile string         `mapstructure:"targets_file"`
	Timeout     time.Duration  `mapstructure:"timeout"`
	Serving     []string       `mapstructure:"serving"`
	HTTP        map[string]any `mapstructure:"http"`
}

// keys are the source's settings, its section of the configuration
// (docs/configuration.md).
var keys = append([]setting.Key{
	{Key: "scrape.targets", Default: []string{}, Cmd: "profile analyze", Flag: "targets", Split: true, Help: "dcgm-exporter endpoints to scrape, host:port or URLs (--source scrape)"},
	{Key: "scrape.targets_file", Default: "", Cmd: "profile analyze", Flag: "targets-file", Help: "file with one scrape target per line (--source scrape)"},
	{Key: "scrape.serving", Default: []string{}, Cmd: "profile analyze", Flag: "serving", Split: true, Help: "metrics endpoints of serving engines (vLLM, SGLang, TGI, Triton) or apps whose counters of work done (theirs and the units: metrics) go to their pods, as NAMESPACE/POD=URL (--source scrape; docs/units.md)"},
	{Key: "scrape.timeout", Default: setting.Dur("10s"), Help: "timeout of one scrape (at most the interval)", Range: setting.Rng(0, 3600)},
	{Key: "scrape.http", Default: map[string]any{}, Help: "HTTP settings of the scrapes (like prometheus.http)", Map: true},
}, setting.HTTPKeys("scrape")...)

func init() {
	source.Register(source.Registration{Name: profile.SourceScrape, Open: open, Settings: Settings{}, Keys: keys})
}

// scraper samples the endpoints for the whole run.
type scraper struct{ o Options }

func (s scraper) Profile(ctx context.Context, ro source.RecordOptions) (*profile.Profile, error) {
	return Scrape(ctx, s.o, ro)
}

func (scraper) Close() error { return nil }

// Size is the number of endpoints; their GPUs are known once scraped.
func (s scraper) Size() (nodes, gpus int) { return len(s.o.Targets), 0 }

// open reads the targets (--targets and the lines of --targets-file, blank
// lines and # comments skipped) and bounds one scrape by the interval.
func open(env source.Env) (source.Profiler, error) {
	var s Settings
	if err := env.Settings("scrape", &s); err != nil {
		return nil, err
	}
	targets := append([]string(nil), s.Targets...)
	if s.TargetsFile != "" {
		lines, err := readTargets(s.TargetsFile)
		if err != nil {
			return nil, fmt.Errorf("%w: --targets-file: %v", source.ErrSettings, err)
		}
		targets = append(targets, lines...)
	}
	if len(targets) == 0 {
		return nil, fmt.Errorf("%w: --source scrape needs --targets host:9400,… or --targets-file FILE", source.ErrSettings)
	}
	hc, err := env.HTTP("scrape")
	if err != nil {
		return nil, err
	}
	timeout := s.Timeout
	if timeout <= 0 || timeout > env.Interval {
		timeout = env.Interval * 9 / 10
	}
	var serving []ServingTarget
	for _, spec := range s.Serving {
		t, err := ParseServing(spec)
		if err != nil {
			return nil, fmt.Errorf("%w: --serving: %v", source.ErrSettings, err)
		}
		if slices.Contains(serving, t) { // its counters would count twice, as one series
			return nil, fmt.Errorf("%w: --serving: %s=%s is given twice", source.ErrSettings, t.Pod, redactURLText(t.URL))
		}
		serving = append(serving, t)
	}
	return scraper{Options{Targets: targets, HTTP: hc, Timeout: timeout, Log: env.Log, Serving: serving, Units: env.Units}}, nil
}

func readTargets(path string) ([]string, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	var out []string
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, line)
		}
	}
	return out, sc.Err()
}
