// Package testnet holds what tests that start servers on 127.0.0.1 share.
package testnet

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"sync"
	"testing"
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
