package pipeline

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// connGovernor is the loop server's ConnState hook. It bounds the
// connections open at once (max), those of one remote address (perAddr)
// and those that have not sent a whole request header yet (pending). Past
// a bound it closes, among the connections the bound counts, the oldest
// one idle between keep-alive requests, else the oldest that has waited
// for its header longer than headerGrace, so that a new connection (a
// probe's) is served: keep-alive clients, however many and however well
// behaved, and clients that drip a header cannot starve /healthz
// (docs/rules.md, Loop mode). A connection younger than headerGrace is
// not closed for a bound: in a burst of new connections (keep-alive
// clients whose idle connections were closed, all dialling again) the
// server has not read a probe's header yet, though the probe sent it at
// once. Only past hardMax connections in all is the new one closed; each
// request is bounded by limits.http_timeout.
type connGovernor struct {
	mu                             sync.Mutex
	max, perAddr, pending, hardMax int
	now                            func() time.Time
	conns                          []*govConn // oldest first
}

type govConn struct {
	c     net.Conn
	addr  string
	state http.ConnState
	since time.Time // when it was accepted
}

// headerGrace is how long a new connection is left to send its header
// before a bound may close it.
const headerGrace = 2 * time.Second

// newGovernor caps at 4 × n connections in all, n per remote address and
// n waiting for a header longer than headerGrace (n is
// limits.http_connections); 16 × n in all, the newest ones included.
func newGovernor(n int) *connGovernor {
	return &connGovernor{max: 4 * n, perAddr: n, pending: n, hardMax: 16 * n, now: time.Now}
}

// track is the server's ConnState hook.
func (g *connGovernor) track(c net.Conn, s http.ConnState) {
	g.mu.Lock()
	defer g.mu.Unlock()
	i := g.index(c)
	switch {
	case s == http.StateNew:
		g.conns = append(g.conns, &govConn{c: c, addr: remoteHost(c), state: s, since: g.now()})
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
	if len(g.conns) > g.hardMax { // a flood: the new one goes
		_ = g.conns[len(g.conns)-1].c.Close()
		g.drop(len(g.conns) - 1)
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
// keep-alive requests, else the oldest that has waited for its header
// longer than headerGrace; false when every matching one is inside a
// request or younger.
func (g *connGovernor) evict(match func(*govConn) bool) bool {
	stale := g.now().Add(-headerGrace)
	idle := func(gc *govConn) bool { return gc.state == http.StateIdle }
	waited := func(gc *govConn) bool { return gc.state == http.StateNew && gc.since.Before(stale) }
	for _, ok := range []func(*govConn) bool{idle, waited} {
		for i, gc := range g.conns {
			if match(gc) && ok(gc) {
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
