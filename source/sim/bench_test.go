package sim

import (
	"testing"
	"time"

	"github.com/seedance/seedance/profile"
)

// BenchmarkSimHour records one simulated hour of an 8-node cluster, the
// simulator's telemetry included (it runs through the same GPU sampler as NVML).
func BenchmarkSimHour8Nodes(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := Record(Options{Nodes: 8, Scenario: ScenarioMixed, Seed: 1}, time.Second, time.Hour, profile.Generator{}); err != nil {
			b.Fatal(err)
		}
	}
}
