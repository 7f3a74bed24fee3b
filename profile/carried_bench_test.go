package profile_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source/sim"
)

// BenchmarkCarried (#56): the ledger's carried samples of 100 simulated
// nodes (four minutes, a sample every 30 s: what a five-minute update
// carries) written and read back, as JSON compressed by zstd (before
// schema 13) and in the carried form:
// go test ./profile -run XXX -bench Carried -benchtime 30x -count 3
func BenchmarkCarried(b *testing.B) {
	p, err := sim.Record(sim.Options{Nodes: 100, Scenario: sim.ScenarioMixed, Seed: 1}, 30*time.Second, 4*time.Minute, profile.Generator{Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	for i := range p.Nodes {
		p.Nodes[i].Topology = nil
	}
	b.Run("json-zstd", func(b *testing.B) {
		size := 0
		for range b.N {
			var buf bytes.Buffer
			if err := profile.Write(&buf, p, profile.ZstdFast); err != nil {
				b.Fatal(err)
			}
			size = buf.Len()
			if _, err := profile.Read(&buf); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(size), "bytes")
	})
	b.Run("carried", func(b *testing.B) {
		size := 0
		for range b.N {
			c, err := profile.MarshalCarried(p)
			if err != nil {
				b.Fatal(err)
			}
			size = len(c)
			if _, err := profile.UnmarshalCarried(c); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(size), "bytes")
	})
}
