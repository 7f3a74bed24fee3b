package pipeline

import (
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seedance/seedance/settings"
)

// fakeConn is a connection the governor can close, from a given address.
type fakeConn struct {
	net.Conn
	from   string
	closed bool
}

func (f *fakeConn) RemoteAddr() net.Addr {
	a, _ := net.ResolveTCPAddr("tcp", f.from)
	return a
}

func (f *fakeConn) Close() error { f.closed = true; return nil }

// testGovernor is newGovernor(n) on a clock the test moves, and a way to
// open a connection in a state.
func testGovernor(n int) (*connGovernor, func(time.Duration), func(string, http.ConnState) *fakeConn) {
	g := newGovernor(n)
	now := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	g.now = func() time.Time { return now }
	conn := func(from string, s http.ConnState) *fakeConn {
		c := &fakeConn{from: from}
		g.track(c, http.StateNew)
		if s != http.StateNew {
			g.track(c, s)
		}
		return c
	}
	return g, func(d time.Duration) { now = now.Add(d) }, conn
}

// TestConnGovernor: past a bound the oldest connection idle between
// requests goes, of the same address first, else the oldest that has
// waited for its header longer than headerGrace; a connection younger
// than that stays unless 16 × n are open.
func TestConnGovernor(t *testing.T) {
	g, wait, conn := testGovernor(2) // 8 in all, 2 per address, 2 pending
	a1 := conn("10.0.0.1:1", http.StateActive)
	a2 := conn("10.0.0.1:2", http.StateIdle)
	b1 := conn("10.0.0.2:1", http.StateIdle)
	a3 := conn("10.0.0.1:3", http.StateNew)
	if a1.closed || !a2.closed || b1.closed || a3.closed {
		t.Fatalf("a third connection of 10.0.0.1: closed a1 %v a2 %v b1 %v a3 %v, want only a2 (its oldest idle one)", a1.closed, a2.closed, b1.closed, a3.closed)
	}
	g.track(a3, http.StateActive)
	a4 := conn("10.0.0.1:4", http.StateNew)
	if a4.closed || a1.closed || a3.closed {
		t.Fatalf("10.0.0.1's two others are inside requests: the new one has its grace (a4 closed %v)", a4.closed)
	}
	wait(headerGrace + time.Second)
	a5 := conn("10.0.0.1:5", http.StateNew)
	if !a4.closed || a5.closed || a1.closed || a3.closed {
		t.Fatalf("past its grace a4 goes, the new a5 stays: a4 %v a5 %v", a4.closed, a5.closed)
	}
	g.track(a5, http.StateClosed)
	if len(g.conns) != 3 {
		t.Fatalf("%d connections tracked after a close, want 3", len(g.conns))
	}

	// Pending: only those past their grace go, the oldest first.
	_, wait, conn = testGovernor(2)
	c1, d1, e1 := conn("10.0.0.3:1", http.StateNew), conn("10.0.0.4:1", http.StateNew), conn("10.0.0.5:1", http.StateNew)
	if c1.closed || d1.closed || e1.closed {
		t.Fatalf("three new ones within their grace: closed %v %v %v, want none", c1.closed, d1.closed, e1.closed)
	}
	wait(headerGrace + time.Second)
	f1 := conn("10.0.0.6:1", http.StateNew)
	if !c1.closed || !d1.closed || e1.closed || f1.closed {
		t.Fatalf("four waiting, three past their grace: closed %v %v %v %v, want the two oldest", c1.closed, d1.closed, e1.closed, f1.closed)
	}

	// In all: 8 at most, the oldest idle one goes.
	g, _, conn = testGovernor(2)
	var fs []*fakeConn
	for i := range 9 {
		fs = append(fs, conn("10.0.1."+string(rune('1'+i))+":1", http.StateIdle))
	}
	if !fs[0].closed || fs[1].closed || fs[8].closed || len(g.conns) != 8 {
		t.Fatalf("a ninth connection: the oldest idle one must go (closed %v %v %v, %d tracked)", fs[0].closed, fs[1].closed, fs[8].closed, len(g.conns))
	}

	// An idle connection goes before an older one still waiting for its
	// header: a probe's new connection is not the first to go.
	_, _, conn = testGovernor(2)
	probe := conn("10.0.2.1:1", http.StateNew)
	idle := conn("10.0.2.1:2", http.StateIdle)
	third := conn("10.0.2.1:3", http.StateNew)
	if probe.closed || !idle.closed || third.closed {
		t.Fatalf("closed: probe %v idle %v third %v, want the idle one", probe.closed, idle.closed, third.closed)
	}

	// A flood: past 16 × n, all inside requests or new, the new one goes.
	g, _, conn = testGovernor(1)
	for i := range 16 {
		if c := conn("10.0.3.1:"+strconv.Itoa(i), http.StateActive); c.closed {
			t.Fatalf("connection %d of 16 closed", i+1)
		}
	}
	if c := conn("10.0.3.2:1", http.StateNew); !c.closed || len(g.conns) != 16 {
		t.Fatalf("a 17th connection: closed %v, %d tracked, want it closed and 16", c.closed, len(g.conns))
	}
}

// TestKeepAliveClientsLeaveHealthz (#56): 300 well-behaved keep-alive
// clients from one address, each with a request every 2 s, do not hold
// /healthz away from a probe: every probe is answered, 12 at least, sent
// while the clients make 600 requests (two of their rounds, each a burst
// of new connections as the governor closes their idle ones).
func TestKeepAliveClientsLeaveHealthz(t *testing.T) {
	if testing.Short() {
		t.Skip("holds 300 connections open")
	}
	st := &loopState{metrics: []byte("seedance_nodes 1\n"), lastOK: time.Now()}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := st.startServer(ln, settings.Limits{HTTPTimeout: 30 * time.Second, HTTPConnections: 64})
	defer srv.Close()
	url := "http://" + ln.Addr().String()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var served, requests atomic.Int32
	for range 300 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			defer c.CloseIdleConnections()
			first := true
			for {
				if resp, err := c.Get(url + "/metrics"); err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					_ = resp.Body.Close()
					requests.Add(1)
					if first {
						served.Add(1)
						first = false
					}
				}
				select {
				case <-stop:
					return
				case <-time.After(2 * time.Second):
				}
			}
		}()
	}
	defer func() { close(stop); wg.Wait() }()
	// 256 answered: as many as the server once held at most, so that
	// without the governor every slot is taken by a keep-alive client.
	waitUntil(t, 60*time.Second, func() bool { return served.Load() >= 256 })
	probe := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	from := requests.Load()
	for i := 0; i < 12 || requests.Load() < from+600; i++ {
		if i == 1000 {
			t.Fatalf("the clients made %d requests in 1,000 probes, want 600", requests.Load()-from)
		}
		resp, err := probe.Get(url + "/healthz")
		if err != nil {
			t.Fatalf("probe %d beside 300 keep-alive clients: %v", i+1, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("probe %d: HTTP %d", i+1, resp.StatusCode)
		}
		time.Sleep(20 * time.Millisecond) // a probe's pace, not a wait for a state
	}
}

// waitUntil polls ok every 50 ms for at most d.
func waitUntil(t *testing.T, d time.Duration, ok func() bool) {
	t.Helper()
	for end := time.Now().Add(d); !ok(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("not reached within %s", d)
		}
	}
}
