package profile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"
)

// promClient queries Prometheus's HTTP API (/api/v1/query). Errors never
// carry the URL's credentials, and HTTP settings (auth, TLS, proxy,
// headers) come from prometheus/common's HTTPClientConfig.
type promClient struct {
	base    *url.URL
	http    *http.Client
	retries int
	backoff time.Duration
}

// ErrPrometheus marks a query that failed after its retries.
var ErrPrometheus = errors.New("prometheus query failed")

// promResponse is the API's envelope.
type promResponse struct {
	Status    string          `json:"status"`
	Data      json.RawMessage `json:"data"`
	ErrorType string          `json:"errorType"`
	Error     string          `json:"error"`
	Warnings  []string        `json:"warnings"`
}

type promData struct {
	ResultType string          `json:"resultType"`
	Result     json.RawMessage `json:"result"`
}

// retryable is a failure worth another try: the network, a timeout, 429, 5xx.
type retryable struct{ err error }

func (r retryable) Error() string { return r.err.Error() }

// query runs an instant query at t and returns its matrix or vector result
// and the server's warnings. It retries network errors, timeouts, 429 and
// 5xx with exponential backoff; a 4xx fails at once, naming the query.
func (c *promClient) query(ctx context.Context, q string, t time.Time) (model.Value, []string, error) {
	var last error
	for attempt := 0; attempt <= c.retries; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			case <-time.After(c.backoff << (attempt - 1)):
			}
		}
		v, warns, err := c.once(ctx, q, t)
		var r retryable
		if err == nil || !errors.As(err, &r) || ctx.Err() != nil {
			if err != nil {
				return nil, nil, fmt.Errorf("%w: %s: %v", ErrPrometheus, q, err)
			}
			return v, warns, nil
		}
		last = r.err
	}
	return nil, nil, fmt.Errorf("%w after %d tries: %s: %v", ErrPrometheus, c.retries+1, q, last)
}

func (c *promClient) once(ctx context.Context, q string, t time.Time) (model.Value, []string, error) {
	u := *c.base
	u.Path = strings.TrimSuffix(u.Path, "/") + "/api/v1/query"
	form := url.Values{"query": {q}, "time": {strconv.FormatFloat(float64(t.UnixMilli())/1e3, 'f', 3, 64)}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), strings.NewReader(form.Encode()))
	if err != nil {
		return nil, nil, errors.New("cannot build request: " + redactErr(err))
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, nil, retryable{errors.New(redactErr(err))}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, retryable{fmt.Errorf("reading the answer: %s", redactErr(err))}
	}
	var env promResponse
	jsonErr := json.Unmarshal(body, &env)
	switch {
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return nil, nil, retryable{fmt.Errorf("HTTP %d %s", resp.StatusCode, env.Error)}
	case resp.StatusCode >= 400:
		msg := env.Error
		if msg == "" {
			msg = http.StatusText(resp.StatusCode)
		}
		return nil, nil, fmt.Errorf("HTTP %d: %s", resp.StatusCode, msg)
	case jsonErr != nil:
		return nil, nil, fmt.Errorf("not a Prometheus API answer (is %s a Prometheus server?)", c.base.Redacted())
	case env.Status != "success":
		return nil, nil, fmt.Errorf("%s: %s", env.ErrorType, env.Error)
	}
	var d promData
	if err := json.Unmarshal(env.Data, &d); err != nil {
		return nil, nil, fmt.Errorf("bad data in the answer: %v", err)
	}
	switch d.ResultType {
	case "matrix":
		var m model.Matrix
		if err := json.Unmarshal(d.Result, &m); err != nil {
			return nil, nil, fmt.Errorf("bad matrix in the answer: %v", err)
		}
		return m, env.Warnings, nil
	case "vector":
		var v model.Vector
		if err := json.Unmarshal(d.Result, &v); err != nil {
			return nil, nil, fmt.Errorf("bad vector in the answer: %v", err)
		}
		return v, env.Warnings, nil
	}
	return nil, nil, fmt.Errorf("unexpected result type %q", d.ResultType)
}

// redactErr writes a net/http error without the URL it carries (which can
// hold user:password@).
func redactErr(err error) string {
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
