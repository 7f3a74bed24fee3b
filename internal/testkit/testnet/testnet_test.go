package testnet

import (
	"fmt"
	"net"
	"testing"
)

func TestFreePortIsFreshBindableAndOutsideTheEphemeralRange(t *testing.T) {
	lo := ephemeralLow()
	seen := map[int]bool{}
	for range 50 {
		p := FreePort(t)
		if seen[p] {
			t.Fatalf("port %d handed out twice", p)
		}
		seen[p] = true
		if lo > 11000 && (p < 10000 || p >= lo) {
			t.Fatalf("port %d is not in [10000, %d)", p, lo)
		}
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			t.Fatal(err)
		}
		l.Close()
	}
}
