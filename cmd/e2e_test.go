package cmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/exit"

	"github.com/seedance/seedance/internal/testkit/browsertest"
	"github.com/seedance/seedance/internal/testkit/dcgmtest"
	"github.com/seedance/seedance/internal/testkit/promtest"
	"github.com/seedance/seedance/internal/testkit/schematest"
	"github.com/seedance/seedance/internal/testkit/synth"
	"github.com/seedance/seedance/profile"
)

// binary is the seedance program built once for the tests that need a real
// process: signals, a wrapped child, exit statuses.
var binary string

func TestMain(m *testing.M) {
	if os.Getenv("SEEDANCE_READBENCH_CHILD") != "" { // a baseline of BenchmarkReadCPU: no binary needed
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "seedance-e2e-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "seedance")
	build := exec.Command("go", "build", "-o", binary+".link", "..")
	build.Env = append(os.Environ(), "CGO_CFLAGS=-O2 -Wno-deprecated-declarations")
	if out, err := build.CombinedOutput(); err != nil {
		os.Stderr.Write(out)
		panic(err)
	}
	if err := copyExecutable(binary+".link", binary); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// copyExecutable writes a copy of the executable src to dst. The benchmarks
// run copies: a file just written by go build's linker runs with several
// MiB more peak RSS than a copy of it (measured 47 against 37 MiB for
// analyze of a file), from how its pages lie in the page cache, which
// would be counted against whichever binary was built last.
func copyExecutable(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// baselineBinary is SEEDANCE_BENCH_BASELINE (an older seedance binary)
// copied into the benchmark's directory, as the binary under test is
// (copyExecutable), or "" when it is not set.
func baselineBinary(b *testing.B) string {
	old := os.Getenv("SEEDANCE_BENCH_BASELINE")
	if old == "" {
		return ""
	}
	dst := filepath.Join(b.TempDir(), "seedance-baseline")
	if err := copyExecutable(old, dst); err != nil {
		b.Fatalf("SEEDANCE_BENCH_BASELINE: %v", err)
	}
	return dst
}

// startSeedance starts the binary with a clean environment.
func startSeedance(t *testing.T, args ...string) (*exec.Cmd, *strings.Builder) {
	t.Helper()
	c := exec.Command(binary, args...)
	c.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
	var stderr strings.Builder
	c.Stderr = &stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	return c, &stderr
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// waitForFile waits until path exists (the first checkpoint was written).
func waitForFile(t *testing.T, path string) {
	t.Helper()
	for i := 0; i < 500; i++ {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s never appeared", path)
}

func readProfile(t *testing.T, path string) *profile.Profile {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	schematest.Validate(t, "profile-v1.schema.json", b)
	p, err := profile.ReadFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestInterruptWritesPartialProfile(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "p.json")
			c, stderr := startSeedance(t, "profile", "--source", "sim", "--sim-realtime", "--sim-nodes", "2",
				"--interval", "100ms", "--checkpoint", "300ms", "--output", path)
			waitForFile(t, path)
			if err := c.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if code := exitCode(c.Wait()); code != int(exit.Interrupted) {
				t.Fatalf("exit %d, want 130: %s", code, stderr)
			}
			p := readProfile(t, path)
			if p.Complete {
				t.Error("interrupted profile says complete")
			}
			if n := p.Nodes[0].GPUs[0].Series.Len(); n < 3 {
				t.Errorf("only %d samples kept", n)
			}
			if !strings.Contains(stderr.String(), "(incomplete)") || !strings.Contains(stderr.String(), "interrupted") {
				t.Errorf("stderr = %q", stderr)
			}
		})
	}
}

func TestWrapExitStatusAndJob(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.json")
	c, stderr := startSeedance(t, "profile", "--source", "sim", "--sim-nodes", "1", "--interval", "100ms",
		"--output", path, "--", "sh", "-c", "sleep 0.5; exit 7")
	if code := exitCode(c.Wait()); code != 7 {
		t.Fatalf("exit %d, want the command's 7: %s", code, stderr)
	}
	p := readProfile(t, path)
	if !p.Complete {
		t.Error("profile of a command that exited by itself is incomplete")
	}
	var job *profile.Workload
	for i, w := range p.Nodes[0].Workloads {
		if w.Kind == profile.KindJob {
			job = &p.Nodes[0].Workloads[i]
		}
	}
	if job == nil || job.Name != "sh" || !strings.HasPrefix(job.ID, "job/sh-") {
		t.Fatalf("job workload = %+v", job)
	}
	if n := p.Nodes[0].GPUs[0].Series.Len(); n < 3 || n > 30 {
		t.Errorf("%d samples for a 0.5 s command at 100ms", n)
	}
}

func TestWrapForwardsSignals(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.json")
	c, stderr := startSeedance(t, "profile", "--source", "sim", "--sim-nodes", "1", "--interval", "100ms",
		"--checkpoint", "200ms", "--output", path, "--", "sh", "-c", `trap "exit 42" INT; sleep 10; exit 1`)
	waitForFile(t, path)
	if err := c.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := exitCode(c.Wait()); code != 42 {
		t.Fatalf("exit %d, want 42 from the command's INT trap: %s", code, stderr)
	}
	if p := readProfile(t, path); p.Complete {
		t.Error("interrupted run says complete")
	}
}

func TestWrapCommandNotFound(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.json")
	c, stderr := startSeedance(t, "profile", "--source", "sim", "--output", path, "--", "/no/such/program")
	if code := exitCode(c.Wait()); code != int(exit.Usage) {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr.String(), "/no/such/program") {
		t.Fatalf("stderr = %q", stderr)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatal("output written for a command that never ran")
	}
}

func TestNoDriverBinary(t *testing.T) {
	dir := t.TempDir()
	c, stderr := startSeedance(t, "profile", "--output", filepath.Join(dir, "p.json"))
	start := time.Now()
	code := exitCode(c.Wait())
	if code != 2 || strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), "NVML library not found") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	t.Logf("no-driver exit took %v", time.Since(start))
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("files left: %v", entries)
	}
}

// BenchmarkProfileRSS1h8GPU runs the real binary for one simulated hour of
// one 8-GPU node at 1 s and reports its peak resident memory (target ≤ 30 MiB).
func BenchmarkProfileRSS1h8GPU(b *testing.B) {
	for i := 0; i < b.N; i++ {
		out := filepath.Join(b.TempDir(), "p.json")
		c := exec.Command(binary, "profile", "--source", "sim", "--sim-nodes", "1", "--duration", "3600", "--interval", "1s", "--output", out, "--quiet")
		c.Env = []string{"HOME=" + b.TempDir()}
		if o, err := c.CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, o)
		}
		ru := c.ProcessState.SysUsage().(*syscall.Rusage)
		b.ReportMetric(float64(ru.Maxrss)/1024, "maxrss-MiB")
		fi, _ := os.Stat(out)
		b.ReportMetric(float64(fi.Size())/(1<<20), "file-MiB")
	}
}

// BenchmarkAnalyzeRSS runs the binary over the synthetic profile of
// analyze's benchmarks (≥ 500 MB, 8,000 GPUs) and reports its peak RSS
// (target ≤ 200 MB) and throughput.
func BenchmarkAnalyzeRSS(b *testing.B) {
	path, size, err := synth.BenchProfile(512)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(size)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c := exec.Command(binary, "analyze", path, "--format", "json", "--output", filepath.Join(b.TempDir(), "r.json"))
		c.Env = []string{"HOME=" + b.TempDir()}
		if out, err := c.CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
		ru := c.ProcessState.SysUsage().(*syscall.Rusage)
		b.ReportMetric(float64(ru.Maxrss)/1024, "maxrss-MiB")
		b.ReportMetric(float64(size)/(1<<20), "input-MiB")
	}
}

// BenchmarkPrometheus1000Nodes reads a 1,000-node × 8-GPU cluster, one
// hour at a 15 s step (all 13 metrics), from a real Prometheus with the
// binary, and reports the wall time and seedance's own CPU share.
func BenchmarkPrometheus1000Nodes(b *testing.B) {
	srv := backfilled(b, synth.Profile(1000, 8, 240, 15))
	promArgs := []string{"--source", "prometheus", "--prometheus-url", srv.URL, "--start", synth.Start.Format(time.RFC3339),
		"--end", synth.Start.Add(time.Hour).Format(time.RFC3339), "--step", "15s"}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		measureRun(b, srv, "profile", append([]string{"profile", "--output", filepath.Join(b.TempDir(), "cluster.json"), "--quiet"}, promArgs...)...)
		comparePushdown(b, srv, "", promArgs)
	}
}

// comparePushdown runs analyze --source prometheus raw and with
// --pushdown, checks that their idle time, costs and energy are the same,
// and sets them beside the PromQL-only approximation (samples under the
// threshold × step, ignoring the idle window and gaps).
func comparePushdown(b *testing.B, srv *promtest.Server, suffix string, promArgs []string) {
	var figs [2]pushdownFigures
	for i, extra := range [][]string{nil, {"--pushdown"}} {
		out := filepath.Join(b.TempDir(), "report.json")
		name := "analyze" + suffix
		if extra != nil {
			name = "pushdown" + suffix
		}
		measureRun(b, srv, name, append(append([]string{"analyze", "--format", "json", "--output", out}, promArgs...), extra...)...)
		data, err := os.ReadFile(out)
		if err != nil {
			b.Fatal(err)
		}
		if err := json.Unmarshal(data, &figs[i]); err != nil {
			b.Fatal(err)
		}
		for _, n := range figs[i].Summary.Notes {
			if strings.Contains(n, "pushdown: read") {
				b.Log(n)
			}
		}
		figs[i].Warnings, figs[i].Summary.Notes = nil, nil
	}
	ja, _ := json.Marshal(figs[0])
	jb, _ := json.Marshal(figs[1])
	if !bytes.Equal(ja, jb) {
		b.Errorf("pushdown differs from the raw read:\nraw:      %.500s\npushdown: %.500s", ja, jb)
	}
	b.ReportMetric(figs[0].Summary.IdleGPUHours, "exact"+suffix+"-idle-gpu-h")
	// The PromQL-only answer.
	var start, end, step string
	for i := 0; i+1 < len(promArgs); i++ {
		switch promArgs[i] {
		case "--start":
			start = promArgs[i+1]
		case "--end":
			end = promArgs[i+1]
		case "--step":
			step = promArgs[i+1]
		}
	}
	t0, _ := time.Parse(time.RFC3339, start)
	t1, _ := time.Parse(time.RFC3339, end)
	st, _ := time.ParseDuration(step)
	// An hour a query: one query over a day of 8,000 GPUs passes
	// Prometheus's query.max-samples.
	began := time.Now()
	approx := 0.0
	for from := t0; from.Before(t1); from = from.Add(time.Hour) {
		to := from.Add(time.Hour)
		if to.After(t1) {
			to = t1
		}
		// "or vector(0)": an hour without an idle sample is no series.
		q := fmt.Sprintf("(sum(count_over_time((DCGM_FI_DEV_GPU_UTIL < 15)[%ds:%ds])) or vector(0)) * %d / 3600", int(to.Sub(from).Seconds()), int(st.Seconds()), int(st.Seconds()))
		v, err := promScalar(srv.URL, q, to)
		if err != nil {
			b.Logf("PromQL-only %s: %v", q, err)
			return
		}
		approx += v
	}
	b.ReportMetric(time.Since(began).Seconds(), "promql"+suffix+"-wall-s")
	b.ReportMetric(approx, "promql"+suffix+"-idle-gpu-h")
}

// BenchmarkPrometheusRangeFlat reads 1 h, 2 h, 6 h and 24 h of the same
// 100-node × 8-GPU cluster (60 s step) from one real Prometheus, raw and
// with pushdown: seedance's peak RSS should not grow with the range (issue
// #13, item 3; issue #30, pushdown). 2 h is the default chunk: one chunk.
func BenchmarkPrometheusRangeFlat(b *testing.B) {
	srv := backfilled(b, synth.Profile(100, 8, 1440, 60))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, h := range []int{1, 2, 6, 24} {
			args := []string{"--source", "prometheus", "--prometheus-url", srv.URL, "--start", synth.Start.Format(time.RFC3339),
				"--end", synth.Start.Add(time.Duration(h) * time.Hour).Format(time.RFC3339), "--step", "60s"}
			measureRun(b, srv, fmt.Sprintf("profile-%dh", h), append([]string{"profile", "--output", filepath.Join(b.TempDir(), "cluster.json"), "--quiet"}, args...)...)
			comparePushdown(b, srv, fmt.Sprintf("-%dh", h), args)
		}
	}
}

// BenchmarkPrometheus1000Nodes24h is issue #13's fleet benchmark: 1,000
// nodes × 8 GPUs × 24 h at a 15 s step (all 13 metrics, 600 M samples),
// backfilled an hour at a time. It runs analyze --source prometheus raw and
// with --pushdown (the same figures, checked) beside the PromQL-only
// answer, and profile --source prometheus over 1 h, 6 h and 24 h of it.
// It needs about an hour and 60 GB of disk; SEEDANCE_BENCH_HOURS=6 runs
// the first 6 hours of it (about a quarter of the time), and
// SEEDANCE_BENCH_TSDB=DIR keeps the backfilled TSDB in DIR for the next run.
func BenchmarkPrometheus1000Nodes24h(b *testing.B) {
	hours := 24
	if h, err := strconv.Atoi(os.Getenv("SEEDANCE_BENCH_HOURS")); err == nil && h > 0 && h <= 24 {
		hours = h
	}
	began := time.Now()
	dir := os.Getenv("SEEDANCE_BENCH_TSDB") // kept between runs when set
	if dir == "" {
		dir = b.TempDir()
	}
	srv := promtest.StartSlicesIn(b, dir, hours, func(i int, w io.Writer) error {
		return dcgmtest.WriteOpenMetrics(w, synth.Slice(1000, 8, i*240, 240, 15))
	})
	b.Logf("backfill and start: %v", time.Since(began))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		day := []string{"--source", "prometheus", "--prometheus-url", srv.URL, "--start", synth.Start.Format(time.RFC3339),
			"--end", synth.Start.Add(time.Duration(hours) * time.Hour).Format(time.RFC3339), "--step", "15s"}
		comparePushdown(b, srv, fmt.Sprintf("-%dh", hours), day)
		engineScan(b, srv, synth.Start, hours)
		for _, h := range []int{1, 6, 24} {
			if h > hours {
				continue
			}
			args := append([]string(nil), day...)
			args[7] = synth.Start.Add(time.Duration(h) * time.Hour).Format(time.RFC3339)
			measureRun(b, srv, fmt.Sprintf("profile-%dh", h), append([]string{"profile", "--output", filepath.Join(b.TempDir(), "cluster.json"), "--quiet"}, args...)...)
		}
	}
}

// engineScan measures what the engine needs to look at every sample once:
// count_over_time of each dcgm-exporter metric, an hour a query, one query
// at a time. An exact answer must see every sample (a scrape without
// utilization is observed time), so this is the floor of any exact
// pushdown on this engine and machine.
func engineScan(b *testing.B, srv *promtest.Server, start time.Time, hours int) {
	began, cpu := time.Now(), srv.CPU()
	total := 0.0
	for _, m := range dcgmtest.MetricNames() {
		for h := 1; h <= hours; h++ {
			v, err := promScalar(srv.URL, fmt.Sprintf("sum(count_over_time(%s[3600s]))", m), start.Add(time.Duration(h)*time.Hour-time.Millisecond))
			if err != nil {
				b.Logf("scan of %s: %v", m, err)
				continue
			}
			total += v
		}
	}
	b.ReportMetric(time.Since(began).Seconds(), "scan-wall-s")
	b.ReportMetric((srv.CPU() - cpu).Seconds(), "scan-engine-cpu-s")
	b.ReportMetric(total/1e6, "scan-M-samples")
}

// promScalar runs an instant query whose answer is one value.
func promScalar(url, q string, at time.Time) (float64, error) {
	resp, err := http.PostForm(url+"/api/v1/query", neturl.Values{"query": {q}, "time": {strconv.FormatInt(at.Unix(), 10)}})
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var ans struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&ans); err != nil {
		return 0, err
	}
	if ans.Status != "success" || len(ans.Data.Result) != 1 {
		return 0, fmt.Errorf("%s %s (%d series)", ans.Status, ans.Error, len(ans.Data.Result))
	}
	s, _ := ans.Data.Result[0].Value[1].(string)
	return strconv.ParseFloat(s, 64)
}

// backfilled starts a real Prometheus holding p as dcgm-exporter metrics.
func backfilled(b *testing.B, p *profile.Profile) *promtest.Server {
	f, err := os.CreateTemp(b.TempDir(), "om")
	if err != nil {
		b.Fatal(err)
	}
	if err := dcgmtest.WriteOpenMetrics(f, p); err != nil {
		b.Fatal(err)
	}
	f.Close()
	om, _ := os.ReadFile(f.Name())
	os.Remove(f.Name())
	genStart := time.Now()
	srv := promtest.Start(b, om)
	b.Logf("backfill and start: %v for %d MB of OpenMetrics", time.Since(genStart), len(om)>>20)
	return srv
}

// measureRun runs seedance and reports its wall time, CPU share and peak
// RSS (timeRun), and the engine's CPU time meanwhile.
func measureRun(b *testing.B, srv *promtest.Server, name string, args ...string) {
	engine := srv.CPU()
	defer func() { b.ReportMetric((srv.CPU() - engine).Seconds(), name+"-engine-cpu-s") }()
	wall, cpu, rss := timeRun(b, binary, args...)
	b.ReportMetric(wall.Seconds(), name+"-wall-s")
	b.ReportMetric(100*cpu.Seconds()/wall.Seconds(), name+"-cpu-%")
	b.ReportMetric(rss, name+"-maxrss-MiB")
}

// timeRun runs bin with a clean environment and returns its wall time, CPU
// time and peak RSS in MiB. The child's own ru_maxrss would include this
// test process's memory up to exec (vfork shares it), so peak RSS is taken
// by GNU time, a small process in between, whose children's CPU time is
// bin's.
func timeRun(b *testing.B, bin string, args ...string) (wall, cpu time.Duration, rssMiB float64) {
	dir := b.TempDir()
	out := filepath.Join(dir, "rss")
	c := exec.Command("/usr/bin/time", append([]string{"-f", "%M", "-o", out, bin}, args...)...)
	c.Env = []string{"HOME=" + dir, "TMPDIR=" + dir}
	start := time.Now()
	if o, err := c.CombinedOutput(); err != nil {
		b.Fatalf("%s: %v: %s", bin, err, o)
	}
	wall = time.Since(start)
	ru := c.ProcessState.SysUsage().(*syscall.Rusage)
	cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	kb, err := os.ReadFile(out)
	if err != nil {
		b.Fatal(err)
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(kb)))
	if err != nil {
		b.Fatalf("GNU time wrote %q", kb)
	}
	return wall, cpu, float64(v) / 1024
}

// BenchmarkHTMLReport2000Nodes24h (#31): the HTML report of 2,000
// simulated nodes × 8 GPUs over 24 hours at 60 s (the profile is made once
// into the temp directory, about 4 minutes), its size, and what headless
// Chromium takes to start, load, lay out and screenshot it: wall and CPU
// time (user + system of Chromium and its children), min / median / max
// over SEEDANCE_BENCH_ROUNDS rounds (default 5), each alternated with an
// empty page, whose time is Chromium's own.
func BenchmarkHTMLReport2000Nodes24h(b *testing.B) {
	prof := filepath.Join(os.TempDir(), "seedance-bench-sim2000-24h.json.zst")
	if _, err := os.Stat(prof); err != nil {
		c := exec.Command(binary, "profile", "--source", "sim", "--sim-nodes", "2000", "--duration", "86400", "--interval", "60s", "--quiet", "-o", prof)
		if out, err := c.CombinedOutput(); err != nil {
			os.Remove(prof)
			b.Fatalf("%v: %s", err, out)
		}
	}
	dir := b.TempDir()
	page := filepath.Join(dir, "report.html")
	c := exec.Command(binary, "analyze", prof, "--format", "html", "--output", page)
	c.Env = []string{"HOME=" + dir}
	if out, err := c.CombinedOutput(); err != nil {
		b.Fatalf("%v: %s", err, out)
	}
	fi, _ := os.Stat(page)
	empty := filepath.Join(dir, "empty.html")
	if err := os.WriteFile(empty, []byte("<!DOCTYPE html><p>x"), 0o644); err != nil {
		b.Fatal(err)
	}
	br := browsertest.New(b)
	rounds := 5
	if n, err := strconv.Atoi(os.Getenv("SEEDANCE_BENCH_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	shot := func(path string) (wall, cpu float64) {
		var before, after syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &before)
		start := time.Now()
		br.Screenshot(b, path, 1000, 1400)
		wall = time.Since(start).Seconds()
		_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &after)
		return wall, float64(after.Utime.Nano()+after.Stime.Nano()-before.Utime.Nano()-before.Stime.Nano()) / 1e9
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var figs [4][]float64 // page wall, page CPU, empty wall, empty CPU
		for r := 0; r < rounds; r++ {
			order := []string{page, empty}
			if r%2 == 1 {
				order = []string{empty, page}
			}
			for _, p := range order {
				w, c := shot(p)
				k := 0
				if p == empty {
					k = 2
				}
				figs[k], figs[k+1] = append(figs[k], w), append(figs[k+1], c)
			}
		}
		for k, name := range []string{"page-wall-s", "page-cpu-s", "empty-wall-s", "empty-cpu-s"} {
			b.Logf("%s: %s", name, spread(figs[k], "%.2f"))
			b.ReportMetric(median(figs[k]), name)
		}
	}
	b.ReportMetric(float64(fi.Size())/(1<<20), "page-MiB")
}

// BenchmarkRSS10000Nodes runs analyze, analyze --report all and recommend
// over a simulated 10,000-node cluster (80,000 GPUs × 30 s, 300 MB, made
// once into the temp directory) and reports each one's peak RSS: the
// planner plans from the analysis analyze --report migration makes, and
// must not use more memory than that (issues #11, #26).
func BenchmarkRSS10000Nodes(b *testing.B) {
	path := filepath.Join(os.TempDir(), "seedance-bench-sim10k.json")
	if _, err := os.Stat(path); err != nil {
		c := exec.Command(binary, "profile", "--source", "sim", "--sim-nodes", "10000", "--duration", "30", "-o", path)
		if out, err := c.CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
	}
	rss := func(args ...string) float64 {
		c := exec.Command(binary, args...)
		c.Env = []string{"HOME=" + b.TempDir()}
		if out, err := c.CombinedOutput(); err != nil {
			b.Fatalf("%v: %v: %s", args, err, out)
		}
		return float64(c.ProcessState.SysUsage().(*syscall.Rusage).Maxrss) / 1024
	}
	out := filepath.Join(b.TempDir(), "out.json")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		a := rss("analyze", path, "--format", "json", "-o", out)
		all := rss("analyze", path, "--report", "all", "--format", "json", "-o", out)
		mig := rss("analyze", path, "--report", "migration", "--format", "json", "-o", out)
		r := rss("recommend", "-i", path, "--dialect", "json", "-o", out)
		b.ReportMetric(a, "analyze-MiB")
		b.ReportMetric(all, "analyze-all-MiB")
		b.ReportMetric(mig, "analyze-migration-MiB")
		b.ReportMetric(r, "recommend-MiB")
		// recommend plans from the analysis analyze --report migration
		// makes (#26: one plan): it must not take more than that.
		if r > mig*1.05 {
			b.Errorf("recommend peaked at %.0f MiB, analyze --report migration at %.0f MiB", r, mig)
		}
	}
}

// discoveryAnswer is a Prometheus answer to the query that finds the nodes
// (last_over_time of a metric): one GPU on node.
func discoveryAnswer(node string) string {
	return `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"UUID":"GPU-1","gpu":"0","Hostname":"` + node + `"},"value":[1767607200,"1"]}]}}`
}

// TestInterruptPrometheus: SIGINT while reading Prometheus keeps the chunks
// read so far, with "complete": false, and exits 130.
func TestInterruptPrometheus(t *testing.T) {
	end := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
	start := end.Add(-10 * time.Minute)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			t.Fatal(err)
		}
		q, at := r.Form.Get("query"), r.Form.Get("time")
		ts, _ := strconv.ParseFloat(at, 64)
		if strings.HasPrefix(q, "last_over_time(DCGM_FI_DEV_GPU_UTIL") { // finding the nodes
			fmt.Fprint(w, discoveryAnswer("n1"))
			return
		}
		if !strings.HasPrefix(q, "DCGM_FI") { // kube-state-metrics, the other metrics' discovery: none
			fmt.Fprint(w, `{"status":"success","data":{"resultType":"vector","result":[]}}`)
			return
		}
		if ts > float64(start.Add(2*time.Minute).Unix()) {
			<-r.Context().Done() // the third chunk on: never answers
			return
		}
		name := q[:strings.IndexAny(q, "{[")]
		fmt.Fprintf(w, `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":%q,"UUID":"GPU-1","gpu":"0","Hostname":"n1"},"values":[[%v,"0.5"],[%v,"0.6"]]}]}}`,
			name, ts-45, ts-30)
	}))
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "p.json")
	c, stderr := startSeedance(t, "profile", "--source", "prometheus", "--prometheus-url", srv.URL, "--start", start.Format(time.RFC3339),
		"--end", end.Format(time.RFC3339), "--prometheus-chunk", "1m", "--step", "15s", "-o", path)
	time.Sleep(1500 * time.Millisecond)
	if err := c.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := exitCode(c.Wait()); code != int(exit.Interrupted) {
		t.Fatalf("exit %d, want 130: %s", code, stderr)
	}
	p := readProfile(t, path)
	// Two samples a chunk: the context read before the range (two before
	// 0, docs/profile-format.md) and the two chunks answered.
	if p.Complete || !p.EndedAt.Equal(start.Add(2*time.Minute)) || len(p.Nodes) != 1 || fmt.Sprint(p.Nodes[0].GPUs[0].Series.T) != "[-45 -30 15 30 75 90]" {
		t.Fatalf("complete %v, ended %v, %d nodes, %v", p.Complete, p.EndedAt, len(p.Nodes), p.Nodes[0].GPUs[0].Series.T)
	}
	if len(p.Notes) == 0 || !strings.Contains(p.Notes[len(p.Notes)-1], "interrupted: read 0 of 1 nodes whole; n1 up to 2026-01-05T09:52:00Z of the range asked (2026-01-05T09:50:00Z to 2026-01-05T10:00:00Z)") {
		t.Fatalf("notes %q", p.Notes)
	}
}

// TestMisbehavingPrometheus runs `profile --source prometheus` against a
// fake Prometheus on loopback that answers too deep, backwards, without
// end, with a giant string, too slowly, or without a status: each run ends
// by itself, in one line that names what broke, within 1 GiB.
func TestMisbehavingPrometheus(t *testing.T) {
	end := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
	series := func(ts float64, values string) string {
		return `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"DCGM_FI_DEV_GPU_UTIL","UUID":"GPU-1","gpu":"0","Hostname":"n1"},"values":[` + values + `]}]}}`
	}
	modes := map[string]func(w http.ResponseWriter, r *http.Request, ts float64){
		"deep": func(w http.ResponseWriter, r *http.Request, ts float64) {
			_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[{"metric":` + strings.Repeat(`{"a":`, 1<<20)))
		},
		"backwards": func(w http.ResponseWriter, r *http.Request, ts float64) {
			fmt.Fprint(w, series(ts, fmt.Sprintf(`[%v,"7"],[%v,"5"],[%v,"6"],[%v,"6"]`, ts-15, ts-45, ts-30, ts-30)))
		},
		"endless": func(w http.ResponseWriter, r *http.Request, ts float64) {
			_, _ = w.Write([]byte(series(ts, "")[:len(series(ts, ""))-5]))
			chunk := []byte(strings.Repeat(fmt.Sprintf(`[%v,"1"],`, ts-30), 4096))
			for r.Context().Err() == nil {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		},
		"giant-string": func(w http.ResponseWriter, r *http.Request, ts float64) {
			fmt.Fprintf(w, `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"pod":"%s"},"values":[]}]}}`, strings.Repeat("p", 10<<20))
		},
		"slow": func(w http.ResponseWriter, r *http.Request, ts float64) {
			select {
			case <-r.Context().Done():
			case <-time.After(30 * time.Second):
			}
		},
		"no-status": func(w http.ResponseWriter, r *http.Request, ts float64) { _, _ = w.Write([]byte(`{}`)) },
	}
	want := map[string]string{
		"deep": "nesting deeper than 64 levels", "endless": "more than the query can return", "giant-string": "a string longer than 64 KiB",
		"slow": "DCGM_FI_", "no-status": "not a Prometheus API answer",
	}
	for name, answer := range modes {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if err := r.ParseForm(); err != nil {
					t.Fatal(err)
				}
				ts, _ := strconv.ParseFloat(r.Form.Get("time"), 64)
				if strings.HasPrefix(r.Form.Get("query"), "last_over_time(DCGM_FI_DEV_GPU_UTIL") && name == "backwards" {
					fmt.Fprint(w, discoveryAnswer("n1"))
					return
				}
				if !strings.HasPrefix(r.Form.Get("query"), "DCGM_FI_DEV_GPU_UTIL") && name == "backwards" {
					fmt.Fprint(w, `{"status":"success","data":{"resultType":"matrix","result":[]}}`)
					return
				}
				answer(w, r, ts)
			}))
			defer srv.Close()
			path := filepath.Join(t.TempDir(), "p.json")
			cfg := filepath.Join(t.TempDir(), "c.yaml")
			if err := os.WriteFile(cfg, []byte("prometheus:\n  retries: 0\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			timeout := "1s"
			if name == "endless" {
				timeout = "60s" // the bound must stop it, not the timeout
			}
			c, stderr := startSeedance(t, "--config", cfg, "profile", "--source", "prometheus", "--prometheus-url", srv.URL, "--start", end.Add(-2*time.Minute).Format(time.RFC3339),
				"--end", end.Format(time.RFC3339), "--prometheus-timeout", timeout, "--prometheus-concurrency", "1", "-o", path)
			done := make(chan error, 1)
			go func() { done <- c.Wait() }()
			var err error
			select {
			case err = <-done:
			case <-time.After(60 * time.Second):
				if err := c.Process.Kill(); err != nil {
					t.Fatal(err)
				}
				t.Fatal("still running after 60 s")
			}
			code := exitCode(err)
			rss := c.ProcessState.SysUsage().(*syscall.Rusage).Maxrss
			if rss > 1<<20 && !raceEnabled {
				t.Errorf("peak RSS %d MiB", rss>>10)
			}
			t.Logf("peak RSS %d MiB", rss>>10)
			if name == "backwards" {
				if code != 0 {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				s := readProfile(t, path).Nodes[0].GPUs[0].Series
				var got []float64 // the window's, without the context read around it
				for i, ti := range s.T {
					if ti >= 0 && ti < 120 {
						got = append(got, s.GPUUtilPct[i])
					}
				}
				if fmt.Sprint(got) != "[5 6 7]" {
					t.Fatalf("util %v at %v", s.GPUUtilPct, s.T)
				}
				return
			}
			msg := stderr.String()
			if code != int(exit.Failure) || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, want[name]) || !strings.Contains(msg, "DCGM_FI_") {
				t.Fatalf("exit %d: %q, want one line with %q and the query", code, msg, want[name])
			}
		})
	}
}
