package httpc

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/config"

	"github.com/seedance/seedance/internal/testkit/testnet"
)

// TestOAuth2Concurrent sends concurrent first requests through an OAuth2
// client, with an inline secret and with one read from a file: each carries
// the token, and under -race the shared token source is never read while it
// is written (prometheus/common v0.74.0 alone fails this).
func TestOAuth2Concurrent(t *testing.T) {
	var tokens atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		tokens.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"access_token":"tok","token_type":"Bearer","expires_in":3600}`)
	})
	mux.HandleFunc("/data", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, "ok")
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	secretFile := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secretFile, []byte("s3"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, o := range map[string]config.OAuth2{
		"inline": {ClientID: "c", ClientSecret: "s3", TokenURL: srv.URL + "/token"},
		"file":   {ClientID: "c", ClientSecretFile: secretFile, TokenURL: srv.URL + "/token"},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := config.DefaultHTTPClientConfig
			cfg.OAuth2 = &o
			c, err := New(cfg, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			errs := make(chan error, 32)
			for range 32 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					resp, err := c.Get(srv.URL + "/data")
					if err != nil {
						errs <- err
						return
					}
					defer resp.Body.Close()
					b, _ := io.ReadAll(resp.Body)
					if resp.StatusCode != http.StatusOK || string(b) != "ok" {
						errs <- fmt.Errorf("status %d: %s", resp.StatusCode, b)
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
	if tokens.Load() == 0 {
		t.Error("no token was fetched")
	}
}

// TestCloseIdleConnections: a client closes its keep-alive connections
// when told, through every round tripper the settings can stack (basic
// auth, OAuth2 and its gate): a source's run leaves nothing open.
func TestCloseIdleConnections(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"access_token":"tok","token_type":"Bearer","expires_in":3600}`)
	})
	mux.HandleFunc("/data", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") })
	srv := testnet.CountConns(t, mux)
	for name, set := range map[string]func(*config.HTTPClientConfig){
		"plain": func(*config.HTTPClientConfig) {},
		"basic": func(c *config.HTTPClientConfig) { c.BasicAuth = &config.BasicAuth{Username: "u", Password: "p"} },
		"oauth2": func(c *config.HTTPClientConfig) {
			c.OAuth2 = &config.OAuth2{ClientID: "c", ClientSecret: "s3", TokenURL: srv.URL + "/token"}
		},
	} {
		cfg := config.DefaultHTTPClientConfig
		set(&cfg)
		c, err := New(cfg, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			resp, err := c.Get(srv.URL + "/data")
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		if srv.Open() == 0 {
			t.Fatalf("%s: no connection open before the close: the test would prove nothing", name)
		}
		c.CloseIdleConnections()
		srv.WaitAllClosed(t, name, 10*time.Second)
	}
}

// TestCredentialsStayOnOrigin (#56): a redirect to another port of the same
// host, to another host or scheme is refused, and the credentials never
// reach it; one within the origin is followed with them.
func TestCredentialsStayOnOrigin(t *testing.T) {
	var leaked atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			leaked.Add(1)
		}
		fmt.Fprint(w, "other")
	}))
	defer other.Close()
	mux := http.NewServeMux()
	mux.HandleFunc("/port", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/x", http.StatusFound)
	})
	mux.HandleFunc("/host", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://localhost:"+fmt.Sprint(other.Listener.Addr().(*net.TCPAddr).Port)+"/x", http.StatusFound)
	})
	mux.HandleFunc("/here", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/data", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/data", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, r.Header.Get("Authorization"))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	cfg := config.DefaultHTTPClientConfig
	cfg.Authorization = &config.Authorization{Type: "Bearer", Credentials: "secret"}
	c, err := New(cfg, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/port", "/host"} {
		resp, err := c.Get(srv.URL + path)
		if err == nil {
			_ = resp.Body.Close()
			t.Fatalf("%s: a redirect off the origin was followed", path)
		}
		if !strings.Contains(err.Error(), "refused") {
			t.Errorf("%s: %v", path, err)
		}
	}
	if leaked.Load() != 0 {
		t.Fatalf("the token reached another origin %d times", leaked.Load())
	}
	resp, err := c.Get(srv.URL + "/here")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if string(b) != "Bearer secret" {
		t.Errorf("a redirect within the origin: got %q", b)
	}
}

// TestOrigin: the port is made explicit, case does not count.
func TestOrigin(t *testing.T) {
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"http://h/x", "http://H:80/y", true},
		{"https://h/x", "https://h:443/y", true},
		{"http://h/x", "https://h/x", false},
		{"http://h:9090/x", "http://h:9091/x", false},
		{"http://[::1]:9090/x", "http://[::1]:9090/y", true},
		{"http://a.h/x", "http://h/x", false},
	} {
		ua, _ := url.Parse(c.a)
		ub, _ := url.Parse(c.b)
		if got := origin(ua) == origin(ub); got != c.same {
			t.Errorf("%s vs %s: same %v", c.a, c.b, got)
		}
	}
}
