package gpu

import (
	"math"
	"testing"
)

func TestCounterRate(t *testing.T) {
	const sec = int64(1e6)
	tests := []struct {
		name   string
		prev   counter
		value  uint64
		bits   uint
		ts     int64
		unit   float64
		want   float64
		wantOK bool
	}{
		{"first reading", counter{}, 100, 64, sec, 1, 0, false},
		{"steady", counter{true, 1000, sec}, 3000, 64, 3 * sec, 1, 1000, true},
		{"same timestamp", counter{true, 1000, sec}, 3000, 64, sec, 1, 0, false},
		{"clock backwards", counter{true, 1000, 2 * sec}, 3000, 64, sec, 1, 0, false},
		{"KiB unit", counter{true, 10, 0}, 20, 64, sec, 1024, 10240, true},
		{"64-bit wrap", counter{true, math.MaxUint64 - 99, 0}, 400, 64, sec, 1, 500, true},
		{"32-bit wrap", counter{true, math.MaxUint32 - 9, 0}, 90, 32, sec, 1, 100, true},
		{"reset looks like a huge wrap", counter{true, 5e12, 0}, 10, 64, sec, 1, 0, false},
		{"exactly the plausible maximum", counter{true, 0, 0}, uint64(MaxPlausibleRate), 64, sec, 1, MaxPlausibleRate, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.prev
			got, ok := c.Rate(tt.value, tt.bits, tt.ts, tt.unit)
			if ok != tt.wantOK || (ok && got != tt.want) {
				t.Fatalf("Rate = %v, %v; want %v, %v", got, ok, tt.want, tt.wantOK)
			}
			if c.value != tt.value || c.ts != tt.ts || !c.valid {
				t.Fatalf("counter not updated: %+v", c)
			}
		})
	}
}
