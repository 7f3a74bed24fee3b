package cmd

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/testkit/testnet"
)

// syncBuffer is a child's stderr, read while it runs.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// loopRun is a running `analyze --every` child and its HTTP endpoints.
type loopRun struct {
	t      *testing.T
	addr   string
	c      *exec.Cmd
	stderr syncBuffer
	done   chan error
}

func startLoop(t *testing.T, args ...string) *loopRun {
	t.Helper()
	return startLoopEvery(t, "300ms", args...)
}

// startLoopEvery starts `analyze --every every` with args.
func startLoopEvery(t *testing.T, every string, args ...string) *loopRun {
	t.Helper()
	l := &loopRun{t: t, addr: fmt.Sprintf("127.0.0.1:%d", testnet.FreePort(t)), done: make(chan error, 1)}
	l.c = exec.Command(binary, append(append([]string{}, args...), "--every", every, "--listen", l.addr)...)
	l.c.Stderr = &l.stderr
	if err := l.c.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { l.done <- l.c.Wait() }()
	t.Cleanup(func() { _ = l.c.Process.Kill() })
	return l
}

func (l *loopRun) get(path string) (int, string) {
	resp, err := http.Get("http://" + l.addr + path)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// waitFor polls /metrics until ok holds (30 s at most).
func (l *loopRun) waitFor(what string, ok func(metrics string) bool) string {
	l.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if code, body := l.get("/metrics"); code == 200 && ok(body) {
			return body
		}
		time.Sleep(100 * time.Millisecond)
	}
	_, body := l.get("/metrics")
	l.t.Fatalf("%s: not seen in 30 s\n%s\nstderr:\n%s", what, body, l.stderr.String())
	return ""
}

// stop sends SIGTERM: the loop ends with status 0.
func (l *loopRun) stop() {
	l.t.Helper()
	if err := l.c.Process.Signal(syscall.SIGTERM); err != nil {
		l.t.Fatal(err)
	}
	select {
	case err := <-l.done:
		if err != nil {
			l.t.Errorf("after SIGTERM: %v\n%s", err, l.stderr.String())
		}
	case <-time.After(20 * time.Second):
		l.t.Fatal("did not stop on SIGTERM")
	}
}

// saveAs writes a file as editors save: a temporary file renamed over it.
func saveAs(t *testing.T, path, text string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestLoopReloadsRules runs `analyze --every` as a user would (the binary,
// a real rules file, a real HTTP scrape): an edited rules file changes the
// next report without a restart; a change that does not parse keeps the
// last good rules and says so; /healthz answers; SIGTERM stops it with
// status 0, and a run it interrupts does not replace the last report.
func TestLoopReloadsRules(t *testing.T) {
	dir := t.TempDir()
	rules := filepath.Join(dir, "rules.yaml")
	saveAs(t, rules, "rules:\n  - name: first\n    when: util_pct < 20\n    suggest: {text: \"{name} low\"}\n")
	l := startLoop(t, "analyze", "--source", "sim", "--duration", "60", "--rules", rules, "--output", filepath.Join(dir, "report.json"))
	l.waitFor("rule first", func(m string) bool { return strings.Contains(m, `seedance_rule_matches{rule="first"} 5`) })
	if code, body := l.get("/healthz"); code != 200 || !strings.HasPrefix(body, "ok: latest report at") {
		t.Errorf("/healthz: %d %q", code, body)
	}
	if promtool, err := exec.LookPath("promtool"); err == nil {
		_, body := l.get("/metrics")
		c := exec.Command(promtool, "check", "metrics")
		c.Stdin = strings.NewReader(body)
		if out, err := c.CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) != 0 {
			t.Errorf("promtool check metrics: %v\n%s", err, out)
		}
	}
	saveAs(t, rules, "rules:\n  - name: second\n    when: util_pct > 50\n    suggest: {text: \"{name} high\"}\n")
	m := l.waitFor("rule second", func(m string) bool {
		return strings.Contains(m, `seedance_rule_matches{rule="second"}`) && strings.Contains(m, "seedance_config_reload_ok 1")
	})
	if strings.Contains(m, `rule="first"`) {
		t.Errorf("after the edit:\n%s", m)
	}
	saveAs(t, rules, "rules:\n  - name: third\n    when: utl_pct > 50\n    suggest: {text: x}\n")
	m = l.waitFor("a refused reload", func(m string) bool { return strings.Contains(m, "seedance_config_reload_ok 0") })
	// The log line is written before the gauge is, but it comes through a
	// pipe: wait for it.
	waitUntil(t, 30*time.Second, func() bool { return strings.Contains(l.stderr.String(), "keeping the last good configuration") })
	if !strings.Contains(m, `seedance_rule_matches{rule="second"}`) {
		t.Errorf("the last good rules are not kept:\n%s", m)
	}
	if s := l.stderr.String(); !strings.Contains(s, `rule "third": when: unknown name utl_pct`) || !strings.Contains(s, "keeping the last good configuration and rules") {
		t.Errorf("stderr does not say why:\n%s", s)
	}
	l.stop()
	if b, err := os.ReadFile(filepath.Join(dir, "report.json")); err != nil || !bytes.Contains(b, []byte("node-gpu-01 high")) {
		t.Errorf("the report file: %v %s", err, b)
	}
}

// TestLoopReloadsConfig: a setting changed in the config file applies to
// the next run (no GPU is idle under a 0 % threshold), and a key the
// config cannot have keeps the last good one.
func TestLoopReloadsConfig(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "seedance.yaml")
	saveAs(t, cfg, "analyze:\n  idle_threshold_pct: 15\n")
	l := startLoop(t, "--config", cfg, "analyze", "--source", "sim", "--duration", "120", "--format", "json", "--output", filepath.Join(t.TempDir(), "r.json"))
	idle := func(m string) string {
		for _, line := range strings.Split(m, "\n") {
			if strings.HasPrefix(line, "seedance_idle_gpu_seconds ") {
				return strings.TrimPrefix(line, "seedance_idle_gpu_seconds ")
			}
		}
		return ""
	}
	m := l.waitFor("a first report", func(m string) bool { return idle(m) != "" })
	if idle(m) == "0" {
		t.Fatalf("nothing idle at 15 %%:\n%s", m)
	}
	saveAs(t, cfg, "analyze:\n  idle_threshold_pct: 0\n")
	l.waitFor("the new threshold", func(m string) bool { return idle(m) == "0" })
	saveAs(t, cfg, "analyze:\n  idle_treshold_pct: 15\n")
	m = l.waitFor("a refused reload", func(m string) bool { return strings.Contains(m, "seedance_config_reload_ok 0") })
	waitUntil(t, 30*time.Second, func() bool { return strings.Contains(l.stderr.String(), "keeping the last good configuration") })
	if idle(m) != "0" || !strings.Contains(l.stderr.String(), `unknown key "analyze.idle_treshold_pct"`) {
		t.Errorf("the last good config is not kept:\n%s\n%s", m, l.stderr.String())
	}
	l.stop()
}

// TestListenNeedsEvery: --listen alone is a usage error.
func TestListenNeedsEvery(t *testing.T) {
	if r := run(t, nil, "analyze", "--source", "sim", "--duration", "10", "--listen", "127.0.0.1:0"); r.code != 2 || !strings.Contains(r.errOut, "give --every too") {
		t.Errorf("exit %d: %s", r.code, r.errOut)
	}
}
