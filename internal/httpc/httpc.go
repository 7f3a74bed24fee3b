// Package httpc builds the HTTP clients of the sources that read over HTTP
// (Prometheus, dcgm-exporter scrapes) from prometheus/common's settings, and
// writes their errors without the credentials a URL can carry.
package httpc

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
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
	if cfg.OAuth2 != nil {
		c.Transport = &oauth2Gate{next: c.Transport, serial: cfg.OAuth2.ClientSecretFile != "" || cfg.OAuth2.ClientSecretRef != ""}
	}
	return c, nil
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
