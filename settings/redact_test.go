package settings

import (
	"strings"
	"testing"
)

// TestRedacted: secrets by key at any depth, in lists too, and passwords
// in URLs, never reach config view.
func TestRedacted(t *testing.T) {
	for _, tt := range []struct {
		key  string
		v    any
		want string
	}{
		{"prometheus.url", "http://u:hunter2@prom:9090", "http://u:xxxxx@prom:9090"},
		{"prometheus.url", "tok3n@prom:9090", "%3Csecret%3E@prom:9090"},
		{"prometheus.basic_auth", map[string]any{"username": "u", "password": "hunter2"}, "map[password:<secret> username:u]"},
		{"prometheus.http", map[string]any{"proxy_connect_header": map[string]any{"X": []any{"hunter2"}}}, "map[proxy_connect_header:map[X:[<secret>]]]"},
		{"prometheus.bearer_token", "hunter2", "<secret>"},
		{"prometheus.bearer_token_file", "/run/token", "/run/token"},
		{"scrape.targets", []string{"a:9400", "u:hunter2@b:9400"}, "[a:9400 u:xxxxx@b:9400]"},
	} {
		got := Redacted(tt.key, tt.v)
		if got != tt.want || strings.Contains(got, "hunter2") {
			t.Errorf("%s: %q, want %q", tt.key, got, tt.want)
		}
	}
}
