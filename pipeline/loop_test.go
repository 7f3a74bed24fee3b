package pipeline

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestLoopFixedPeriod (#25, case 8): runs start on a fixed period whatever
// each takes; a run that overruns is followed at once, and says so.
func TestLoopFixedPeriod(t *testing.T) {
	t0 := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	every := 10 * time.Second
	p := period{next: t0}
	var starts []time.Time
	// Runs that take 3 s, 9 s, 14 s (over), 1 s.
	now := t0
	for _, took := range []time.Duration{3 * time.Second, 9 * time.Second, 14 * time.Second, time.Second} {
		starts = append(starts, now)
		p.started(every)
		late := p.finished(now.Add(took))
		if took > every && late != took-every {
			t.Errorf("run of %s: late %s, want %s", took, late, took-every)
		}
		if took <= every && late != 0 {
			t.Errorf("run of %s: late %s", took, late)
		}
		now = p.next
	}
	want := []time.Time{t0, t0.Add(10 * time.Second), t0.Add(20 * time.Second), t0.Add(34 * time.Second)}
	for i := range want {
		if !starts[i].Equal(want[i]) {
			t.Errorf("run %d started at +%s, want +%s", i+1, starts[i].Sub(t0), want[i].Sub(t0))
		}
	}
	if !p.next.Equal(t0.Add(44 * time.Second)) {
		t.Errorf("next at +%s, want +44s", p.next.Sub(t0))
	}
}

// TestMetricsWriteHoldsNoLock (#27, case 1): while /metrics is written to a
// client that does not read, the loop's state stays free: a run can store
// its report and /healthz can answer.
func TestMetricsWriteHoldsNoLock(t *testing.T) {
	st := &loopState{metrics: []byte("seedance_nodes 1\n"), lastOK: time.Now()}
	w := &blockingWriter{header: http.Header{}, writing: make(chan struct{}), release: make(chan struct{})}
	go st.mux().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	<-w.writing
	defer close(w.release)
	locked := make(chan struct{})
	go func() {
		st.mu.Lock()
		st.runsOK++ // what a run does when it ends
		st.mu.Unlock()
		close(locked)
	}()
	select {
	case <-locked:
	case <-time.After(10 * time.Second):
		t.Fatal("the loop's state stayed locked while /metrics was written")
	}
	if code, _ := st.health(); code != http.StatusOK {
		t.Errorf("/healthz %d", code)
	}
}

// blockingWriter is a client that never reads: Write blocks until release.
type blockingWriter struct {
	header  http.Header
	writing chan struct{}
	release chan struct{}
}

func (w *blockingWriter) Header() http.Header { return w.header }

func (w *blockingWriter) WriteHeader(int) {}

func (w *blockingWriter) Write(p []byte) (int, error) {
	close(w.writing)
	<-w.release
	return len(p), nil
}
