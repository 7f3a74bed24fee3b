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

// TestZstdInputs: a zstd input cut short is refused in a line; one that
// expands far more than a profile can (a decompression bomb) is refused
// early; one whose frame asks for a window of gigabytes is refused
// without the memory being taken; bytes that are not zstd after its magic
// are refused in a line.
func TestZstdInputs(t *testing.T) {
	var z bytes.Buffer
	if err := compressed(&z, Zstd, func(w io.Writer) error { _, err := io.WriteString(w, minimalProfile); return err }); err != nil {
		t.Fatal(err)
	}
	whole := z.Bytes()
	if _, err := Read(bytes.NewReader(whole)); err != nil {
		t.Fatalf("whole: %v", err)
	}
	for _, cut := range []int{4, 1, len(whole) / 2} {
		_, err := Read(bytes.NewReader(whole[:len(whole)-cut]))
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "zstd input") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%d bytes cut: %v", cut, err)
		}
	}
	var bomb bytes.Buffer
	err := compressed(&bomb, Zstd, func(w io.Writer) error {
		_, err := io.Copy(w, io.LimitReader(spaces{}, 1<<30))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Read(bytes.NewReader(bomb.Bytes()))
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "zstd input expands") {
		t.Errorf("a bomb of %d KiB: %v", bomb.Len()>>10, err)
	}
	// A frame header: magic, descriptor (no single segment, window
	// descriptor follows), window descriptor 0xF8 (exponent 31: 2 TiB).
	huge := append(append([]byte{}, zstdMagic...), 0x00, 0xf8, 0, 0, 0)
	if _, err := Read(bytes.NewReader(huge)); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "zstd input") {
		t.Errorf("a 2 TiB window: %v", err)
	}
	junk := append(append([]byte{}, zstdMagic...), []byte("not a frame at all, only words")...)
	if _, err := Read(bytes.NewReader(junk)); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "zstd input") {
		t.Errorf("junk after the magic: %v", err)
	}
}

// spaces is endless white space.
type spaces struct{}

func (spaces) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
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
