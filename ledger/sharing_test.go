package ledger

import (
	"context"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/seedance/seedance/profile"
)

// TestSharedGPUAcrossUpdates: a GPU two workloads of two namespaces hold,
// each with its measured use (profile.Usage) changing over time, counted
// in four updates that each read the ten minutes before the last one's
// end again: the ledger splits it as one analysis does. An update drops
// the samples the ledger holds already from the series and from their
// usage alike (the usage's columns, left whole, were read samples off).
func TestSharedGPUAcrossUpdates(t *testing.T) {
	p := cluster(t)
	n := &p.Nodes[0]
	g := &n.GPUs[0]
	var holder *profile.Workload
	for i := range n.Workloads {
		for _, gi := range n.Workloads[i].GPUs {
			if gi == g.Index && holder == nil {
				holder = &n.Workloads[i]
			}
		}
	}
	if holder == nil {
		t.Fatal("no workload holds the GPU")
	}
	other := *holder
	other.ID, other.Name, other.GPUs, other.GPUUUIDs, other.Intervals = holder.ID+"-b", holder.Name+"-b", []int{g.Index}, nil, nil
	other.Labels = map[string]string{"namespace": "shared-b"}
	for k, v := range holder.Labels {
		if k != "namespace" {
			other.Labels[k] = v
		}
	}
	holder.Intervals = nil
	n.Workloads = append(n.Workloads, other)
	a, b := make(profile.Values, len(g.Series.T)), make(profile.Values, len(g.Series.T))
	for i := range a {
		a[i] = 80 * float64(i) / float64(len(a)) // a ramp: a sample off splits otherwise
		b[i] = 80 - a[i]
		g.Series.GPUUtilPct[i] = math.Min(100, a[i]+b[i])
	}
	g.Usage = []profile.Usage{{Workload: holder.ID, UtilPct: a}, {Workload: other.ID, UtilPct: b}}
	want := oneAnalysis(t, p, []string{"namespace"})
	l := openDSN(t, filepath.Join(t.TempDir(), "ledger.db"))
	from := p.StartedAt.Add(-time.Millisecond)
	for k := 1; k <= 4; k++ { // four updates, each reading ten minutes before where the last one ended
		to := p.StartedAt.Add(time.Duration(k) * p.EndedAt.Sub(p.StartedAt) / 4)
		in := profile.Join([]*profile.Profile{p}, from, to, false)
		if _, err := l.Update(context.Background(), UpdateSpec{Inputs: []*profile.Profile{in}, Params: params()}); err != nil {
			t.Fatal(err)
		}
		from = to.Add(-10 * time.Minute)
	}
	got, err := l.Report(context.Background(), Query{GroupBy: []string{"namespace"}, EnergyUSDPerKWh: 0.12})
	if err != nil {
		t.Fatal(err)
	}
	sameFigures(t, got, want)
}
