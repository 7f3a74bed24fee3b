// Package promtest runs a real Prometheus server (Debian's prometheus
// package) for tests: it installs the package when it is missing and the
// tests run as root, backfills OpenMetrics data with promtool, serves it on
// a free port on 127.0.0.1, and stops it when the test ends.
package promtest

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// binaries returns the paths of prometheus and promtool. Tests never
// install them (.ci/run does): without them a test fails under CI and is
// skipped elsewhere, saying how to get them.
func binaries(t testing.TB) (string, string) {
	t.Helper()
	find := func() (string, string, error) {
		p, err := exec.LookPath("prometheus")
		if err != nil {
			return "", "", err
		}
		q, err := exec.LookPath("promtool")
		return p, q, err
	}
	p, q, err := find()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("prometheus is not installed (.ci/run installs it): %v", err)
		}
		t.Skipf("needs Prometheus 2.x and promtool on PATH (Debian: apt-get install prometheus; or run bash .ci/run): %v", err)
	}
	return p, q
}

// Server is a running Prometheus.
type Server struct {
	URL    string
	cmd    *exec.Cmd
	log    *bytes.Buffer
	exited chan struct{}
}

// Start backfills the OpenMetrics document into a fresh TSDB and serves it.
func Start(t testing.TB, openMetrics []byte) *Server {
	t.Helper()
	prom, promtool := binaries(t)
	dir := t.TempDir()
	om := filepath.Join(dir, "data.om")
	if err := os.WriteFile(om, openMetrics, 0o644); err != nil {
		t.Fatal(err)
	}
	tsdb := filepath.Join(dir, "tsdb")
	if out, err := exec.Command(promtool, "tsdb", "create-blocks-from", "openmetrics", om, tsdb).CombinedOutput(); err != nil {
		t.Fatalf("promtool backfill: %v\n%s", err, out)
	}
	os.Remove(om)
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte("global:\n  scrape_interval: 15s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	s := &Server{URL: fmt.Sprintf("http://127.0.0.1:%d", port), log: &bytes.Buffer{}}
	s.cmd = exec.Command(prom, "--config.file="+cfg, "--storage.tsdb.path="+tsdb,
		"--storage.tsdb.retention.time=100y", fmt.Sprintf("--web.listen-address=127.0.0.1:%d", port),
		"--log.level=warn")
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.stop)
	exited := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(exited) }() // killed at the end: its status says nothing
	s.exited = exited
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			t.Fatalf("prometheus exited:\n%s", s.log)
		default:
		}
		if resp, err := http.Get(s.URL + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return s
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("prometheus did not become ready:\n%s", s.log)
	return nil
}

func (s *Server) stop() {
	if s.cmd.Process != nil {
		_ = s.cmd.Process.Kill() // it may have exited already
		<-s.exited
	}
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
