package analyze

import (
	"bufio"
	"encoding/json"
	"os"
	"strconv"
	"testing"

	"github.com/seedance/seedance/internal/synth"
	"github.com/seedance/seedance/profile"
)

// bigProfile returns a synthetic profile of about SEEDANCE_BENCH_MB
// megabytes (default 512), generated once into the temp directory:
// 1,000 nodes × 8 GPUs × n seconds with all 13 metrics.
func bigProfile(b *testing.B) (string, int64) {
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
	b.SetBytes(size)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f, _ := os.Open(path)
		s, err := profile.OpenStream(f, path)
		if err != nil {
			b.Fatal(err)
		}
		r, err := Analyze([]Source{{Name: path, Stream: s}}, DefaultParams())
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
		if r.Summary.GPUs != 8000 {
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
