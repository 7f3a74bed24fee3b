package cmd

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestSecretsNeverShown sets every secret-bearing setting, one kind at a
// time, to a marker, and runs config view, a failing Prometheus read and a
// scrape whose target fails half the time: the marker is in no output,
// error, note or profile.
func TestSecretsNeverShown(t *testing.T) {
	const mark = "S3CR3T-MARKER"
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1)%2 == 0 || strings.HasPrefix(r.URL.Path, "/api") {
			http.Error(w, "unavailable", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-1\",Hostname=\"h\"} 5\n"))
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	settings := []string{
		"basic_auth: {username: alice, password: " + mark + "}",
		"authorization: {type: Bearer, credentials: " + mark + "}",
		"bearer_token: " + mark,
		"http_headers:\n    X-Api-Key: {secrets: [" + mark + "]}",
		"proxy_connect_header:\n    Proxy-Authorization: [" + mark + "]",
		"oauth2: {client_id: c, client_secret: " + mark + ", token_url: 'http://127.0.0.1:1/token'}",
	}
	for i, setting := range settings {
		t.Run(strings.Fields(setting)[0], func(t *testing.T) {
			cfg := writeConfig(t, "prometheus:\n  url: http://bob:"+mark+"@"+host+"\n  retries: 0\n  "+setting+
				"\nscrape:\n  targets: ['http://carol:"+mark+"@"+host+"/metrics']\n  "+setting+"\n")
			out := filepath.Join(t.TempDir(), "p.json")
			env := map[string]string{"SEEDANCE_CONFIG": cfg}
			runs := []result{
				run(t, env, "config", "view"),
				run(t, env, "config", "view", "--format", "json"),
				run(t, env, "config", "view", "--format", "yaml"),
				run(t, env, "profile", "--source", "prometheus", "--duration", "1h", "-o", out),
			}
			if i == 0 { // one scrape run: the others' HTTP settings are checked above
				runs = append(runs, run(t, env, "profile", "--source", "scrape", "--interval", "100ms", "--duration", "0.5", "-o", out))
			}
			for j, r := range runs {
				if strings.Contains(r.out+r.errOut, mark) {
					t.Errorf("run %d shows the secret:\n%s%s", j, r.out, r.errOut)
				}
			}
			if b, err := os.ReadFile(out); err == nil && strings.Contains(string(b), mark) {
				t.Errorf("the profile holds the secret")
			}
		})
	}
}
