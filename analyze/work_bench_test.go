package analyze

import (
	"bytes"
	"testing"
	"time"

	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source/sim"
)

// BenchmarkWorkCountersCPU (#57): what reading the serving pods' counters
// of work adds to an attribution analysis (the report with the unit
// figures): two hours of 300 simulated nodes at 30 s, its serving pods'
// request and token counters kept and dropped, the same profile otherwise,
// each encoded as the profile writer writes it and analyzed from memory,
// the two alternated, each round collecting its own garbage (a GC before
// and one inside the timed part); CPU time of the process, with counters
// against without (ratio), and the counters' share of the bytes:
// go test ./analyze -run XXX -bench WorkCountersCPU -benchtime 10x
func BenchmarkWorkCountersCPU(b *testing.B) {
	p, err := sim.Record(sim.Options{Nodes: 300, Scenario: sim.ScenarioMixed, Seed: 1}, 30*time.Second, 2*time.Hour, profile.Generator{Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	var with, without bytes.Buffer
	if err := profile.Encode(&with, p); err != nil {
		b.Fatal(err)
	}
	for ni := range p.Nodes {
		for wi := range p.Nodes[ni].Workloads {
			p.Nodes[ni].Workloads[wi].Work = nil
		}
	}
	if err := profile.Encode(&without, p); err != nil {
		b.Fatal(err)
	}
	ap := DefaultParams()
	ap.Attribution = &AttributionParams{GroupBy: []string{"namespace"}}
	alternated(b, [2][]byte{without.Bytes(), with.Bytes()}, ap, func(i int, r *Report) {
		if (len(r.Units) > 0) != (i == 1) {
			b.Fatalf("input %d: unit figures %v", i, r.Units)
		}
	})
	b.ReportMetric(float64(with.Len()-without.Len())/float64(with.Len()), "counters-share-of-bytes")
}
