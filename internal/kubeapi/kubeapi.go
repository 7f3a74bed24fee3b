// Package kubeapi is a small client of the Kubernetes API: it
// loads a kubeconfig (or a pod's service account) and lists objects of one
// resource, page by page, each page bounded in size. It is what seedance
// reads of the API server (DRA's ResourceClaims and ResourceSlices,
// docs/sharing.md). Its Writer has the few write verbs reclaim acts with
// (docs/reclaim.md); no source uses it. Credentials go to the server only,
// never into an error.
package kubeapi

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/seedance/seedance/internal/httpc"
)

// InCluster is the kubeconfig value that reads the pod's service account.
const InCluster = "in-cluster"

// ErrNotFound marks a collection the server does not serve (HTTP 404):
// an API group that is not installed.
var ErrNotFound = errors.New("not served")

// ErrConfig marks a kubeconfig seedance cannot use.
var ErrConfig = errors.New("kubeconfig")

// Client lists objects of the API server.
type Client struct {
	base  *url.URL
	hc    *http.Client
	token string
	lim   ListLimits
}

// ListLimits bound one list, all its pages together: a server whose
// answers always carry a continue token (or one that sends without end)
// gets a clear error naming the resource, never a loop.
type ListLimits struct {
	Pages int           // pages of pageLimit objects
	Bytes int64         // the pages' bodies together
	Time  time.Duration // from the first request to the last page
}

// DefaultListLimits are a million objects, 1 GiB, 5 minutes.
var DefaultListLimits = ListLimits{Pages: 2000, Bytes: 1 << 30, Time: 5 * time.Minute}

// MaxPageBytes bounds one page of a list: a server that sends more is
// refused rather than filling memory.
const MaxPageBytes = 64 << 20

// pageLimit is the objects asked for per page.
const pageLimit = 500

// Load reads the kubeconfig at path (its current context), or the pod's
// service account when path is InCluster.
func Load(path string, timeout time.Duration) (*Client, error) {
	if path == InCluster {
		return inCluster(timeout)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	var kc kubeconfig
	if err := yaml.Unmarshal(b, &kc); err != nil {
		return nil, fmt.Errorf("%w %s: not YAML: %v", ErrConfig, path, err)
	}
	return kc.client(filepath.Dir(path), timeout)
}

type kubeconfig struct {
	CurrentContext string `yaml:"current-context"`
	Contexts       []struct {
		Name    string `yaml:"name"`
		Context struct {
			Cluster string `yaml:"cluster"`
			User    string `yaml:"user"`
		} `yaml:"context"`
	} `yaml:"contexts"`
	Clusters []struct {
		Name    string `yaml:"name"`
		Cluster struct {
			Server   string `yaml:"server"`
			CA       string `yaml:"certificate-authority"`
			CAData   string `yaml:"certificate-authority-data"`
			Insecure bool   `yaml:"insecure-skip-tls-verify"`
		} `yaml:"cluster"`
	} `yaml:"clusters"`
	Users []struct {
		Name string `yaml:"name"`
		User struct {
			Token     string `yaml:"token"`
			TokenFile string `yaml:"tokenFile"`
			Cert      string `yaml:"client-certificate"`
			CertData  string `yaml:"client-certificate-data"`
			Key       string `yaml:"client-key"`
			KeyData   string `yaml:"client-key-data"`
			Exec      any    `yaml:"exec"`
			Auth      any    `yaml:"auth-provider"`
		} `yaml:"user"`
	} `yaml:"users"`
}

// client makes the client of the current context; relative file names
// are relative to dir, the kubeconfig's folder.
func (kc *kubeconfig) client(dir string, timeout time.Duration) (*Client, error) {
	ctxIdx := -1
	for i, c := range kc.Contexts {
		if c.Name == kc.CurrentContext {
			ctxIdx = i
		}
	}
	if ctxIdx < 0 {
		return nil, fmt.Errorf("%w: current-context %q is not among its contexts", ErrConfig, kc.CurrentContext)
	}
	cx := kc.Contexts[ctxIdx].Context
	tlsc := &tls.Config{MinVersion: tls.VersionTLS12}
	c := &Client{}
	found := false
	for _, cl := range kc.Clusters {
		if cl.Name != cx.Cluster {
			continue
		}
		found = true
		u, err := url.Parse(cl.Cluster.Server)
		if err != nil || u.Scheme != "https" && u.Scheme != "http" || u.Host == "" {
			return nil, fmt.Errorf("%w: cluster %q: server %q is not an http(s) URL", ErrConfig, cl.Name, cl.Cluster.Server)
		}
		c.base = u
		pool, err := caPool(pick(dir, cl.Cluster.CA), cl.Cluster.CAData)
		if err != nil {
			return nil, err
		}
		tlsc.RootCAs, tlsc.InsecureSkipVerify = pool, cl.Cluster.Insecure
	}
	if !found {
		return nil, fmt.Errorf("%w: cluster %q of context %q is not among its clusters", ErrConfig, cx.Cluster, kc.CurrentContext)
	}
	for _, us := range kc.Users {
		if us.Name != cx.User {
			continue
		}
		u := us.User
		if u.Exec != nil || u.Auth != nil {
			return nil, fmt.Errorf("%w: user %q authenticates with an exec or auth-provider plugin, which seedance does not run: use a token or a client certificate (a service account's kubeconfig)", ErrConfig, us.Name)
		}
		c.token = u.Token
		if u.TokenFile != "" {
			b, err := os.ReadFile(pick(dir, u.TokenFile))
			if err != nil {
				return nil, fmt.Errorf("%w: tokenFile: %v", ErrConfig, err)
			}
			c.token = strings.TrimSpace(string(b))
		}
		cert, err := clientCert(pick(dir, u.Cert), u.CertData, pick(dir, u.Key), u.KeyData)
		if err != nil {
			return nil, err
		}
		if cert != nil {
			tlsc.Certificates = []tls.Certificate{*cert}
		}
	}
	c.hc = newHTTP(timeout, &http.Transport{TLSClientConfig: tlsc, Proxy: http.ProxyFromEnvironment})
	c.lim = DefaultListLimits
	return c, nil
}

// pick resolves a kubeconfig's relative file name.
func pick(dir, name string) string {
	if name == "" || filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(dir, name)
}

func caPool(file, data string) (*x509.CertPool, error) {
	var pem []byte
	switch {
	case data != "":
		b, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			return nil, fmt.Errorf("%w: certificate-authority-data is not base64", ErrConfig)
		}
		pem = b
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("%w: certificate-authority: %v", ErrConfig, err)
		}
		pem = b
	default:
		return nil, nil // the system's roots
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%w: the certificate authority holds no PEM certificate", ErrConfig)
	}
	return pool, nil
}

func clientCert(certFile, certData, keyFile, keyData string) (*tls.Certificate, error) {
	read := func(file, data, what string) ([]byte, error) {
		if data != "" {
			b, err := base64.StdEncoding.DecodeString(data)
			if err != nil {
				return nil, fmt.Errorf("%w: %s-data is not base64", ErrConfig, what)
			}
			return b, nil
		}
		if file == "" {
			return nil, nil
		}
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrConfig, what, err)
		}
		return b, nil
	}
	cert, err := read(certFile, certData, "client-certificate")
	if err != nil {
		return nil, err
	}
	key, err := read(keyFile, keyData, "client-key")
	if err != nil || cert == nil && key == nil {
		return nil, err
	}
	pair, err := tls.X509KeyPair(cert, key)
	if err != nil {
		return nil, fmt.Errorf("%w: the client certificate and key do not make a pair", ErrConfig)
	}
	return &pair, nil
}

// serviceAccount is where a pod finds its credentials.
const serviceAccount = "/var/run/secrets/kubernetes.io/serviceaccount"

func inCluster(timeout time.Duration) (*Client, error) {
	host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return nil, fmt.Errorf("%w: %s: not in a pod (KUBERNETES_SERVICE_HOST is not set)", ErrConfig, InCluster)
	}
	token, err := os.ReadFile(filepath.Join(serviceAccount, "token"))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrConfig, InCluster, err)
	}
	pool, err := caPool(filepath.Join(serviceAccount, "ca.crt"), "")
	if err != nil {
		return nil, err
	}
	u := &url.URL{Scheme: "https", Host: strings.Trim(host, "[]") + ":" + port}
	if strings.Contains(host, ":") {
		u.Host = "[" + strings.Trim(host, "[]") + "]:" + port
	}
	tlsc := &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool}
	return &Client{base: u, token: strings.TrimSpace(string(token)), lim: DefaultListLimits,
		hc: newHTTP(timeout, &http.Transport{TLSClientConfig: tlsc})}, nil
}

// newHTTP is the client's HTTP client: a redirect off the API server's
// origin is refused, so that the token and the client certificate never
// follow it.
func newHTTP(timeout time.Duration, tr *http.Transport) *http.Client {
	return &http.Client{Timeout: timeout, Transport: tr, CheckRedirect: httpc.SameOrigin}
}

// CloseIdleConnections closes the client's keep-alive connections: a
// source's read is done with the API server.
func (c *Client) CloseIdleConnections() { c.hc.CloseIdleConnections() }

// Get reads the one object at path (/apis/kueue.x-k8s.io, a group's
// discovery document) into v, within the client's time limit.
func (c *Client) Get(ctx context.Context, path string, v any) error {
	ctx, cancel := context.WithTimeout(ctx, c.lim.Time)
	defer cancel()
	u := *c.base
	u.Path = strings.TrimSuffix(u.Path, "/") + path
	_, err := c.get(ctx, u.String(), path, v)
	return err
}

// List calls each with every object of the collection at path
// (/apis/resource.k8s.io/v1/resourceclaims), page by page, within the
// client's ListLimits.
func (c *Client) List(ctx context.Context, path string, each func(json.RawMessage) error) error {
	ctx, cancel := context.WithTimeout(ctx, c.lim.Time)
	defer cancel()
	cont, seen := "", map[string]bool{}
	var read int64
	for pages := 1; ; pages++ {
		u := *c.base
		u.Path = strings.TrimSuffix(u.Path, "/") + path
		q := url.Values{"limit": {fmt.Sprint(pageLimit)}}
		if cont != "" {
			q.Set("continue", cont)
		}
		u.RawQuery = q.Encode()
		var page struct {
			Items    []json.RawMessage `json:"items"`
			Metadata struct {
				Continue string `json:"continue"`
			} `json:"metadata"`
		}
		n, err := c.get(ctx, u.String(), path, &page)
		if err != nil {
			if ctx.Err() == context.DeadlineExceeded {
				return fmt.Errorf("list %s: not done after %s (%d pages): refused", path, c.lim.Time, pages)
			}
			return err
		}
		for _, it := range page.Items {
			if err := each(it); err != nil {
				return err
			}
		}
		if cont = page.Metadata.Continue; cont == "" {
			return nil
		}
		read += n
		switch {
		case seen[cont]:
			return fmt.Errorf("list %s: the server sent the same continue token twice (page %d): refused, it would never end", path, pages)
		case pages >= c.lim.Pages:
			return fmt.Errorf("list %s: more than %d pages of %d objects: refused", path, c.lim.Pages, pageLimit)
		case read > c.lim.Bytes:
			return fmt.Errorf("list %s: more than %d MiB over %d pages: refused", path, c.lim.Bytes>>20, pages)
		}
		seen[cont] = true
	}
}

// get reads one page into v; an error names the path and the server's
// status, never the credentials.
func (c *Client) get(ctx context.Context, u, path string, v any) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, fmt.Errorf("GET %s: %v", path, err)
	}
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("GET %s: %v", path, errors.Unwrap(err))
	}
	defer func() { _ = resp.Body.Close() }()
	body := io.LimitReader(resp.Body, MaxPageBytes+1)
	if resp.StatusCode != http.StatusOK {
		var st struct {
			Message string `json:"message"`
		}
		b, _ := io.ReadAll(io.LimitReader(body, 64<<10))
		_ = json.Unmarshal(b, &st)
		if resp.StatusCode == http.StatusNotFound {
			return 0, fmt.Errorf("GET %s: HTTP 404: %s: %w", path, oneLine(st.Message), ErrNotFound)
		}
		return 0, fmt.Errorf("GET %s: HTTP %d: %s", path, resp.StatusCode, oneLine(st.Message))
	}
	b, err := io.ReadAll(body)
	if err != nil {
		return 0, fmt.Errorf("GET %s: %v", path, err)
	}
	if len(b) > MaxPageBytes {
		return 0, fmt.Errorf("GET %s: a page larger than %d MiB", path, MaxPageBytes>>20)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return 0, fmt.Errorf("GET %s: not a Kubernetes list: %v", path, err)
	}
	return int64(len(b)), nil
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
