// Package httpc builds the HTTP clients of the sources that read over HTTP
// (Prometheus, dcgm-exporter scrapes) from prometheus/common's settings, and
// writes their errors without the credentials a URL can carry.
package httpc

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
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
