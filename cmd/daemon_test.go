package cmd

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/seedance/seedance/internal/exit"
	"github.com/seedance/seedance/internal/testkit/engine"

	"time"

	"github.com/seedance/seedance/profile"
)

// TestLoopSurvivesHostileRules (#27, cases 2 and 3): in loop mode, a rules
// file of half a million nested parentheses is refused in one short line
// and the last good rules stay; a rule that would take 20 GB or run for
// minutes goes over its budget, is named, and the loop goes on; SIGTERM in
// the middle of a slow rule ends the daemon at once.
func TestLoopSurvivesHostileRules(t *testing.T) {
	l, rules := loopWithRule(t)

	deep := strings.Repeat("(", 524200) + "true" + strings.Repeat(")", 524200)
	saveAs(t, rules, "rules:\n  - name: deep\n    when: '"+deep+"'\n    suggest: {text: x}\n")
	l.waitFor("the deep rules refused", func(m string) bool { return strings.Contains(m, "seedance_config_reload_ok 0") })
	if line := lastLine(l.stderr.String(), "reload:"); !strings.Contains(line, "expression too large") || len(line) > 400 {
		t.Errorf("reload line (%d bytes): %.300s", len(line), line)
	}
	l.waitFor("still the first rule", func(m string) bool { return strings.Contains(m, `seedance_rule_matches{rule="first"}`) })

	saveAs(t, rules, "rules:\n  - name: hog\n    when: 'len(repeat(repeat(\"a\", 100000), 100000)) > 0'\n    suggest: {text: x}\n"+
		"  - name: slow\n    when: 'let r = 1..999000; all(r, {all(r, {# > 0})})'\n    suggest: {text: x}\n"+
		"  - name: fine\n    when: util_pct >= 0\n    suggest: {text: x}\n")
	l.waitFor("the fine rule of the new file", func(m string) bool { return strings.Contains(m, `seedance_rule_matches{rule="fine"}`) })
	waitUntil(t, 30*time.Second, func() bool { return strings.Contains(l.stderr.String(), "rule slow: ") })
	for _, r := range []string{"rule hog", "rule slow"} {
		line := lastLine(l.stderr.String(), "run ")
		if !strings.Contains(l.stderr.String(), r+": ") || !strings.Contains(l.stderr.String(), "over its budget") {
			t.Errorf("no budget warning for %s (last run: %s):\n%.3000s", r, line, l.stderr.String())
		}
	}
	if code, body := l.get("/healthz"); code != 200 {
		t.Errorf("/healthz %d %s", code, body)
	}
	start := time.Now()
	l.stop()
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("SIGTERM took %s", took)
	}
}

// TestOneShotRuleStopsOnSignal (#27, case 3): a one-shot run with a rule
// that would run for minutes ends on SIGTERM with status 130 and writes
// nothing. The rules' budgets are an hour: under load, the default 30 s
// of rules_time could end the rule (and the run, with status 0) before
// the run has used the CPU second the test waits for.
func TestOneShotRuleStopsOnSignal(t *testing.T) {
	dir := t.TempDir()
	rules := filepath.Join(dir, "rules.yaml")
	// A rule that runs for hours in little memory (about 70 MiB) and
	// within its budgets: with 1..999000 and the default 64 MiB budget
	// the rule stopped within a second and the run ended, on a loaded
	// machine before the poll below saw it busy.
	saveAs(t, rules, "limits: {expr_time: 1h, rules_time: 1h, expr_memory_mib: 4096}\nrules:\n  - name: slow\n    when: 'let r = 1..3000; all(r, {all(r, {all(r, {# > 0})})})'\n    on: pool\n    suggest: {text: x}\n")
	out := filepath.Join(dir, "report.json")
	c := exec.Command(binary, "--config", rules, "analyze", "--source", "sim", "--duration", "60", "--report", "all", "--output", out)
	var stderr syncBuffer
	c.Stderr = &stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	// The analysis of a minute of the simulator takes a fraction of a CPU
	// second: past one, the rule is running.
	for deadline := time.Now().Add(60 * time.Second); cpuSeconds(c.Process.Pid) < 1; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the run never got busy\n%s", stderr.String())
		}
	}
	terminated(t, c, &stderr, out)
}

// terminated sends SIGTERM to a running seedance and checks that it ends
// within seconds, with status 130, and that out was not written.
func terminated(t *testing.T, c *exec.Cmd, stderr *syncBuffer, out string) {
	t.Helper()
	_ = c.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case err := <-done:
		_ = err // the exit status is read below
	case <-time.After(10 * time.Second):
		_ = c.Process.Kill()
		t.Fatalf("SIGTERM did not stop it\n%s", stderr.String())
	}
	if code := c.ProcessState.ExitCode(); code != int(exit.Interrupted) {
		t.Errorf("exit %d, want %d\n%s", code, exit.Interrupted, stderr.String())
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("an interrupted run wrote %s", out)
	}
}

// cpuSeconds is the user and system CPU time of a running process, from
// /proc (0 once it has exited).
func cpuSeconds(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseFloat(f[11], 64)
	s, _ := strconv.ParseFloat(f[12], 64)
	return (u + s) / 100 // USER_HZ
}

func lastLine(s, prefix string) string {
	lines := strings.Split(s, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], prefix) {
			return lines[i]
		}
	}
	return ""
}

// TestLoopSlowClients (#27, case 1): a client that asks for /metrics and
// never reads, and idle keep-alive connections up to the cap, do not stop
// the runs, /healthz or SIGTERM; the stuck answer is cut off after
// limits.http_timeout, and connections past the cap wait their turn.
func TestLoopSlowClients(t *testing.T) {
	engine.SkipShort(t, "waits for HTTP timeouts")
	dir := t.TempDir()
	t.Setenv("SEEDANCE_LIMITS_HTTP_TIMEOUT", "2s")
	t.Setenv("SEEDANCE_LIMITS_HTTP_CONNECTIONS", "4")
	l := startLoop(t, "analyze", "--source", "sim", "--sim-nodes", "300", "--duration", "60", "--output", filepath.Join(dir, "report.json"))
	first := l.waitFor("a report", func(m string) bool { return strings.Contains(m, "seedance_node_gpus") })
	if len(first) < 200_000 {
		t.Fatalf("/metrics is %d bytes: too small to fill a socket", len(first))
	}
	// A client with a tiny receive buffer that asks and never reads.
	// (The buffer is set before connecting: shrunk after, the window
	// already offered makes the server retransmit with growing back-off.)
	tiny := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 1) })
	}}
	stuck, err := tiny.Dial("tcp", l.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer stuck.Close()
	if _, err := io.WriteString(stuck, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	// Two idle keep-alive connections more: 3 of the 4 allowed are taken.
	for i := 0; i < 2; i++ {
		c, err := net.Dial("tcp", l.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	runs := func(m string) int {
		i := strings.Index(m, `seedance_loop_runs_total{result="ok"} `)
		if i < 0 {
			return 0
		}
		n, _ := strconv.Atoi(strings.Fields(m[i+len(`seedance_loop_runs_total{result="ok"} `):])[0])
		return n
	}
	before := runs(first)
	l.waitFor("more runs while the client is stuck", func(m string) bool { return runs(m) >= before+3 })
	if code, body := l.get("/healthz"); code != 200 {
		t.Errorf("/healthz %d %s", code, body)
	}
	// The stuck answer is cut off: the connection is closed by the server.
	_ = stuck.SetReadDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.Copy(io.Discard, stuck); err != nil {
		t.Errorf("the stuck connection was not closed by the server: %v", err)
	}
	start := time.Now()
	l.stop()
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("SIGTERM took %s", took)
	}
}

// waitUntil polls ok every 50 ms, failing the test after d.
func waitUntil(t *testing.T, d time.Duration, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); !ok(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not so after %s", d)
		}
	}
}

// fakeSqueue puts an squeue on PATH that runs script.
func fakeSqueue(t *testing.T, script string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "squeue"), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// TestSqueueBounded (#27, case 5): an squeue that never answers is killed
// at limits.command_time and the profile says the pending work is
// unknown; a signal while it hangs ends the run at once with status 130
// and writes nothing; 43,000 pending jobs with a 100 KiB line among them
// are all read but that line, in one pass.
func TestSqueueBounded(t *testing.T) {
	fakeSqueue(t, "sleep 600\n")
	dir := t.TempDir()
	out := filepath.Join(dir, "p.json")
	r := run(t, map[string]string{"SEEDANCE_LIMITS_COMMAND_TIME": "1s"}, "profile", "--source", "sim", "--sim-nodes", "2", "--duration", "60", "--slurm", "-o", out, "--quiet")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	if b, _ := os.ReadFile(out); !bytes.Contains(b, []byte(`"pending_unknown":"Slurm's pending jobs unknown: squeue did not finish in time: no answer within 1s (limits.command_time)"`)) {
		t.Errorf("profile:\n%.600s", b)
	}

	t.Setenv("SEEDANCE_LIMITS_COMMAND_TIME", "1h")
	out2 := filepath.Join(dir, "p2.json")
	c := exec.Command(binary, "profile", "--source", "sim", "--sim-nodes", "2", "--duration", "60", "--slurm", "-o", out2, "--quiet")
	var stderr syncBuffer
	c.Stderr = &stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 30*time.Second, func() bool { return childNamed(c.Process.Pid, "sleep") })
	terminated(t, c, &stderr, out2)

	// node-gpu-01 exists in the simulated profile; 43,000 jobs wait for it,
	// one line of 100 KiB sits in the middle.
	var lines strings.Builder
	for i := 0; i < 43000; i++ {
		if i == 20000 {
			fmt.Fprintf(&lines, "999999|gres/gpu:1|node-gpu-01|%s|acct\n", strings.Repeat("u", 100<<10))
		}
		fmt.Fprintf(&lines, "%d|gres/gpu:1|node-gpu-01|alice|acct\n", 100000+i)
	}
	jobs := filepath.Join(dir, "jobs.txt")
	if err := os.WriteFile(jobs, []byte(lines.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	fakeSqueue(t, "case \"$*\" in *PENDING*) cat "+jobs+";; esac\n")
	out3 := filepath.Join(dir, "p3.json")
	if r := run(t, nil, "profile", "--source", "sim", "--sim-nodes", "2", "--duration", "60", "--slurm", "-o", out3, "--quiet"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	b, _ := os.ReadFile(out3)
	if n := bytes.Count(b, []byte(`"state":"pending"`)); n < 43000 {
		t.Errorf("%d pending jobs read, want 43000", n)
	}
	if !bytes.Contains(b, []byte("squeue: 1 line(s) longer than 64 KiB skipped")) {
		t.Error("the long line is not noted")
	}
}

// childNamed says whether a process whose parent is pid (or its child's
// child) runs the command name.
func childNamed(pid int, name string) bool {
	dirs, _ := filepath.Glob("/proc/[0-9]*/stat")
	parents := map[int]bool{pid: true}
	for pass := 0; pass < 3; pass++ {
		for _, d := range dirs {
			b, err := os.ReadFile(d)
			if err != nil {
				continue
			}
			lp, rp := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
			if lp < 0 || rp < lp {
				continue
			}
			f := strings.Fields(string(b[rp+1:]))
			ppid, _ := strconv.Atoi(f[1])
			me, _ := strconv.Atoi(strings.TrimSpace(string(b[:lp])))
			if parents[ppid] {
				if string(b[lp+1:rp]) == name {
					return true
				}
				parents[me] = true
			}
		}
	}
	return false
}

// TestStderrEscaped (#27, case 9): a pending workload named with escape
// codes, a carriage return and a newline draws nothing on the terminal:
// recommend's note shows them escaped, on one line.
func TestStderrEscaped(t *testing.T) {
	evil := "ml/x\r\x1b[2K\x1b[1Aplan: 0 move(s) -- all clear\nfake"
	p := &profile.Profile{SchemaVersion: profile.SchemaVersion, IntervalS: 60, Complete: true,
		StartedAt: time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC), EndedAt: time.Date(2026, 1, 5, 9, 1, 0, 0, time.UTC),
		Nodes: []profile.Node{{Name: "n1", GPUs: []profile.GPU{{Index: 0, UUID: "GPU-1", Series: profile.Series{T: profile.Values{0}, GPUUtilPct: profile.Values{90}}}},
			Workloads: []profile.Workload{
				{ID: "ml/busy", Name: "busy", Kind: profile.KindPod, State: profile.StateRunning, GPUs: []int{0}, Labels: map[string]string{"namespace": "ml"}},
				{ID: evil, Name: "x", Kind: profile.KindPod, State: profile.StatePending, GPUCount: 4, Labels: map[string]string{"namespace": "ml"}},
			}}}}
	in := filepath.Join(t.TempDir(), "p.json")
	if err := profile.WriteFile(in, p); err != nil {
		t.Fatal(err)
	}
	r := run(t, nil, "recommend", "-i", in, "--move-pending", "-o", filepath.Join(t.TempDir(), "plan.sh"))
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	if strings.ContainsAny(r.errOut, "\r\x1b") || strings.Count(r.errOut, "\n") != 2 || !strings.Contains(r.errOut, `ml/x\x0d\x1b[2K`) {
		t.Errorf("stderr not escaped: %q", r.errOut)
	}
}

// TestLoopSIGHUPReloads (#27, case 8): SIGHUP makes loop mode read its
// configuration and rules again, and the loop goes on.
func TestLoopSIGHUPReloads(t *testing.T) {
	l, _ := loopWithRule(t)
	if err := l.c.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 30*time.Second, func() bool { return strings.Contains(l.stderr.String(), "reload: read") })
	if !strings.Contains(l.stderr.String(), "SIGHUP: reading the configuration and rules again") {
		t.Errorf("stderr:\n%s", l.stderr.String())
	}
	l.waitFor("runs after the SIGHUP", func(m string) bool { return strings.Contains(m, "seedance_config_reload_ok 1") })
	l.stop()
}

// TestRulesFIFO (#27, case 6): a FIFO in place of the rules file is
// refused at once in a one-shot run (exit 2), and in loop mode keeps the
// last good rules while the loop goes on.
func TestRulesFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan result, 1)
	go func() { done <- run(t, nil, "analyze", "--source", "sim", "--duration", "60", "--rules", fifo) }()
	select {
	case r := <-done:
		if r.code != exit.Usage || !strings.Contains(r.errOut, "is not a regular file (a FIFO)") {
			t.Errorf("exit %d: %s", r.code, r.errOut)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("--rules FIFO hung")
	}
	rules := filepath.Join(dir, "rules.yaml")
	saveAs(t, rules, "rules:\n  - name: first\n    when: util_pct < 20\n    suggest: {text: \"{name} low\"}\n")
	l := startLoop(t, "analyze", "--source", "sim", "--duration", "60", "--rules", rules, "--output", filepath.Join(dir, "report.json"))
	l.waitFor("rule first", func(m string) bool { return strings.Contains(m, `seedance_rule_matches{rule="first"}`) })
	if err := os.Rename(fifo, rules); err != nil {
		t.Fatal(err)
	}
	l.waitFor("the FIFO refused", func(m string) bool { return strings.Contains(m, "seedance_config_reload_ok 0") })
	before := strings.Count(l.stderr.String(), "\nrun ")
	waitUntil(t, 30*time.Second, func() bool { return strings.Count(l.stderr.String(), "\nrun ") >= before+2 })
	if code, body := l.get("/healthz"); code != 200 {
		t.Errorf("/healthz %d %s", code, body)
	}
	l.stop()
}

// TestLoopSoak (#27): several hundred runs of loop mode with rules, and
// scrapes of /metrics and /healthz all along, keep the daemon's memory
// and open files flat.
func TestLoopSoak(t *testing.T) {
	t.Parallel() // its settings are its own (testFactory)
	engine.SkipShort(t, "several hundred runs of loop mode")
	dir := t.TempDir()
	rules := filepath.Join(dir, "rules.yaml")
	saveAs(t, rules, "rules:\n  - name: low\n    when: util_pct < 20\n    for: 30s\n    suggest: {text: \"{name} low\", command: \"echo {name}\"}\n"+
		"  - name: hog\n    when: 'len(repeat(\"a\", 1000000000)) > 0'\n    suggest: {text: x}\n")
	l := startLoopEvery(t, "20ms", "analyze", "--source", "sim", "--sim-nodes", "4", "--duration", "60", "--rules", rules, "--output", filepath.Join(dir, "report.json"))
	stop := make(chan struct{})
	scraped := make(chan int)
	go func() { // a scraper, as Prometheus would be, opening a connection each time
		n := 0
		for {
			select {
			case <-stop:
				scraped <- n
				return
			default:
			}
			if c, err := net.Dial("tcp", l.addr); err == nil {
				_, _ = io.WriteString(c, "GET /metrics HTTP/1.0\r\n\r\n")
				_, _ = io.Copy(io.Discard, c)
				c.Close()
				n++
			}
			_, _ = l.get("/healthz")
		}
	}()
	runs := func() int { return strings.Count(l.stderr.String(), " suggestions") }
	sample := func() (rss, fds int) {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", l.c.Process.Pid))
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
				rss, _ = strconv.Atoi(f[1])
			}
		}
		ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", l.c.Process.Pid))
		return rss, len(ents)
	}
	waitUntil(t, 120*time.Second, func() bool { return runs() >= 50 })
	rss0, fds0 := sample()
	series0 := metricSeries(t, l)
	waitUntil(t, 600*time.Second, func() bool { return runs() >= 400 })
	rss1, fds1 := sample()
	// /metrics is the latest run's series, each once: replaced, not
	// appended to, run after run.
	if series1 := metricSeries(t, l); series1 > series0+8 || series1 < series0-8 {
		t.Errorf("/metrics had %d series after 50 runs, %d after 400", series0, series1)
	}
	close(stop)
	n := <-scraped
	t.Logf("after 50 runs: %d KiB, %d files; after %d runs and %d scrapes: %d KiB, %d files", rss0, fds0, runs(), n, rss1, fds1)
	if fds1 > fds0+8 {
		t.Errorf("open files grew from %d to %d", fds0, fds1)
	}
	if rss1 > rss0*3/2+32<<10 {
		t.Errorf("memory grew from %d KiB to %d KiB", rss0, rss1)
	}
	if !strings.Contains(l.stderr.String(), "rule hog: ") {
		t.Error("the hog's budget was never reported")
	}
	l.stop()
}

// loopWithRule starts loop mode on the simulator with a rules file of one
// rule, first, and waits until a run has applied it.
func loopWithRule(t *testing.T) (*loopRun, string) {
	t.Helper()
	dir := t.TempDir()
	rules := filepath.Join(dir, "rules.yaml")
	saveAs(t, rules, "rules:\n  - name: first\n    when: util_pct < 20\n    suggest: {text: \"{name} low\"}\n")
	l := startLoop(t, "analyze", "--source", "sim", "--duration", "60", "--rules", rules, "--output", filepath.Join(dir, "report.json"))
	l.waitFor("rule first", func(m string) bool { return strings.Contains(m, `seedance_rule_matches{rule="first"}`) })
	return l, rules
}

// metricSeries scrapes /metrics and counts its series, failing on one
// that appears twice (the same name and labels).
func metricSeries(t *testing.T, l *loopRun) int {
	t.Helper()
	code, body := l.get("/metrics")
	if code != 200 {
		t.Fatalf("/metrics: %d %s", code, body)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(body, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key := line[:max(strings.LastIndexByte(line, ' '), 0)]
		if seen[key] {
			t.Fatalf("/metrics has %s twice", key)
		}
		seen[key] = true
	}
	return len(seen)
}

// TestSlowClientsTakeNoSlot: 200 clients that drip a request's header a
// byte at a time (more than limits.http_connections) do not take the
// loop's HTTP slots: /healthz and /metrics keep answering, each request
// within a deadline far above a probe's (it used to wait about a minute).
func TestSlowClientsTakeNoSlot(t *testing.T) {
	engine.SkipShort(t, "holds 200 connections open")
	l := startLoop(t, "analyze", "--source", "sim", "--sim-nodes", "2", "--duration", "60", "--output", filepath.Join(t.TempDir(), "r.json"))
	// A good run, not only the series: /healthz is 503 until one ends.
	l.waitFor("a run", func(m string) bool {
		return !strings.Contains(m, `seedance_loop_runs_total{result="ok"} 0`) && strings.Contains(m, `seedance_loop_runs_total{result="ok"}`)
	})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var dripping atomic.Int32
	for range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", l.addr)
			if err != nil {
				return
			}
			defer c.Close()
			_, _ = io.WriteString(c, "GET /metrics HTTP/1.1\r\nHost: x\r\n")
			dripping.Add(1)
			for {
				select {
				case <-stop:
					return
				case <-time.After(100 * time.Millisecond):
				}
				if _, err := io.WriteString(c, "X"); err != nil {
					return // closed by the server: dial again, as an attacker would
				}
			}
		}()
	}
	defer func() { close(stop); wg.Wait() }()
	waitUntil(t, 30*time.Second, func() bool { return dripping.Load() == 200 })
	// A connection each, as probes make them.
	client := &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for i := range 20 {
		for _, path := range []string{"/healthz", "/metrics"} {
			resp, err := client.Get("http://" + l.addr + path)
			if err != nil {
				t.Fatalf("request %d to %s with 200 slow clients: %v", i, path, err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("%s: %d", path, resp.StatusCode)
			}
		}
	}
	l.stop()
}
