package jsonscan

import (
	"bytes"
	"strings"
	"testing"
)

// benchColumn is a column of the shapes a simulator profile holds: small
// integers, byte counts, rates with one decimal, watts with three, nulls,
// in an order with no period.
func benchColumn() []byte {
	shapes := []string{"5", "92", "4.4", "80.8", "77120667648", "2286386753.1", "263965446246.4", "600.586", "42696715.349", "1980", "null", "0"}
	var sb strings.Builder
	sb.WriteByte('[')
	x := uint32(1)
	for i := 0; i < 100000; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		x = x*1664525 + 1013904223 // a fixed pseudo-random order: no pattern for the branch predictor
		sb.WriteString(shapes[x>>16%uint32(len(shapes))])
	}
	sb.WriteString("]  ")
	return []byte(sb.String())
}

// BenchmarkColumn: the fused number path over mixed shapes (go test
// ./internal/jsonscan -bench Column; bytes per second of JSON).
func BenchmarkColumn(b *testing.B) {
	data := benchColumn()
	b.SetBytes(int64(len(data)))
	var dst []float64
	for i := 0; i < b.N; i++ {
		s := New(bytes.NewReader(data))
		var err error
		if dst, err = s.Column(dst, 1<<20); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPlainLoop: the bound, one pass over the same bytes summing
// the digit runs (no grammar, no floats).
func BenchmarkPlainLoop(b *testing.B) {
	data := benchColumn()
	b.SetBytes(int64(len(data)))
	var sum, n uint64
	for i := 0; i < b.N; i++ {
		var cur uint64
		for _, c := range data {
			if c >= '0' && c <= '9' {
				cur = cur*10 + uint64(c-'0')
			} else if cur != 0 {
				sum += cur
				n++
				cur = 0
			}
		}
	}
	_ = sum + n
}
