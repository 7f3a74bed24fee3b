package k8stest

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/seedance/seedance/internal/testkit/testnet"
)

// KueueVersion is the Kueue that .ci/kueue-build.sh builds.
const KueueVersion = "v0.19.2"

// KueueDir is where Kueue's binary (bin/kueue) and CRDs (crds/) are:
// $SEEDANCE_KUEUE_DIR, else the cache that .ci/kueue-build.sh fills.
func KueueDir() string {
	if d := os.Getenv("SEEDANCE_KUEUE_DIR"); d != "" {
		return d
	}
	return filepath.Join("/var/cache/seedance/kueue", KueueVersion)
}

// kueueMetricsCerts is where Kueue v0.19.2 reads its metrics server's
// certificate when it does not manage its own: a fixed path
// (cmd/kueue/main.go), read even when the metrics server is off.
const kueueMetricsCerts = "/etc/kueue/metrics/certs"

// StartKueue creates all of Kueue's CRDs and runs its real controller
// manager against the cluster, with the batch/job integration, its
// metrics served (KueueMetrics), and no
// webhooks (nothing calls them: a Job is created suspended, as Kueue's
// webhook would make it), and waits until it is ready. The controller
// is stopped with the cluster. Without the build (.ci/kueue-build.sh) the
// test is skipped, or fails under CI; so it is without root, which the
// certificate's fixed path needs.
func (c *Cluster) StartKueue() {
	c.t.Helper()
	bin := filepath.Join(KueueDir(), "bin", "kueue")
	if _, err := os.Stat(bin); err != nil {
		c.skipOrFail("needs Kueue's controller: bash .ci/kueue-build.sh (a few minutes once, cached in %s): %v", KueueDir(), err)
	}
	if os.Geteuid() != 0 {
		c.skipOrFail("runs Kueue %s, which reads its metrics certificate from %s: needs root", KueueVersion, kueueMetricsCerts)
	}
	if out, err := c.Kubectl("create", "-f", filepath.Join(KueueDir(), "crds")); err != nil {
		c.t.Fatalf("%v\n%s", err, out)
	}
	c.WaitFor("Kueue's CRDs served", 60*time.Second, func() bool {
		_, err := c.Kubectl("get", "clusterqueues.v1beta2.kueue.x-k8s.io,workloads.v1beta2.kueue.x-k8s.io,cohorts.v1beta2.kueue.x-k8s.io", "-A")
		return err == nil
	})
	c.Apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: kueue-system}\n")
	// The API server's serving certificate (127.0.0.1) serves the webhook
	// port and the metrics server's watcher.
	certs := filepath.Join(c.dir, "kueue-certs")
	for _, dir := range []string{certs, kueueMetricsCerts} {
		c.copyServing(dir)
	}
	probe, metrics := testnet.FreePort(c.t), testnet.FreePort(c.t)
	c.kueueMetrics = fmt.Sprintf("127.0.0.1:%d", metrics)
	cfg := filepath.Join(c.dir, "kueue.yaml")
	err := os.WriteFile(cfg, []byte(fmt.Sprintf(`apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: kueue-system
health: {healthProbeBindAddress: "127.0.0.1:%d"}
metrics: {bindAddress: %q, enableClusterQueueResources: true}
webhook: {host: 127.0.0.1, port: %d, certDir: %q}
leaderElection: {leaderElect: false}
internalCertManagement: {enable: false}
integrations: {frameworks: ["batch/job"]}
featureGates: {VisibilityOnDemand: false}
`, probe, c.kueueMetrics, testnet.FreePort(c.t), certs)), 0o600)
	if err != nil {
		c.t.Fatal(err)
	}
	c.startAt(c.t, bin, "kueue", "--config="+cfg, "--zap-log-level=info")
	c.WaitFor("Kueue ready", 120*time.Second, func() bool {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", probe))
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// KueueMetrics is the address (host:port) of Kueue's metrics endpoint
// (HTTPS at /metrics, the API server's serving certificate; a client
// sends a bearer token the API server knows, such as Token's), with its
// ClusterQueues' resource metrics on.
func (c *Cluster) KueueMetrics() string { return c.kueueMetrics }

// copyServing writes the API server's serving certificate and key into
// dir as tls.crt and tls.key.
func (c *Cluster) copyServing(dir string) {
	c.t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		c.t.Fatal(err)
	}
	for from, to := range map[string]string{"server.crt": "tls.crt", "server.key": "tls.key"} {
		data, err := os.ReadFile(filepath.Join(c.dir, from))
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, to), data, 0o600)
		}
		if err != nil {
			c.t.Fatal(err)
		}
	}
}

// skipOrFail skips the test, or fails it under CI, which builds what it
// needs.
func (c *Cluster) skipOrFail(format string, args ...any) {
	c.t.Helper()
	if os.Getenv("CI") != "" {
		c.t.Fatalf(format, args...)
	}
	c.t.Skipf(format, args...)
}
