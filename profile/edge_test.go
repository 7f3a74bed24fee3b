package profile

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// TestTruncatedGzipRefused (#25, case 7): a gzip input cut before its
// trailer (or inside it) cannot be checked against its CRC: it is refused,
// not read as a whole profile.
func TestTruncatedGzipRefused(t *testing.T) {
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	if _, err := zw.Write([]byte(minimalProfile)); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	whole := z.Bytes()
	if _, err := Read(bytes.NewReader(whole)); err != nil {
		t.Fatalf("whole: %v", err)
	}
	for _, cut := range []int{8, 4, 1} {
		_, err := Read(bytes.NewReader(whole[:len(whole)-cut]))
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "gzip input ends early") {
			t.Errorf("%d trailer bytes cut: %v", cut, err)
		}
	}
}

// TestLongSeriesAccepted (#25, case 7): 5 M samples on one GPU (58 days at
// 1 Hz, a plausible long run) are read; what bounds the work is the
// input's size.
func TestLongSeriesAccepted(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 5 M samples (about 60 MB of JSON)")
	}
	const n = 5_000_000
	pr, pw := io.Pipe()
	go func() {
		bw := bufio.NewWriterSize(pw, 1<<16)
		start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
		fmt.Fprintf(bw, `{"schema_version":"seedance.profile/v1","started_at":%q,"ended_at":%q,"interval_s":1,"nodes":[{"name":"n1","gpus":[{"index":0,"uuid":"GPU-1","series":{"t":[`,
			start.Format(time.RFC3339), start.Add(n*time.Second).Format(time.RFC3339))
		for i := 0; i < n; i++ {
			if i > 0 {
				_ = bw.WriteByte(',')
			}
			fmt.Fprint(bw, i)
		}
		_, _ = bw.WriteString(`],"gpu_util_pct":[`)
		for i := 0; i < n; i++ {
			if i > 0 {
				_ = bw.WriteByte(',')
			}
			_ = bw.WriteByte('0' + byte(i%10))
		}
		_, _ = bw.WriteString(`]}}]}]}`)
		_ = bw.Flush()
		_ = pw.Close()
	}()
	s, err := OpenStream(pr, "long")
	if err != nil {
		t.Fatal(err)
	}
	samples := 0
	if err := s.Walk(func(it Item) error {
		if it.GPU != nil {
			samples += it.GPU.Series.Len()
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if samples != n {
		t.Fatalf("%d samples, want %d", samples, n)
	}
}
