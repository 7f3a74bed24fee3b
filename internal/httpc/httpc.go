// Package httpc builds the HTTP clients of the sources that read over HTTP
// (Prometheus, dcgm-exporter scrapes) from prometheus/common's settings, and
// writes their errors without the credentials a URL can carry.
package httpc

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/common/config"
)

// New builds an HTTP client from prometheus/common's config.
func New(cfg config.HTTPClientConfig, timeout time.Duration) (*http.Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("http settings: %v", err)
	}
	c, err := config.NewClientFromConfig(cfg, "seedance")
	if err != nil {
		return nil, fmt.Errorf("http settings: %v", err)
	}
	c.Timeout = timeout
	if cfg.FollowRedirects {
		c.CheckRedirect = SameOrigin
	}
	if cfg.OAuth2 != nil {
		c.Transport = &oauth2Gate{next: c.Transport, serial: cfg.OAuth2.ClientSecretFile != "" || cfg.OAuth2.ClientSecretRef != ""}
	}
	return c, nil
}

// maxRedirects is how many redirects a request follows, as net/http's
// default.
const maxRedirects = 10

// SameOrigin is the redirect rule of every seedance HTTP client that
// follows redirects: a redirect that changes the scheme, the host or the
// port is refused, since the client's credentials (a bearer token, basic
// auth, a client certificate, an OAuth2 token its transport adds to every
// request) would follow it; net/http's own rule keeps them when only the
// port changes, and a transport that adds them is not ruled at all.
func SameOrigin(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	from := via[0].URL
	if origin(req.URL) != origin(from) {
		return fmt.Errorf("a redirect from %s to %s refused: it leaves the origin, and credentials never follow a redirect to another scheme, host or port (give the new address instead)", origin(from), origin(req.URL))
	}
	return nil
}

// origin is a URL's scheme://host:port, the port made explicit.
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	return strings.ToLower(u.Scheme) + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// RedactErr writes a net/http error without the URL it carries (which can
// hold user:password@).
func RedactErr(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		u, perr := url.Parse(ue.URL)
		where := "the server"
		if perr == nil {
			u.User = nil
			u.RawQuery = ""
			where = u.Host
		}
		return fmt.Sprintf("%s %s: %v", ue.Op, where, ue.Err)
	}
	return err.Error()
}

// oauth2Gate works around a data race in prometheus/common's OAuth2 round
// tripper (v0.74.0): the request that builds the token source writes the
// shared transport's Source while concurrent requests read it, which the
// race detector reports and which can tear the interface value. The gate
// lets a request go alone until one has succeeded (the source is built);
// after that requests go concurrently, since an inline secret never
// rebuilds it. A secret read from a file or a reference can change, and
// every change rebuilds the source, so then every request goes alone.
type oauth2Gate struct {
	next   http.RoundTripper
	serial bool
	mu     sync.RWMutex
	ready  atomic.Bool
}

// RoundTrip sends r alone until the token source is built, then shared.
func (g *oauth2Gate) RoundTrip(r *http.Request) (*http.Response, error) {
	if g.serial || !g.ready.Load() {
		g.mu.Lock()
		defer g.mu.Unlock()
		resp, err := g.next.RoundTrip(r)
		if err == nil {
			g.ready.Store(true)
		}
		return resp, err
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.next.RoundTrip(r)
}

// CloseIdleConnections passes the call on to the wrapped transport.
func (g *oauth2Gate) CloseIdleConnections() {
	type closeIdler interface{ CloseIdleConnections() }
	if ci, ok := g.next.(closeIdler); ok {
		ci.CloseIdleConnections()
	}
}
