package analyze

import (
	"bytes"
	"context"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/testkit/cputime"
	"github.com/seedance/seedance/profile"
)

// alternated analyzes the two profiles (docs[0], the baseline, and
// docs[1]) from memory with p, alternated, b.N rounds, each round
// collecting its own garbage (a GC before it, and one inside its timed
// part), check seeing each report; it reports the CPU time of each per
// round, their sums' ratio and the median of the rounds' ratios (which a
// round slowed by the machine moves less).
func alternated(b *testing.B, docs [2][]byte, p Params, check func(i int, r *Report)) {
	var cpu [2]time.Duration
	var ratios []float64
	b.ResetTimer()
	for range b.N {
		var round [2]time.Duration
		for i, doc := range docs {
			runtime.GC()
			t0 := cputime.Process()
			st, err := profile.OpenStream(bytes.NewReader(doc), "sim.json")
			if err != nil {
				b.Fatal(err)
			}
			r, err := Analyze(context.Background(), []Source{{Name: "sim.json", Stream: st}}, p)
			if err != nil {
				b.Fatal(err)
			}
			check(i, r)
			runtime.GC()
			round[i] = cputime.Process() - t0
			cpu[i] += round[i]
		}
		ratios = append(ratios, float64(round[1])/float64(round[0]))
	}
	slices.Sort(ratios)
	b.ReportMetric(cpu[0].Seconds()/float64(b.N), "cpu-s/without")
	b.ReportMetric(cpu[1].Seconds()/float64(b.N), "cpu-s/with")
	b.ReportMetric(float64(cpu[1])/float64(cpu[0]), "ratio")
	b.ReportMetric(ratios[len(ratios)/2], "median-ratio")
}
