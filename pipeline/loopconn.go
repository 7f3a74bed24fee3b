package pipeline

import (
	"net"
	"net/http"
	"sync"
)

// connGovernor is the loop server's ConnState hook. It bounds the
// connections open at once (max), those of one remote address (perAddr)
// and those that have not sent a whole request header yet (pending). Past
// a bound it closes, among the connections the bound counts, the oldest
// one idle between keep-alive requests, else the oldest still waiting for
// its header, so that a new connection (a probe's) is served: keep-alive
// clients, however many and however well behaved, and clients that drip a
// header cannot starve /healthz (docs/rules.md, Loop mode). Only when
// every one is inside a request is the new one closed; each request is
// bounded by limits.http_timeout.
type connGovernor struct {
	mu                    sync.Mutex
	max, perAddr, pending int
	conns                 []*govConn // oldest first
}

type govConn struct {
	c     net.Conn
	addr  string
	state http.ConnState
}

// newGovernor caps at 4 × n connections in all, n per remote address and
// n waiting for a header (n is limits.http_connections).
func newGovernor(n int) *connGovernor {
	return &connGovernor{max: 4 * n, perAddr: n, pending: n}
}

// track is the server's ConnState hook.
func (g *connGovernor) track(c net.Conn, s http.ConnState) {
	g.mu.Lock()
	defer g.mu.Unlock()
	i := g.index(c)
	switch {
	case s == http.StateNew:
		g.conns = append(g.conns, &govConn{c: c, addr: remoteHost(c), state: s})
		g.enforce(remoteHost(c))
	case i < 0:
	case s == http.StateClosed || s == http.StateHijacked:
		g.drop(i)
	default:
		g.conns[i].state = s
	}
}

// enforce closes connections until every bound holds again.
func (g *connGovernor) enforce(addr string) {
	pending := func(gc *govConn) bool { return gc.state == http.StateNew }
	sameAddr := func(gc *govConn) bool { return gc.addr == addr }
	for g.count(pending) > g.pending && g.evict(pending) {
	}
	for g.count(sameAddr) > g.perAddr && g.evict(sameAddr) {
	}
	for len(g.conns) > g.max && g.evict(func(*govConn) bool { return true }) {
	}
}

func (g *connGovernor) count(match func(*govConn) bool) int {
	n := 0
	for _, gc := range g.conns {
		if match(gc) {
			n++
		}
	}
	return n
}

// evict closes the oldest matching connection that is idle between
// keep-alive requests, else the oldest still waiting for its header (a
// new one has had no time to send it: under a storm of new connections a
// probe's is not the first to go); false when every matching one is
// inside a request.
func (g *connGovernor) evict(match func(*govConn) bool) bool {
	for _, state := range []http.ConnState{http.StateIdle, http.StateNew} {
		for i, gc := range g.conns {
			if match(gc) && gc.state == state {
				_ = gc.c.Close() // its server goroutine sees the close and ends
				g.drop(i)
				return true
			}
		}
	}
	return false
}

func (g *connGovernor) index(c net.Conn) int {
	for i, gc := range g.conns {
		if gc.c == c {
			return i
		}
	}
	return -1
}

func (g *connGovernor) drop(i int) { g.conns = append(g.conns[:i], g.conns[i+1:]...) }

// remoteHost is a connection's remote address without its port.
func remoteHost(c net.Conn) string {
	a := c.RemoteAddr()
	if a == nil {
		return ""
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}
