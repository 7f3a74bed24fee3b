package analyze

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"os"
	"strconv"
	"testing"

	"github.com/seedance/seedance/internal/testkit/synth"
	"github.com/seedance/seedance/profile"
)

// bigProfile returns a synthetic profile of about SEEDANCE_BENCH_MB
// megabytes (default 512), generated once into the temp directory:
// 1,000 nodes × 8 GPUs × n seconds with all 13 metrics.
// SEEDANCE_BENCH_PROFILE names a profile to read instead (a simulator's, say).
func bigProfile(b *testing.B) (string, int64) {
	if path := os.Getenv("SEEDANCE_BENCH_PROFILE"); path != "" {
		st, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		return path, st.Size()
	}
	mb := 512
	if v, err := strconv.Atoi(os.Getenv("SEEDANCE_BENCH_MB")); err == nil && v > 0 {
		mb = v
	}
	path, size, err := synth.BenchProfile(mb)
	if err != nil {
		b.Fatal(err)
	}
	return path, size
}

// BenchmarkAnalyzeStream: the whole analysis of the big profile, streamed.
func BenchmarkAnalyzeStream(b *testing.B) {
	path, size := bigProfile(b)
	benchAnalyze(b, path, size)
}

// benchAnalyze analyzes the file at path b.N times, counting size bytes
// (of JSON) each time.
func benchAnalyze(b *testing.B, path string, size int64) {
	b.SetBytes(size)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, closeFile := openBig(b, path)
		r, err := Analyze(context.Background(), []Source{{Name: path, Stream: s}}, DefaultParams())
		closeFile()
		if err != nil {
			b.Fatal(err)
		}
		if r.Summary.GPUs != 8000 && os.Getenv("SEEDANCE_BENCH_PROFILE") == "" {
			b.Fatalf("%d GPUs", r.Summary.GPUs)
		}
	}
}

// BenchmarkDecodeEncodingJSON: the baseline of issue #3, decoding the same
// file with encoding/json into the profile structs (no analysis at all).
func BenchmarkDecodeEncodingJSON(b *testing.B) {
	path, size := bigProfile(b)
	b.SetBytes(size)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f, _ := os.Open(path)
		var p profile.Profile
		if err := json.NewDecoder(bufio.NewReaderSize(f, 1<<20)).Decode(&p); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}

// gzipped returns the big profile gzip-compressed (default level, as the
// gzip command writes it), made once next to it.
func gzipped(b *testing.B, path string) string {
	gz := path + ".gz"
	if _, err := os.Stat(gz); err == nil {
		return gz
	}
	in, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(gz + ".tmp")
	if err != nil {
		b.Fatal(err)
	}
	zw := gzip.NewWriter(out)
	if _, err := io.Copy(zw, in); err != nil {
		b.Fatal(err)
	}
	zw.Close()
	out.Close()
	if err := os.Rename(gz+".tmp", gz); err != nil {
		b.Fatal(err)
	}
	return gz
}

// BenchmarkAnalyzeStreamGzip: the whole analysis of the big profile read
// from its gzip (throughput counted in uncompressed JSON bytes, as for the
// plain file): inflating runs on its own goroutine, overlapped with
// parsing (issue #11: ≥ 140 MB/s of JSON).
func BenchmarkAnalyzeStreamGzip(b *testing.B) {
	path, size := bigProfile(b)
	benchAnalyze(b, gzipped(b, path), size)
}

// BenchmarkStreamRead: reading the big profile, every GPU's columns
// converted and validated, with no analysis (the reader's own share).
func BenchmarkStreamRead(b *testing.B) {
	path, size := bigProfile(b)
	b.SetBytes(size)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, closeFile := openBig(b, path)
		if err := s.Walk(func(profile.Item) error { return nil }); err != nil {
			b.Fatal(err)
		}
		closeFile()
	}
}

// openBig opens the big profile's stream.
func openBig(b *testing.B, path string) (*profile.Stream, func()) {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	s, err := profile.OpenStream(f, path)
	if err != nil {
		b.Fatal(err)
	}
	return s, func() { _ = f.Close() }
}
