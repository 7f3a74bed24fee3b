package kubeapi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/testkit/testnet"
)

const secret = "s3cret-token-value"

func kubeconfigFor(t *testing.T, srv *httptest.Server, user string) string {
	t.Helper()
	ca := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	doc := fmt.Sprintf(`apiVersion: v1
kind: Config
current-context: test
contexts: [{name: test, context: {cluster: c, user: u}}]
clusters: [{name: c, cluster: {server: %s, certificate-authority-data: %s}}]
users: [{name: u, user: %s}]
`, srv.URL, ca, user)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestListPagesWithToken: the token goes in the Authorization header over
// the kubeconfig's CA, and every page of a list is read.
func TestListPagesWithToken(t *testing.T) {
	srv := testnet.CountConnsTLS(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+secret {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"message":"Unauthorized"}`))
			return
		}
		if r.URL.Query().Get("continue") == "" {
			_, _ = w.Write([]byte(`{"items":[{"n":1},{"n":2}],"metadata":{"continue":"next"}}`))
			return
		}
		_, _ = w.Write([]byte(`{"items":[{"n":3}],"metadata":{}}`))
	}))
	c, err := Load(kubeconfigFor(t, srv.Server, "{token: "+secret+"}"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	err = c.List(context.Background(), "/apis/x/v1/things", func(raw json.RawMessage) error { got = append(got, string(raw)); return nil })
	if err != nil || strings.Join(got, "") != `{"n":1}{"n":2}{"n":3}` {
		t.Fatalf("%v %v", got, err)
	}
	// Its connection goes when the reader is done with it.
	c.CloseIdleConnections()
	srv.WaitAllClosed(t, "a kube-apiserver client", 10*time.Second)
	// A wrong token: HTTP 401 in one line, and the token nowhere.
	c, err = Load(kubeconfigFor(t, srv.Server, "{token: wrong-"+secret+"}"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	err = c.List(context.Background(), "/apis/x/v1/things", func(json.RawMessage) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "HTTP 401: Unauthorized") || strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "\n") {
		t.Errorf("error %v", err)
	}
}

// TestConfigRefused: what seedance cannot use is a one-line error.
func TestConfigRefused(t *testing.T) {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	for user, want := range map[string]string{
		"{exec: {command: aws}}":             "exec or auth-provider plugin",
		"{client-certificate-data: \"%%%\"}": "client-certificate-data is not base64",
		"{tokenFile: /nonexistent/token}":    "tokenFile",
	} {
		if _, err := Load(kubeconfigFor(t, srv, user), time.Second); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", user, err)
		}
	}
	if _, err := Load("/nonexistent/kubeconfig", time.Second); err == nil {
		t.Error("a missing file loads")
	}
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	if _, err := Load(InCluster, time.Second); err == nil || !strings.Contains(err.Error(), "not in a pod") {
		t.Errorf("in-cluster outside a pod: %v", err)
	}
}

// TestListBounded (#56): a server whose answers always carry a continue
// token ends in a clear error naming the resource: by the repeated token,
// by the pages, by the bytes and by the time, whichever comes first.
func TestListBounded(t *testing.T) {
	var n atomic.Int64
	tokens := func(w http.ResponseWriter, r *http.Request) {
		_, _ = fmt.Fprintf(w, `{"items":[{"n":%d}],"metadata":{"continue":"t%d"}}`, n.Add(1), n.Load())
	}
	same := func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"items":[],"metadata":{"continue":"again"}}`))
	}
	slow := func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(20 * time.Millisecond)
		tokens(w, r)
	}
	for _, c := range []struct {
		name    string
		h       http.HandlerFunc
		lim     ListLimits
		want    string
		maxReqs int64
	}{
		{"pages", tokens, ListLimits{Pages: 50, Bytes: 1 << 30, Time: time.Minute}, "more than 50 pages", 50},
		{"same token", same, DefaultListLimits, "same continue token twice", 2},
		{"bytes", tokens, ListLimits{Pages: 1000, Bytes: 1000, Time: time.Minute}, "more than 0 MiB", 30},
		{"time", slow, ListLimits{Pages: 1 << 20, Bytes: 1 << 40, Time: 300 * time.Millisecond}, "not done after 300ms", 20},
	} {
		n.Store(0)
		srv := httptest.NewTLSServer(c.h)
		cl, err := Load(kubeconfigFor(t, srv, "{token: "+secret+"}"), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		cl.lim = c.lim
		err = cl.List(context.Background(), "/apis/resource.k8s.io/v1/resourceclaims", func(json.RawMessage) error { return nil })
		srv.Close()
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "list /apis/resource.k8s.io/v1/resourceclaims") {
			t.Errorf("%s: %v", c.name, err)
		}
		if n.Load() > c.maxReqs {
			t.Errorf("%s: %d requests", c.name, n.Load())
		}
	}
}

// TestTokenStaysOnOrigin (#56): a redirect to another port of the same
// host is refused; the token never reaches it.
func TestTokenStaysOnOrigin(t *testing.T) {
	var leaked atomic.Int32
	other := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			leaked.Add(1)
		}
		_, _ = w.Write([]byte(`{"items":[]}`))
	}))
	defer other.Close()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	cl, err := Load(kubeconfigFor(t, srv, "{token: "+secret+"}"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	err = cl.List(context.Background(), "/api/v1/pods", func(json.RawMessage) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "refused") || leaked.Load() != 0 {
		t.Fatalf("err %v, token sent to the other port %d times", err, leaked.Load())
	}
}
