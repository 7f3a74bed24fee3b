package cmd

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/prometheus/common/config"
	"github.com/spf13/viper"
	yaml "go.yaml.in/yaml/v2"

	"github.com/seedance/seedance/internal/table"
	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source"
	"github.com/seedance/seedance/source/prometheus"
	"github.com/seedance/seedance/source/scrape"
)

// httpConfig decodes the HTTP settings of a section (prometheus or scrape)
// into prometheus/common's HTTPClientConfig, strictly, so that a misspelt
// setting is an error. The settings may stand directly in the section, as in
// a Prometheus scrape config, or under its http: key. The message names the
// setting, never its value.
func httpConfig(v *viper.Viper, section string) (config.HTTPClientConfig, error) {
	cfg := config.DefaultHTTPClientConfig
	key := section + ".http"
	m := map[string]any{}
	for k, val := range v.GetStringMap(key) {
		m[k] = val
	}
	for k := range httpClientKeys {
		if v.IsSet(section + "." + k) {
			m[k] = v.Get(section + "." + k)
		}
	}
	if len(m) == 0 {
		return cfg, nil
	}
	b, err := yaml.Marshal(m)
	if err != nil {
		return cfg, usageErrorf("config %s: %v", key, err)
	}
	if err := yaml.UnmarshalStrict(b, &cfg); err != nil {
		return cfg, usageErrorf("config %s: %s", key, oneLine(err.Error()))
	}
	return cfg, nil
}

// promRange works out [start, end) from --start/--end or --duration.
func promRange(o *ProfileOptions) (time.Time, time.Time, error) {
	end := o.Now().UTC()
	if o.End != "" {
		t, err := time.Parse(time.RFC3339, o.End)
		if err != nil {
			return end, end, usageErrorf("--end %q is not an RFC 3339 time", o.End)
		}
		end = t
	}
	switch {
	case o.Start != "":
		start, err := time.Parse(time.RFC3339, o.Start)
		if err != nil {
			return end, end, usageErrorf("--start %q is not an RFC 3339 time", o.Start)
		}
		if !end.After(start) {
			return end, end, usageErrorf("--end must be after --start")
		}
		return start, end, nil
	case o.Config.Profile.Duration > 0:
		return end.Add(-o.Config.Profile.Duration), end, nil
	}
	return end, end, usageErrorf("--source prometheus needs a range: --duration 1h, or --start (and --end)")
}

func profilePrometheus(o *ProfileOptions) error {
	pc := o.Config.Prometheus
	if pc.URL == "" {
		return usageErrorf("--source prometheus needs --prometheus-url (or prometheus.url in the config file)")
	}
	if pc.Step <= 0 {
		return usageErrorf("--step must be positive")
	}
	start, end, err := promRange(o)
	if err != nil {
		return err
	}
	hc, err := httpConfig(o.viper, "prometheus")
	if err != nil {
		return err
	}
	po := prometheus.Options{URL: pc.URL, HTTP: hc, Start: start, End: end, Step: pc.Step, Selector: pc.Selector,
		Chunk: pc.Chunk, Concurrency: pc.Concurrency, Timeout: pc.Timeout, Retries: pc.Retries, Backoff: time.Second,
		Generator: profile.Generator{Name: "seedance", Version: o.Build.Version}}
	if !o.Config.Profile.Quiet && o.IO.IsStderrTTY() {
		po.OnProgress = func(done, total int) {
			fmt.Fprintf(o.IO.ErrOut, "\r\033[Kqueries %d/%d", done, total)
		}
		defer fmt.Fprint(o.IO.ErrOut, "\r\033[K")
	}
	p, err := prometheus.Read(o.Ctx, po)
	if errors.Is(err, source.ErrInterrupted) {
		return &ExitError{Code: ExitInterrupted, Err: err}
	}
	if err != nil {
		return err // ErrNoMetrics: nothing observed, exit 1
	}
	// Interrupted part-way: the chunks read so far, "complete": false, 130.
	return finishProfile(o, p, nil, true)
}

// scrapeTargets joins --targets and the lines of --targets-file (blank
// lines and # comments skipped).
func scrapeTargets(o *ProfileOptions) ([]string, error) {
	out := append([]string(nil), o.Config.Scrape.Targets...)
	if f := o.Config.Scrape.TargetsFile; f != "" {
		fh, err := os.Open(f)
		if err != nil {
			return nil, usageErrorf("--targets-file: %v", err)
		}
		defer fh.Close()
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
				out = append(out, line)
			}
		}
		if err := sc.Err(); err != nil {
			return nil, usageErrorf("--targets-file: %v", err)
		}
	}
	if len(out) == 0 {
		return nil, usageErrorf("--source scrape needs --targets host:9400,… or --targets-file FILE")
	}
	return out, nil
}

func profileScrape(o *ProfileOptions) error {
	targets, err := scrapeTargets(o)
	if err != nil {
		return err
	}
	hc, err := httpConfig(o.viper, "scrape")
	if err != nil {
		return err
	}
	pc := o.Config.Profile
	timeout := o.Config.Scrape.Timeout
	if timeout <= 0 || timeout > pc.Interval {
		timeout = pc.Interval * 9 / 10
	}
	ro := source.RecordOptions{Interval: pc.Interval, Duration: pc.Duration,
		Generator: profile.Generator{Name: "seedance", Version: o.Build.Version}}
	if pc.Checkpoint > 0 && pc.Output != "-" {
		ro.Checkpoint = pc.Checkpoint
		ro.OnCheckpoint = func(p *profile.Profile) error { return profile.WriteFile(pc.Output, p) }
	}
	var bar *progressBar
	if !pc.Quiet && o.IO.IsStderrTTY() {
		bar = newProgressBar(o.IO.ErrOut, len(targets), 0)
		ro.OnSample = bar.update
	}
	log := func(line string) { fmt.Fprintln(o.IO.ErrOut, "warning: "+table.Visible(line)) }
	p, err := scrape.Scrape(o.Ctx, scrape.Options{Targets: targets, HTTP: hc, Timeout: timeout, Log: log}, ro)
	bar.done()
	if p == nil {
		if errors.Is(err, profile.ErrInvalid) || errors.Is(err, source.ErrSettings) {
			return &UsageError{Err: err}
		}
		return err
	}
	return finishProfile(o, p, err, true)
}
