package cmd

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/testkit/testnet"
)

// TestReclaimLoop: reclaim --every runs passes until stopped, notifies an
// idle episode once however many passes see it, and serves /metrics
// (candidates, notices, actions) and /healthz.
func TestReclaimLoop(t *testing.T) {
	dir := t.TempDir()
	in, db := filepath.Join(dir, "p.json"), filepath.Join(dir, "ledger.db")
	end := busyThenIdle(t, in)
	var posts atomic.Int32
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if strings.Contains(string(b), `"text":"ml/Deployment/eval has held 4`) {
			posts.Add(1)
		}
	}))
	defer hook.Close()
	addr := fmt.Sprintf("127.0.0.1:%d", testnet.FreePort(t))
	f, get := testFactory(t, nil)
	f.Now = func() time.Time { return end.Add(time.Minute) }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	go func() {
		done <- int(Run(ctx, f, []string{"reclaim", "-i", in, "--ledger", db, "--webhook-url", hook.URL, "--execute", "--every", "200ms", "--listen", addr}))
	}()
	metrics := func() string {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			return ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(metrics(), `seedance_loop_runs_total{result="ok"} 3`) {
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("three passes did not run: %s\n%s", metrics(), get().errOut)
		}
		time.Sleep(50 * time.Millisecond)
	}
	m := metrics()
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Errorf("/healthz: %v %v", resp, err)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d\n%s", code, get().errOut)
	}
	for _, want := range []string{"seedance_reclaim_candidates 1", "seedance_reclaim_notices_total 1", `seedance_reclaim_actions_total{result="acted"} 0`, "# TYPE seedance_reclaimed_usd_total counter"} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, m)
		}
	}
	if n := posts.Load(); n != 1 {
		t.Errorf("the episode was notified %d times, want once", n)
	}
}
