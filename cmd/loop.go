package cmd

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
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/seedance/seedance/internal/exit"

	"github.com/fsnotify/fsnotify"
	"golang.org/x/net/netutil"

	"github.com/seedance/seedance/internal/table"
	"github.com/seedance/seedance/render"
	"github.com/seedance/seedance/source"
)

// analyzeLoop runs the analysis every o.Config.Analyze.Every until the
// context ends (docs/rules.md, Loop mode). Before a run, when the config
// file or the rules file changed, reload builds the options anew; a change
// that does not load, or whose first run is a usage error, is reported and
// the last good options are kept. A run that fails (an unreachable
// Prometheus) is reported and the loop goes on; /healthz says so until a
// run succeeds. With --listen, /metrics serves the latest good report's
// series and the loop's own.
func analyzeLoop(ctx context.Context, o *AnalyzeOptions, reload func() (*AnalyzeOptions, error), watch []string) error {
	st := &loopState{}
	if addr := o.Config.Analyze.Listen; addr != "" {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return exit.Usagef("--listen %s: %v", addr, err)
		}
		srv := listenServer(st, o.Config.Limits.HTTPTimeout)
		go func() { _ = srv.Serve(netutil.LimitListener(ln, o.Config.Limits.HTTPConnections)) }() // ends below
		defer func() {
			// Answers under way get a moment; a client that does not read
			// is cut off rather than holding the exit.
			sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			if srv.Shutdown(sctx) != nil {
				_ = srv.Close()
			}
		}()
		fmt.Fprintf(o.IO.ErrOut, "serving /metrics and /healthz on %s\n", ln.Addr())
	}
	var changed atomic.Bool
	stopWatch, err := watchFiles(watch, func() { changed.Store(true) })
	if err != nil {
		return err
	}
	defer stopWatch()
	// SIGHUP reloads the configuration and rules at the next run, as
	// daemons do, instead of ending the loop.
	var hupped atomic.Bool
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go func() {
		for range hup {
			hupped.Store(true)
			changed.Store(true)
		}
	}()
	sched := period{next: time.Now()}
	for run := 1; ; run++ {
		sched.started(o.Config.Analyze.Every)
		ran := false
		if changed.Swap(false) {
			if hupped.Swap(false) {
				fmt.Fprintln(o.IO.ErrOut, "SIGHUP: reading the configuration and rules again")
			}
			next, err := reload()
			if err == nil {
				// The new settings' first run tells whether they are usable.
				if err = st.runOnce(next, run); err == nil || !isUsage(err) {
					o, ran = next, true
					st.reloaded(true)
					fmt.Fprintf(o.IO.ErrOut, "reload: read %s\n", table.Visible(fmt.Sprint(watch)))
				}
			}
			if !ran {
				fmt.Fprintf(o.IO.ErrOut, "reload: %s; keeping the last good configuration and rules\n", table.Visible(table.Flatten(err.Error())))
				st.reloaded(false)
			}
		}
		if !ran {
			if err := st.runOnce(o, run); err != nil && run == 1 && isUsage(err) {
				return err
			}
		}
		if late := sched.finished(time.Now()); late > 0 {
			fmt.Fprintf(o.IO.ErrOut, "run %d took %s longer than --every %s: the next run starts now\n", run, late.Round(time.Millisecond), o.Config.Analyze.Every)
		}
		if (source.RealClock{}).WaitUntil(ctx, sched.next) != nil {
			fmt.Fprintln(o.IO.ErrOut, "stopped")
			return nil
		}
	}
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

// loopState is what the HTTP endpoints serve: the latest good report's
// series, and how the runs and reloads went.
type loopState struct {
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
func (st *loopState) runOnce(o *AnalyzeOptions, run int) error {
	res, gateErr, interrupted, err := analyzeOnce(o)
	if err == nil && interrupted != nil {
		// Stopped part-way by the signal that ends the loop: the last
		// good report stays.
		fmt.Fprintf(o.IO.ErrOut, "run %d: interrupted; its report is not written\n", run)
		return nil
	}
	if err == nil {
		err = writeReport(o, res)
	}
	var prom bytes.Buffer
	if err == nil {
		err = render.Prom(&prom, res, render.Options{Report: o.Config.Analyze.Report})
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if err != nil {
		st.runsFailed++
		st.lastErr = table.Flatten(err.Error())
		fmt.Fprintf(o.IO.ErrOut, "run %d: %s\n", run, table.Visible(st.lastErr))
		return err
	}
	st.runsOK++
	st.lastErr = ""
	st.lastOK = time.Now()
	st.metrics = prom.Bytes()
	r := res.Report
	idle := "n/a (no utilization measured)"
	if h := r.Summary.IdleGPUHours; h != nil {
		idle = strconv.FormatFloat(*h, 'f', 2, 64)
	}
	line := fmt.Sprintf("run %d: %d nodes, %s idle GPU-hours, %d suggestions", run, r.Summary.Nodes, idle, len(r.Suggestions))
	if gateErr != nil {
		line += "; a gate failed"
	}
	var stale []string
	for _, n := range r.Nodes {
		if n.Stale {
			stale = append(stale, n.Name)
		}
	}
	if len(stale) > 0 {
		line += fmt.Sprintf("; %d node(s) with stale data, not acted on: %s", len(stale), table.Visible(strings.Join(stale, ", ")))
	}
	fmt.Fprintln(o.IO.ErrOut, line)
	for _, w := range r.Warnings {
		if strings.HasPrefix(w, "rule ") && strings.Contains(w, "budget") {
			fmt.Fprintf(o.IO.ErrOut, "run %d: %s\n", run, table.Visible(w))
		}
	}
	return nil
}

func (st *loopState) reloaded(ok bool) {
	st.mu.Lock()
	st.reloadOK, st.reloadTried = ok, true
	st.mu.Unlock()
}

// listenServer serves the loop's endpoints with every phase of a request
// bounded by timeout: reading it, writing the answer (a client that never
// reads is cut off) and an idle keep-alive. The listener caps the
// connections (limits.http_connections).
func listenServer(st *loopState, timeout time.Duration) *http.Server {
	return &http.Server{Handler: st.mux(), ReadHeaderTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout, IdleTimeout: timeout}
}

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
