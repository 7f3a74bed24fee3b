// Package k8stest runs a real Kubernetes control plane for tests: etcd,
// kube-apiserver, kube-controller-manager and kube-scheduler built from
// the Go module proxy, with kwok playing the kubelets, all on 127.0.0.1
// (../shared/k8s/README.md has the measured recipe; .ci/k8s-build.sh builds
// the binaries and caches them by version). Plans are run against it with
// the same kubectl version. Everything it starts is stopped when the test
// ends. Without the binaries a test is skipped, saying how to get them, or
// fails under CI.
package k8stest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/testkit/engine"
	"github.com/seedance/seedance/internal/testkit/testnet"
)

// Versions are those .ci/k8s-build.sh builds.
const Versions = "v1.36.3-etcdv3.6.8-kwokv0.8.0"

// Cluster is a running control plane.
type Cluster struct {
	// Env is the environment for kubectl: KUBECONFIG and a PATH on which
	// kubectl is the control plane's own.
	Env   []string
	dir   string
	bin   string
	procs []*proc
	t     testing.TB
	// kueueMetrics is Kueue's metrics endpoint, once StartKueue ran.
	kueueMetrics string
}

// Token is the bearer token of the cluster's admin (system:masters), for
// a client that calls something the API server authenticates (Kueue's
// metrics endpoint asks it to review the token).
func (c *Cluster) Token() string { return "seedance-test-token" }

// proc is one running component; done is closed when it has exited.
type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
}

// Dir is where the binaries are: $SEEDANCE_K8S_DIR, else the cache that
// .ci/k8s-build.sh fills.
func Dir() string {
	if d := os.Getenv("SEEDANCE_K8S_DIR"); d != "" {
		return d
	}
	return filepath.Join("/var/cache/seedance/k8s", Versions)
}

// Options change what Start starts.
type Options struct {
	// JobPodsRun keeps a Job's pods Running until they are deleted: kwok
	// without its pod-complete stage, which finishes them at once.
	JobPodsRun bool
}

// Start starts the control plane and waits until it schedules: the
// default ServiceAccount exists and the scheduler and controllers run.
func Start(t testing.TB) *Cluster {
	t.Helper()
	return StartWith(t, Options{})
}

// StartWith is Start with the options.
func StartWith(t testing.TB, o Options) *Cluster {
	t.Helper()
	engine.SkipShort(t, "starts a Kubernetes control plane")
	bin := filepath.Join(Dir(), "bin")
	for _, b := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok", "kubectl"} {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not built (.ci/run builds the control plane with .ci/k8s-build.sh): %v", b, err)
			}
			t.Skipf("needs a Kubernetes control plane: bash .ci/k8s-build.sh (about 35 minutes once, cached in %s): %v", Dir(), err)
		}
	}
	for attempt := 1; ; attempt++ {
		c := launch(t, bin, o)
		if c.ready() || attempt == 3 {
			c.mustBeReady()
			return c
		}
		t.Logf("the control plane did not start (attempt %d), starting it again on other ports:\n%s", attempt, c.logs())
		c.stop()
	}
}

// launch starts the components in order on fresh ports and waits for the
// cluster to schedule; it stops waiting early when a component exits (a
// port another process took in the meantime, say), which c.ready tells.
func launch(t testing.TB, bin string, o Options) *Cluster {
	t.Helper()
	dir, err := os.MkdirTemp("", "k8s")
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{dir: dir, bin: bin, t: t}
	t.Cleanup(func() { c.stop(); os.RemoveAll(dir) })
	api, etcdClient, etcdPeer := testnet.FreePort(t), testnet.FreePort(t), testnet.FreePort(t)
	token := c.Token()
	c.certs(t, token)
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: test
  cluster: {server: "https://127.0.0.1:%d", certificate-authority: %q}
users:
- name: admin
  user: {token: %q}
contexts:
- name: test
  context: {cluster: test, user: admin}
current-context: test
`, api, filepath.Join(dir, "ca.crt"), token)), 0o600); err != nil {
		t.Fatal(err)
	}
	c.Env = []string{"KUBECONFIG=" + kubeconfig, "PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + dir}
	p := func(name string) string { return filepath.Join(dir, name) }
	c.start(t, "etcd", "--data-dir", p("etcd"), "--listen-client-urls", fmt.Sprintf("http://127.0.0.1:%d", etcdClient),
		"--advertise-client-urls", fmt.Sprintf("http://127.0.0.1:%d", etcdClient), "--listen-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", etcdPeer),
		"--initial-advertise-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", etcdPeer), "--initial-cluster", fmt.Sprintf("default=http://127.0.0.1:%d", etcdPeer),
		"--unsafe-no-fsync", "--log-level", "warn")
	c.start(t, "kube-apiserver", "--etcd-servers", fmt.Sprintf("http://127.0.0.1:%d", etcdClient), "--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", api), "--authorization-mode=AlwaysAllow",
		"--token-auth-file="+p("tokens.csv"), "--client-ca-file="+p("ca.crt"), "--tls-cert-file="+p("server.crt"), "--tls-private-key-file="+p("server.key"),
		"--service-account-issuer=https://kubernetes.default.svc", "--service-account-key-file="+p("sa.pub"),
		"--service-account-signing-key-file="+p("sa.key"), "--service-cluster-ip-range=10.96.0.0/16", "--endpoint-reconciler-type=none")
	if !c.poll(120*time.Second, func() bool { _, err := c.Kubectl("get", "--raw", "/readyz"); return err == nil }) {
		return c
	}
	c.start(t, "kube-controller-manager", "--kubeconfig="+kubeconfig, "--leader-elect=false", "--bind-address=127.0.0.1", "--secure-port=0",
		"--service-account-private-key-file="+p("sa.key"), "--root-ca-file="+p("ca.crt"), "--use-service-account-credentials=false",
		"--controllers=*,-nodeipam,-cloud-node-lifecycle,-service-lb-controller,-node-route-controller")
	c.start(t, "kube-scheduler", "--kubeconfig="+kubeconfig, "--leader-elect=false", "--bind-address=127.0.0.1", "--secure-port=0")
	c.start(t, "kwok", "--kubeconfig="+kubeconfig, "--manage-all-nodes=true", fmt.Sprintf("--server-address=127.0.0.1:%d", testnet.FreePort(t)),
		"--config="+c.stages(t, o))
	c.poll(120*time.Second, func() bool {
		_, err := c.Kubectl("get", "serviceaccount", "default", "-n", "default")
		return err == nil
	})
	return c
}

// ready is whether every component still runs and the default
// ServiceAccount exists.
func (c *Cluster) ready() bool {
	if c.exited() != "" {
		return false
	}
	_, err := c.Kubectl("get", "serviceaccount", "default", "-n", "default")
	return err == nil
}

// mustBeReady fails the test with the logs unless c is ready.
func (c *Cluster) mustBeReady() {
	c.t.Helper()
	if !c.ready() {
		c.t.Fatalf("the control plane did not start (exited: %q)\n%s", c.exited(), c.logs())
	}
}

// certs writes a CA, the API server's serving certificate for 127.0.0.1,
// the service-account key pair and the token file (one system:masters
// token).
func (c *Cluster) certs(t testing.TB, token string) {
	t.Helper()
	write := func(name, typ string, der []byte) {
		if err := os.WriteFile(filepath.Join(c.dir, name), pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	key := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	caKey, srvKey, saKey := key(), key(), key()
	now := time.Now().Add(-time.Hour)
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "seedance-test-ca"}, NotBefore: now, NotAfter: now.Add(48 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	srv := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "kube-apiserver"}, NotBefore: now, NotAfter: now.Add(48 * time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.96.0.1")}}
	caCert, _ := x509.ParseCertificate(caDER)
	srvDER, err := x509.CreateCertificate(rand.Reader, srv, caCert, &srvKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	write("ca.crt", "CERTIFICATE", caDER)
	write("server.crt", "CERTIFICATE", srvDER)
	for name, k := range map[string]*ecdsa.PrivateKey{"server.key": srvKey, "sa.key": saKey} {
		der, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		write(name, "EC PRIVATE KEY", der)
	}
	pub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	write("sa.pub", "PUBLIC KEY", pub)
	if err := os.WriteFile(filepath.Join(c.dir, "tokens.csv"), []byte(token+",admin,admin,system:masters\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

func (c *Cluster) start(t testing.TB, name string, args ...string) {
	t.Helper()
	c.startAt(t, filepath.Join(c.bin, name), name, args...)
}

// startAt starts the binary at path as the component name, its output
// in the cluster's folder (name.log); stop kills it.
func (c *Cluster) startAt(t testing.TB, path, name string, args ...string) {
	t.Helper()
	logf, err := os.Create(filepath.Join(c.dir, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = c.Env
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	p := &proc{name: name, cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); logf.Close(); close(p.done) }()
	c.procs = append(c.procs, p)
}

// stages is the path of kwok's stages: those .ci/k8s-build.sh keeps, or
// a copy without pod-complete when Job pods are to run (o.JobPodsRun).
func (c *Cluster) stages(t testing.TB, o Options) string {
	path := filepath.Join(Dir(), "kwok-stages.yaml")
	if !o.JobPodsRun {
		return path
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, doc := range strings.Split(string(data), "\n---\n") {
		if !strings.Contains(doc, "\n  name: pod-complete\n") {
			kept = append(kept, doc)
		}
	}
	out := filepath.Join(c.dir, "kwok-stages.yaml")
	if err := os.WriteFile(out, []byte(strings.Join(kept, "\n---\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	return out
}

// exited names the first component that is no longer running, or "".
func (c *Cluster) exited() string {
	for _, p := range c.procs {
		select {
		case <-p.done:
			return p.name
		default:
		}
	}
	return ""
}

func (c *Cluster) stop() {
	for i := len(c.procs) - 1; i >= 0; i-- {
		p := c.procs[i]
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	c.procs = nil
}

// Kubectl runs the control plane's kubectl and returns its output.
func (c *Cluster) Kubectl(args ...string) (string, error) {
	return c.KubectlIn("", args...)
}

// KubectlIn runs kubectl with stdin.
func (c *Cluster) KubectlIn(stdin string, args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(c.bin, "kubectl"), args...)
	cmd.Env = c.Env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("kubectl %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errOut.String()))
	}
	return out.String(), nil
}

// Apply applies manifests (kubectl apply -f -).
func (c *Cluster) Apply(manifests string) {
	c.t.Helper()
	if out, err := c.KubectlIn(manifests, "apply", "-f", "-"); err != nil {
		c.t.Fatalf("%v\n%s", err, out)
	}
}

// AddGPUNodes creates kwok nodes with gpus nvidia.com/gpu each and waits
// until they are Ready.
func (c *Cluster) AddGPUNodes(gpus int, names ...string) {
	c.t.Helper()
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, `apiVersion: v1
kind: Node
metadata:
  name: %s
  annotations: {kwok.x-k8s.io/node: fake, node.alpha.kubernetes.io/ttl: "0"}
  labels: {kubernetes.io/hostname: %s, kubernetes.io/os: linux, type: kwok}
spec: {}
---
`, n, n)
	}
	c.Apply(b.String())
	for _, n := range names {
		patch := fmt.Sprintf(`{"status":{"capacity":{"cpu":"64","memory":"512Gi","pods":"110","nvidia.com/gpu":"%d"},"allocatable":{"cpu":"64","memory":"512Gi","pods":"110","nvidia.com/gpu":"%d"}}}`, gpus, gpus)
		if out, err := c.Kubectl("patch", "node", n, "--subresource=status", "--type=merge", "-p", patch); err != nil {
			c.t.Fatalf("%v\n%s", err, out)
		}
	}
	c.WaitFor("the nodes Ready", 60*time.Second, func() bool {
		out, err := c.Kubectl("get", "nodes", "-o", `jsonpath={range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Ready")].status} {.status.allocatable.nvidia\.com/gpu}{"\n"}{end}`)
		if err != nil {
			return false
		}
		for _, n := range names {
			if !strings.Contains(out, n+"=True "+fmt.Sprint(gpus)) {
				return false
			}
		}
		return true
	})
}

// poll polls ok every 250 ms for at most d; it gives up early, false,
// when a component has exited.
func (c *Cluster) poll(d time.Duration, ok func() bool) bool {
	for deadline := time.Now().Add(d); time.Now().Before(deadline) && c.exited() == ""; time.Sleep(250 * time.Millisecond) {
		if ok() {
			return true
		}
	}
	return false
}

// WaitFor polls ok every 250 ms, failing the test after d, or as soon as a
// component exits, with the control plane's logs.
func (c *Cluster) WaitFor(what string, d time.Duration, ok func() bool) {
	c.t.Helper()
	if c.poll(d, ok) {
		return
	}
	if name := c.exited(); name != "" {
		c.t.Fatalf("%s: %s exited\n%s", what, name, c.logs())
	}
	state, _ := c.Kubectl("get", "nodes,pods,replicasets,deployments,poddisruptionbudgets", "-A", "-o", "wide")
	events, _ := c.Kubectl("get", "events", "-A")
	c.t.Fatalf("%s: not so after %s\n%s\n%s\n%s", what, d, state, events, c.logs())
}

// logs is the end of each component's log, for a failure message.
func (c *Cluster) logs() string {
	var b strings.Builder
	files, _ := filepath.Glob(filepath.Join(c.dir, "*.log"))
	for _, f := range files {
		data, _ := os.ReadFile(f)
		fmt.Fprintf(&b, "--- %s\n%s\n", filepath.Base(f), data[max(0, len(data)-1500):])
	}
	return b.String()
}
