// Package setting is how a setting is declared: its key, default, flag,
// help and range. seedance's settings (package settings) and each source's
// own (declared where the source registers, as node_exporter's collectors
// declare their flags) are made of it.
package setting

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Key is one setting, defined once. Its config file key, its
// environment variable (SEEDANCE_ + the key), its default, its flag, the
// range checked at start-up, `seedance config view` and the settings tables
// of docs/configuration.md are all made from it.
type Key struct {
	Key string
	// Default's type is the setting's: string, bool, int, int64, float64,
	// Dur (a duration), []string or a map.
	Default any
	Help    string
	// Cmd names the commands (space-separated) whose flag Flag sets the key
	// (Short is its one-letter form); a key without a flag is set by the
	// file or the environment only.
	Cmd, Flag, Short string
	// Split makes a list flag take comma-separated values (--targets a,b);
	// otherwise it repeats (--gate X --gate Y), for values with commas.
	Split bool
	// DocDefault and DocFlag are what docs/configuration.md shows when the
	// default value or the flag alone would not say it.
	DocDefault, DocFlag string
	// Map keys take any sub-key (a map of user-chosen names to values).
	Map bool
	// NoDefault keys are only known, not set: absent unless configured.
	NoDefault bool
	// Range, when set, is the valid range of a number or duration (in
	// seconds), checked at start-up; of every value of a Map key.
	Range *Range
}

// Dur is a duration default, written as users write it ("60s", "2h").
type Dur string

// SecondsDur writes a default duration in seconds ("60s").
func SecondsDur(d time.Duration) Dur { return Dur(fmt.Sprintf("%gs", d.Seconds())) }

// Range is an inclusive range of valid values.
type Range struct{ Min, Max float64 }

// Rng is a range; durations are given in seconds.
func Rng(lo, hi float64) *Range { return &Range{lo, hi} }

// Ranges of durations, in seconds.
const (
	Day  = 86400.0
	Span = 400 * Day // profile.MaxSpan
)

// httpClientKeys are prometheus/common HTTPClientConfig's settings, which
// may also stand directly under prometheus: and scrape:, as in a
// Prometheus scrape config.
var httpClientKeys = map[string]bool{
	"basic_auth": true, "authorization": true, "oauth2": true, "tls_config": true, "http_headers": true,
	"proxy_connect_header": true, "bearer_token": false, "bearer_token_file": false, "proxy_url": false,
	"no_proxy": false, "proxy_from_environment": false, "follow_redirects": false, "enable_http2": false,
}

// HTTPKeys are the HTTP client settings that may stand directly in a
// section (prometheus:, scrape:), known but set only when configured.
func HTTPKeys(section string) []Key {
	var out []Key
	for _, k := range slices.Sorted(maps.Keys(httpClientKeys)) {
		out = append(out, Key{Key: section + "." + k, Map: httpClientKeys[k], NoDefault: true})
	}
	return out
}

// OrList writes "a, b or c".
func OrList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Value is a key's default as viper holds it.
func (k Key) Value() any {
	if d, ok := k.Default.(Dur); ok {
		return string(d)
	}
	return k.Default
}

// DocValue is a key's default as docs/configuration.md shows it.
func (k Key) DocValue() string {
	if k.DocDefault != "" {
		return k.DocDefault
	}
	switch d := k.Default.(type) {
	case string:
		if d == "" {
			return ""
		}
	case []string:
		if len(d) == 0 {
			return ""
		}
		return "`" + strings.Join(d, ", ") + "`"
	case map[string]any:
		return ""
	case map[string]float64:
		parts := make([]string, 0, len(d))
		for _, name := range slices.Sorted(maps.Keys(d)) {
			parts = append(parts, fmt.Sprintf("%s: %g", name, d[name]))
		}
		if len(parts) == 0 {
			return ""
		}
		return "`" + strings.Join(parts, ", ") + "`"
	}
	return "`" + fmt.Sprint(k.Value()) + "`"
}
