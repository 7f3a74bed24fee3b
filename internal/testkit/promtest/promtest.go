// Package promtest runs real Prometheus-compatible engines for tests:
// Debian's prometheus (backfilled with promtool) and victoria-metrics
// (loaded through its import API), each on a free port on 127.0.0.1 and
// stopped when the test ends. Tests never install them (.ci/run does):
// without them a test fails under CI and is skipped elsewhere, saying how to
// get them.
package promtest

import (
	"bufio"
	"bytes"
	"fmt"
	"github.com/seedance/seedance/internal/testkit/engine"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/testkit/testnet"
)

// binary returns the path of an engine's program, or skips (fails under
// CI) naming the Debian package that has it.
func binary(t testing.TB, name, pkg string) string {
	t.Helper()
	engine.SkipShort(t, "starts "+name)
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed (.ci/run installs it): %v", name, err)
		}
		t.Skipf("needs %s on PATH (Debian: apt-get install %s; or run bash .ci/run): %v", name, pkg, err)
	}
	return p
}

// Server is a running engine.
type Server struct {
	URL    string
	cmd    *exec.Cmd
	log    *bytes.Buffer
	exited chan struct{}
}

// Start backfills the OpenMetrics document into a fresh Prometheus TSDB and
// serves it.
func Start(t testing.TB, openMetrics []byte) *Server {
	t.Helper()
	return StartExternal(t, openMetrics, "")
}

// StartExternal is Start with a cluster external label in the server's
// global configuration ("" for none), as a Prometheus of one cluster of
// several has (external_labels: {cluster: …}).
func StartExternal(t testing.TB, openMetrics []byte, cluster string) *Server {
	t.Helper()
	return startSlicesIn(t, t.TempDir(), 1, func(_ int, w io.Writer) error {
		_, err := w.Write(openMetrics)
		return err
	}, cluster)
}

// StartVictoriaMetrics loads the OpenMetrics document into a fresh
// single-node VictoriaMetrics (through /api/v1/import/prometheus, then a
// flush so that it is searchable at once) and serves it: the same data as
// Start, in a second engine.
func StartVictoriaMetrics(t testing.TB, openMetrics []byte) *Server {
	t.Helper()
	s := StartVictoriaMetricsScraping(t, "")
	s.Import(t, openMetrics)
	return s
}

// StartVictoriaMetricsScraping starts a fresh single-node VictoriaMetrics
// that scrapes the targets of scrapeConfigs (Prometheus' scrape_configs
// YAML, "" for none) as a Prometheus would; Import adds more.
func StartVictoriaMetricsScraping(t testing.TB, scrapeConfigs string) *Server {
	t.Helper()
	vm := binary(t, "victoria-metrics", "victoria-metrics")
	port := testnet.FreePort(t)
	dir := t.TempDir()
	args := []string{"-storageDataPath=" + filepath.Join(dir, "data"), fmt.Sprintf("-httpListenAddr=127.0.0.1:%d", port), "-retentionPeriod=100y",
		"-search.disableCache", "-loggerLevel=WARN"}
	if scrapeConfigs != "" {
		cfg := filepath.Join(dir, "scrape.yml")
		if err := os.WriteFile(cfg, []byte("scrape_configs:\n"+scrapeConfigs), 0o600); err != nil {
			t.Fatal(err)
		}
		// What was scraped a moment ago is searchable at once.
		args = append(args, "-promscrape.config="+cfg, "-search.latencyOffset=0s")
	}
	return serve(t, "victoria-metrics", "/health", port, exec.Command(vm, args...))
}

// Import adds the OpenMetrics document to a VictoriaMetrics and flushes
// it, so that it is searchable at once.
func (s *Server) Import(t testing.TB, openMetrics []byte) {
	t.Helper()
	body, err := exposition(openMetrics)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(s.URL+"/api/v1/import/prometheus", "text/plain", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("victoria-metrics import: HTTP %d\n%s", resp.StatusCode, s.log)
	}
	if resp, err = http.Get(s.URL + "/internal/force_flush"); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

// exposition turns OpenMetrics (timestamps in seconds, # lines, # EOF)
// into the Prometheus text format VictoriaMetrics imports (timestamps in
// milliseconds): a sample line's last field is its timestamp.
func exposition(om []byte) ([]byte, error) {
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(om))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		ts, err := strconv.ParseFloat(line[i+1:], 64)
		if i < 0 || err != nil {
			return nil, fmt.Errorf("sample without a timestamp: %q", line)
		}
		fmt.Fprintf(&out, "%s %d\n", line[:i], int64(ts*1000+0.5))
	}
	return out.Bytes(), sc.Err()
}

// serve starts an engine and waits until ready answers 200.
func serve(t testing.TB, name, ready string, port int, cmd *exec.Cmd) *Server {
	t.Helper()
	s := &Server{URL: fmt.Sprintf("http://127.0.0.1:%d", port), cmd: cmd, log: &bytes.Buffer{}}
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
			t.Fatalf("%s exited:\n%s", name, s.log)
		default:
		}
		if resp, err := http.Get(s.URL + ready); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return s
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s did not become ready:\n%s", name, s.log)
	return nil
}

// CPU is the engine's CPU time (user + system) so far, from /proc; 0 where
// it cannot be read.
func (s *Server) CPU() time.Duration {
	if s.cmd.Process == nil {
		return 0
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// Fields after the command's closing parenthesis: state is the 3rd
	// field of the line, utime and stime the 14th and 15th.
	f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ, 100 on Linux
}

func (s *Server) stop() {
	if s.cmd.Process != nil {
		_ = s.cmd.Process.Kill() // it may have exited already
		<-s.exited
	}
}

// StartSlices starts a real Prometheus holding what write writes, slice by
// slice: each slice's OpenMetrics is backfilled and deleted before the
// next is written, so a range too large for the disk as one text file
// (a day of a thousand nodes) still fits.
func StartSlices(t testing.TB, slices int, write func(i int, w io.Writer) error) *Server {
	t.Helper()
	return StartSlicesIn(t, t.TempDir(), slices, write)
}

// StartSlicesIn is StartSlices with the TSDB kept in dir: a dir whose
// backfill of as many slices finished before (its marker file says so) is
// served as it is, so that a benchmark whose backfill takes most of an hour
// can be measured again without it.
func StartSlicesIn(t testing.TB, dir string, slices int, write func(i int, w io.Writer) error) *Server {
	t.Helper()
	return startSlicesIn(t, dir, slices, write, "")
}

// startSlicesIn is StartSlicesIn with a cluster external label ("" for
// none).
func startSlicesIn(t testing.TB, dir string, slices int, write func(i int, w io.Writer) error, externalCluster string) *Server {
	t.Helper()
	prom, promtool := binary(t, "prometheus", "prometheus"), binary(t, "promtool", "prometheus")
	tsdb := filepath.Join(dir, "tsdb")
	marker := filepath.Join(dir, fmt.Sprintf("backfilled-%d-slices", slices))
	done := false
	if _, err := os.Stat(marker); err == nil {
		done = true
	} else if err := os.RemoveAll(tsdb); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < slices && !done; i++ {
		om := filepath.Join(dir, fmt.Sprintf("slice-%d.om", i))
		f, err := os.Create(om)
		if err != nil {
			t.Fatal(err)
		}
		bw := bufio.NewWriterSize(f, 1<<20)
		if err := write(i, bw); err != nil {
			t.Fatal(err)
		}
		if err := bw.Flush(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if out, err := exec.Command(promtool, "tsdb", "create-blocks-from", "openmetrics", om, tsdb).CombinedOutput(); err != nil {
			t.Fatalf("promtool backfill of slice %d: %v\n%s", i, err, out)
		}
		os.Remove(om)
	}
	if !done {
		if err := os.WriteFile(marker, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(dir, "prometheus.yml")
	global := "global:\n  scrape_interval: 15s\n"
	if externalCluster != "" {
		global += "  external_labels:\n    cluster: " + externalCluster + "\n"
	}
	if err := os.WriteFile(cfg, []byte(global), 0o644); err != nil {
		t.Fatal(err)
	}
	port := testnet.FreePort(t)
	return serve(t, "prometheus", "/-/ready", port, exec.Command(prom, "--config.file="+cfg, "--storage.tsdb.path="+tsdb,
		"--storage.tsdb.retention.time=100y", fmt.Sprintf("--web.listen-address=127.0.0.1:%d", port), "--log.level=warn"))
}
