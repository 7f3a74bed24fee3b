package pipeline

import (
	"io"
	"net"
	"net/http"
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

// TestConnGovernor: past a bound the oldest connection that is not inside
// a request goes, of the same address first; a new connection is closed
// only when every other is inside a request.
func TestConnGovernor(t *testing.T) {
	g := newGovernor(2) // 8 in all, 2 per address, 2 pending
	conn := func(from string, s http.ConnState) *fakeConn {
		c := &fakeConn{from: from}
		g.track(c, http.StateNew)
		if s != http.StateNew {
			g.track(c, s)
		}
		return c
	}
	a1 := conn("10.0.0.1:1", http.StateActive)
	a2 := conn("10.0.0.1:2", http.StateIdle)
	b1 := conn("10.0.0.2:1", http.StateIdle)
	a3 := conn("10.0.0.1:3", http.StateNew)
	if a1.closed || !a2.closed || b1.closed || a3.closed {
		t.Fatalf("a third connection of 10.0.0.1: closed a1 %v a2 %v b1 %v a3 %v, want only a2 (its oldest idle one)", a1.closed, a2.closed, b1.closed, a3.closed)
	}
	g.track(a3, http.StateActive)
	a4 := conn("10.0.0.1:4", http.StateNew)
	if !a4.closed || a1.closed || a3.closed {
		t.Fatalf("10.0.0.1's two connections are inside requests: the new one must go (a4 closed %v)", a4.closed)
	}
	// Pending: the oldest connection without a header goes.
	c1 := conn("10.0.0.3:1", http.StateNew)
	d1 := conn("10.0.0.4:1", http.StateNew)
	e1 := conn("10.0.0.5:1", http.StateNew)
	if !c1.closed || d1.closed || e1.closed {
		t.Fatalf("three waiting for a header: closed %v %v %v, want the oldest", c1.closed, d1.closed, e1.closed)
	}
	// In all: 8 at most, the oldest idle one goes.
	g.track(d1, http.StateIdle)
	g.track(e1, http.StateIdle)
	var fs []*fakeConn
	for i := range 4 {
		c := conn("10.0.1."+string(rune('1'+i))+":1", http.StateIdle)
		fs = append(fs, c)
	}
	if !b1.closed || d1.closed {
		t.Fatalf("a ninth connection: the oldest idle one (b1) must go: b1 %v d1 %v", b1.closed, d1.closed)
	}
	if len(g.conns) != 8 {
		t.Fatalf("%d connections tracked, want 8", len(g.conns))
	}
	g.track(fs[0], http.StateClosed)
	if len(g.conns) != 7 {
		t.Fatalf("a closed connection is still tracked")
	}
	// An idle connection goes before an older one still waiting for its
	// header: a probe's new connection is not the first to go.
	h := newGovernor(2)
	g = h
	probe := conn("10.0.2.1:1", http.StateNew)
	idle := conn("10.0.2.1:2", http.StateIdle)
	third := conn("10.0.2.1:3", http.StateNew)
	if probe.closed || !idle.closed || third.closed {
		t.Fatalf("closed: probe %v idle %v third %v, want the idle one", probe.closed, idle.closed, third.closed)
	}
}

// TestKeepAliveClientsLeaveHealthz (#56): 300 well-behaved keep-alive
// clients from one address, each with a request every 2 s, do not hold
// /healthz away from a probe: each of 12 probes is answered.
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
	var served atomic.Int32
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
	for i := range 12 {
		resp, err := probe.Get(url + "/healthz")
		if err != nil {
			t.Fatalf("probe %d beside 300 keep-alive clients: %v", i+1, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("probe %d: HTTP %d", i+1, resp.StatusCode)
		}
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
