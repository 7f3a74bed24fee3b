package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/seedance/seedance/internal/exit"
	"github.com/seedance/seedance/internal/table"
	"github.com/seedance/seedance/render"
	"github.com/seedance/seedance/report"
	"github.com/seedance/seedance/settings"
	"github.com/seedance/seedance/source"
)

// LoopSpec is loop mode: an analysis run on a period, its report
// rewritten each time, and /metrics served (docs/rules.md, Loop mode).
type LoopSpec struct {
	// Spec is the first run's analysis.
	Spec AnalyzeSpec
	// Reload builds the analysis anew when a watched file changed, or on
	// SIGHUP.
	Reload func() (AnalyzeSpec, error)
	// Watch are the config and rules files.
	Watch []string
	// Stdout takes a report written to "-" (Terminal: it is a terminal);
	// Log takes the loop's lines.
	Stdout   io.Writer
	Terminal bool
	Log      io.Writer
}

// Loop runs the analysis every analyze.every until ctx ends. Before a run,
// when the config file or the rules file changed (or on SIGHUP), Reload
// builds the analysis anew; a change that does not load, or whose first
// run is a usage error, is reported and the last good analysis is kept. A
// run that fails (an unreachable Prometheus) is reported and the loop goes
// on; /healthz says so until a run succeeds. With analyze.listen, /metrics
// serves the latest good report's series and the loop's own.
func Loop(ctx context.Context, l LoopSpec) error {
	st := &loopState{log: l.Log}
	stopServe, err := st.serve(l.Spec.Config.Analyze.Listen, l.Spec.Config)
	if err != nil {
		return err
	}
	defer stopServe()
	var changed atomic.Bool
	stopWatch, err := watchFiles(l.Watch, func() { changed.Store(true) })
	if err != nil {
		return err
	}
	defer stopWatch()
	hupped, stopHUP := onHUP(func() { changed.Store(true) })
	defer stopHUP()
	spec, sched := l.Spec, period{next: time.Now()}
	for run := 1; ; run++ {
		sched.started(spec.Config.Analyze.Every)
		ran := false
		if changed.Swap(false) {
			if hupped.Swap(false) {
				fmt.Fprintln(l.Log, "SIGHUP: reading the configuration and rules again")
			}
			spec, ran = l.reload(ctx, st, spec, run)
		}
		if !ran {
			if err := st.runOnce(ctx, l, spec, run); err != nil && run == 1 && isUsage(err) {
				return err
			}
		}
		if late := sched.finished(time.Now()); late > 0 {
			fmt.Fprintf(l.Log, "run %d took %s longer than --every %s: the next run starts now\n", run, late.Round(time.Millisecond), spec.Config.Analyze.Every)
		}
		// The loop idles until the next run: the run's pages go back to
		// the OS now, so that a service holds what it keeps between runs
		// (the last report's series), not its last run's peak, and the
		// next run does not allocate beside them (docs/performance.md).
		debug.FreeOSMemory()
		if (source.RealClock{}).WaitUntil(ctx, sched.next) != nil {
			fmt.Fprintln(l.Log, "stopped")
			return nil
		}
	}
}

// reload builds the analysis anew and runs it: the new one when it loads
// and its first run is not a usage error, else the last good one, which
// has not run (ran is false).
func (l LoopSpec) reload(ctx context.Context, st *loopState, last AnalyzeSpec, run int) (AnalyzeSpec, bool) {
	next, err := l.Reload()
	if err == nil {
		// The new settings' first run tells whether they are usable.
		if err = st.runOnce(ctx, l, next, run); err == nil || !isUsage(err) {
			st.reloaded(true)
			fmt.Fprintf(l.Log, "reload: read %s\n", table.Visible(fmt.Sprint(l.Watch)))
			return next, true
		}
	}
	fmt.Fprintf(l.Log, "reload: %s; keeping the last good configuration and rules\n", table.Visible(table.Flatten(err.Error())))
	st.reloaded(false)
	return last, false
}

// onHUP notes SIGHUP, as daemons do, instead of ending the loop: the
// configuration and rules are read again at the next run.
func onHUP(touched func()) (hupped *atomic.Bool, stop func()) {
	hupped = &atomic.Bool{}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		for range hup {
			hupped.Store(true)
			touched()
		}
	}()
	return hupped, func() { signal.Stop(hup) }
}

// serve starts the HTTP endpoints when analyze.listen is set; stop ends
// them, giving answers under way a moment: a client that does not read is
// cut off rather than holding the exit.
func (st *loopState) serve(addr string, cfg *settings.Config) (stop func(), err error) {
	if addr == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, exit.Usagef("--listen %s: %v", addr, err)
	}
	srv := st.startServer(ln, cfg.Limits)
	fmt.Fprintf(st.log, "serving /metrics and /healthz on %s\n", ln.Addr())
	return func() {
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if srv.Shutdown(sctx) != nil {
			_ = srv.Close()
		}
	}, nil
}

// loopState is what the HTTP endpoints serve: the latest good report's
// series, and how the runs and reloads went.
type loopState struct {
	log         io.Writer
	mu          sync.Mutex
	metrics     []byte // the latest good report, Prometheus text
	lastOK      time.Time
	lastErr     string
	runsOK      int
	runsFailed  int
	reloadOK    bool
	reloadTried bool
}

// runOnce runs one analysis, writes its report and keeps its series.
func (st *loopState) runOnce(ctx context.Context, l LoopSpec, spec AnalyzeSpec, run int) error {
	res, out, err := Analyze(ctx, spec)
	if err == nil && out.Interrupted {
		// Stopped part-way by the signal that ends the loop: the last
		// good report stays.
		fmt.Fprintf(l.Log, "run %d: interrupted; its report is not written\n", run)
		return nil
	}
	if err == nil {
		err = WriteReport(l.Stdout, l.Terminal, spec.Config.Analyze, res)
	}
	var prom bytes.Buffer
	if err == nil {
		err = render.Prom(&prom, res, render.Options{Report: spec.Config.Analyze.Report})
	}
	if err == nil {
		err = budgetMetrics(ctx, spec.Config, &prom, time.Now())
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if err != nil {
		st.runsFailed++
		st.lastErr = table.Flatten(err.Error())
		fmt.Fprintf(l.Log, "run %d: %s\n", run, table.Visible(st.lastErr))
		return err
	}
	st.runsOK++
	st.lastErr = ""
	st.lastOK = time.Now()
	st.metrics = prom.Bytes()
	fmt.Fprintln(l.Log, runLine(res, out, run))
	if out.Ledger != nil {
		fmt.Fprintf(l.Log, "run %d: %s\n", run, LedgerLine(*out.Ledger))
	}
	for _, w := range res.Warnings {
		if strings.HasPrefix(w, "rule ") && strings.Contains(w, "budget") {
			fmt.Fprintf(l.Log, "run %d: %s\n", run, table.Visible(w))
		}
	}
	return nil
}

// runLine is a run's line: "run 3: 8 nodes, 12.50 idle GPU-hours, 4
// suggestions", with a failed gate and the stale nodes.
func runLine(res *report.Result, out Outcome, run int) string {
	idle := "n/a (no utilization measured)"
	if h := res.Summary.IdleGPUHours; h != nil {
		idle = strconv.FormatFloat(*h, 'f', 2, 64)
	}
	line := fmt.Sprintf("run %d: %d nodes, %s idle GPU-hours, %d suggestions", run, res.Summary.Nodes, idle, len(res.Suggestions))
	if out.GatesFailed > 0 {
		line += "; a gate failed"
	}
	var stale []string
	for _, n := range res.Nodes {
		if n.Stale {
			stale = append(stale, n.Name)
		}
	}
	if len(stale) > 0 {
		line += fmt.Sprintf("; %d node(s) with stale data, not acted on: %s", len(stale), table.Visible(strings.Join(stale, ", ")))
	}
	return line
}

// period keeps loop mode on a fixed period: run k starts at the first
// start + (k−1) × every, whatever each run takes; a run that overruns its
// period is followed at once by the next, from which the period counts
// again.
type period struct{ next time.Time }

// started moves the schedule to the start of the next run.
func (p *period) started(every time.Duration) { p.next = p.next.Add(every) }

// finished says by how much a run ended past the next run's start (0 when
// it ended in time); an overrun moves the next start to now.
func (p *period) finished(now time.Time) time.Duration {
	if late := now.Sub(p.next); late > 0 {
		p.next = now
		return late
	}
	return 0
}

func isUsage(err error) bool {
	var ue *exit.UsageError
	return errors.As(err, &ue)
}

// watchFiles calls touched when one of the files is written, created,
// renamed or removed. It watches their directories, so that an editor's
// save by rename is seen, and the file itself when it comes back.
func watchFiles(files []string, touched func()) (stop func(), err error) {
	if len(files) == 0 {
		return func() {}, nil
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watching %v: %w", files, err)
	}
	want := map[string]bool{}
	for _, f := range files {
		abs, err := filepath.Abs(f)
		if err != nil {
			w.Close()
			return nil, err
		}
		want[abs] = true
		if err := w.Add(filepath.Dir(abs)); err != nil {
			w.Close()
			return nil, fmt.Errorf("watching %s: %w", filepath.Dir(abs), err)
		}
	}
	go func() {
		for {
			select {
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if abs, err := filepath.Abs(ev.Name); err == nil && want[abs] && ev.Op&(fsnotify.Write|fsnotify.Create|fsnotify.Rename|fsnotify.Remove) != 0 {
					touched()
				}
			case _, ok := <-w.Errors:
				if !ok {
					return
				}
			}
		}
	}()
	return func() { w.Close() }, nil
}

func (st *loopState) reloaded(ok bool) {
	st.mu.Lock()
	st.reloadOK, st.reloadTried = ok, true
	st.mu.Unlock()
}

// startServer serves the loop's endpoints on ln with every phase of a
// request bounded by limits.http_timeout: reading it, writing the answer (a
// client that never reads is cut off) and an idle keep-alive; a request's
// header within headerTimeout at most (a probe's arrives at once). The
// connections are governed by connGovernor.
func (st *loopState) startServer(ln net.Listener, lim settings.Limits) *http.Server {
	timeout := lim.HTTPTimeout
	srv := &http.Server{Handler: st.mux(), ReadHeaderTimeout: min(timeout, headerTimeout), ReadTimeout: timeout, WriteTimeout: timeout, IdleTimeout: timeout}
	srv.ConnState = newGovernor(lim.HTTPConnections).track
	go func() { _ = srv.Serve(ln) }() // ends in stop
	return srv
}

// headerTimeout is the longest a client may take to send a request's
// header.
const headerTimeout = 5 * time.Second

func (st *loopState) mux() *http.ServeMux {
	m := http.NewServeMux()
	m.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		body := st.metricsSnapshot() // the lock is not held while a client reads
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_, _ = w.Write(body)
	})
	m.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		code, text := st.health()
		w.WriteHeader(code)
		_, _ = io.WriteString(w, text)
	})
	return m
}

// metricsSnapshot is /metrics: the latest good report's series and the
// loop's own, copied under the lock.
func (st *loopState) metricsSnapshot() []byte {
	st.mu.Lock()
	defer st.mu.Unlock()
	var b bytes.Buffer
	b.Write(st.metrics)
	fmt.Fprintf(&b, "# HELP seedance_loop_runs_total Analysis runs of this process, by result.\n# TYPE seedance_loop_runs_total counter\n")
	fmt.Fprintf(&b, "seedance_loop_runs_total{result=\"ok\"} %d\nseedance_loop_runs_total{result=\"error\"} %d\n", st.runsOK, st.runsFailed)
	if !st.lastOK.IsZero() {
		fmt.Fprintf(&b, "# HELP seedance_loop_last_success_timestamp_seconds When the latest good report was made (Unix time).\n# TYPE seedance_loop_last_success_timestamp_seconds gauge\n")
		fmt.Fprintf(&b, "seedance_loop_last_success_timestamp_seconds %d\n", st.lastOK.Unix())
	}
	if st.reloadTried {
		v := 0
		if st.reloadOK {
			v = 1
		}
		fmt.Fprintf(&b, "# HELP seedance_config_reload_ok 1 when the latest change of the config or rules file loaded, 0 when the last good one is kept.\n# TYPE seedance_config_reload_ok gauge\nseedance_config_reload_ok %d\n", v)
	}
	return b.Bytes()
}

// health is /healthz's status and text.
func (st *loopState) health() (int, string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	switch {
	case st.lastErr != "":
		return http.StatusServiceUnavailable, fmt.Sprintf("the latest run failed: %s\n", st.lastErr)
	case st.lastOK.IsZero():
		return http.StatusServiceUnavailable, "no report yet\n"
	}
	return http.StatusOK, fmt.Sprintf("ok: latest report at %s\n", st.lastOK.UTC().Format(time.RFC3339))
}
