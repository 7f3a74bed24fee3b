package kubeapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// MaxObjectBytes bounds one object a write or a get answers with.
const MaxObjectBytes = 8 << 20

// StatusError is a non-2xx answer of the API server: its code and message.
type StatusError struct {
	Code    int
	Message string
}

func (e *StatusError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.Code, e.Message) }

// Writer has the write verbs reclaim needs (get, patch, create); only
// reclaim's actor uses it, never a source. Errors name the method and
// path and the server's status, never the credentials.
type Writer struct{ c *Client }

// Writer returns the client's write verbs.
func (c *Client) Writer() *Writer { return &Writer{c: c} }

// Get reads the object at path into out.
func (w *Writer) Get(ctx context.Context, path string, out any) error {
	return w.do(ctx, http.MethodGet, path, "", nil, out)
}

// MergePatch applies a JSON merge patch (RFC 7386) to the object at path.
func (w *Writer) MergePatch(ctx context.Context, path string, patch any, out any) error {
	b, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	return w.do(ctx, http.MethodPatch, path, "application/merge-patch+json", b, out)
}

// Create posts body to the collection (or subresource) at path.
func (w *Writer) Create(ctx context.Context, path string, body any, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	return w.do(ctx, http.MethodPost, path, "application/json", b, out)
}

func (w *Writer) do(ctx context.Context, method, path, ctype string, body []byte, out any) error {
	c := w.c
	u := *c.base
	u.Path = strings.TrimSuffix(u.Path, "/") + path
	req, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s %s: %v", method, path, err)
	}
	req.Header.Set("Accept", "application/json")
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %v", method, path, errors.Unwrap(err))
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxObjectBytes+1))
	if err != nil {
		return fmt.Errorf("%s %s: %v", method, path, err)
	}
	if len(b) > MaxObjectBytes {
		return fmt.Errorf("%s %s: an answer larger than %d MiB", method, path, MaxObjectBytes>>20)
	}
	if resp.StatusCode/100 != 2 {
		var st struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(b, &st)
		return fmt.Errorf("%s %s: %w", method, path, &StatusError{Code: resp.StatusCode, Message: oneLine(st.Message)})
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%s %s: not a Kubernetes object: %v", method, path, err)
	}
	return nil
}
