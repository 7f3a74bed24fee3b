// Package testnet holds what tests that start servers on 127.0.0.1 share.
package testnet

import (
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var (
	mu    sync.Mutex
	given = map[int]bool{}
)

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago and
// that this process has not handed out before. It is drawn at random
// below the kernel's ephemeral range, so that the outgoing connections of
// the servers a test starts (which take ephemeral ports) cannot take it
// between this call and the server's bind; where that range leaves no
// room it falls back to a port the kernel picks.
func FreePort(t testing.TB) int {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	lo := ephemeralLow()
	for range 200 {
		p := 10000 + rand.IntN(max(lo-10000, 1))
		if lo <= 11000 {
			p = 0
		}
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			continue
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if !given[port] {
			given[port] = true
			return port
		}
	}
	t.Fatal("no free TCP port on 127.0.0.1 after 200 tries")
	return 0
}

// ephemeralLow is the first port of the kernel's ephemeral range, 32768
// where it cannot be read.
func ephemeralLow() int {
	lo := 32768
	if data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		var hi int
		if _, err := fmt.Sscan(string(data), &lo, &hi); err != nil {
			lo = 32768
		}
	}
	return lo
}

// ConnServer is an httptest server that counts the connections its
// clients hold open (idle keep-alive ones included).
type ConnServer struct {
	*httptest.Server
	open atomic.Int64
}

// CountConns starts a server for h that counts open connections.
func CountConns(t testing.TB, h http.Handler) *ConnServer {
	t.Helper()
	return countConns(t, h, (*httptest.Server).Start)
}

// CountConnsTLS is CountConns over TLS (the server's certificate is
// Certificate()).
func CountConnsTLS(t testing.TB, h http.Handler) *ConnServer {
	t.Helper()
	return countConns(t, h, (*httptest.Server).StartTLS)
}

func countConns(t testing.TB, h http.Handler, start func(*httptest.Server)) *ConnServer {
	s := &ConnServer{Server: httptest.NewUnstartedServer(h)}
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			s.open.Add(1)
		case http.StateClosed, http.StateHijacked:
			s.open.Add(-1)
		}
	}
	start(s.Server)
	t.Cleanup(s.Close)
	return s
}

// Open is how many connections the clients hold open now.
func (s *ConnServer) Open() int64 { return s.open.Load() }

// WaitAllClosed waits (a bounded poll: closing is asynchronous on the
// server's side) until the clients hold no connection open, and fails the
// test with how many they still hold after within.
func (s *ConnServer) WaitAllClosed(t testing.TB, what string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for s.open.Load() > 0 {
		if time.Now().After(deadline) {
			t.Errorf("%s: %d connection(s) still open %v after it returned: each run leaks them (a server's connection limit, Prometheus's 512, then stalls every later run)", what, s.open.Load(), within)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
