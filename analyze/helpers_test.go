package analyze

import (
	"bytes"
	"context"
	"math"
	"testing"
	"time"

	"github.com/seedance/seedance/hwtopo"
	"github.com/seedance/seedance/internal/testkit/golden"
	"github.com/seedance/seedance/profile"
)

var _ = golden.Update

var t0 = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

// gpuSpec describes one GPU of a hand-made profile.
type gpuSpec struct {
	uuid, model string
	t           []float64
	util        []float64 // NaN for null; nil for no column
	power       []float64
	energy      []float64
	membw       []float64
	mem         []float64 // mem_used_bytes
	mig         *profile.MIG
	memTotal    uint64
	usage       []profile.Usage
}

// steps returns 0, 1, …, n−1 plus start.
func steps(start float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = start + float64(i)
	}
	return out
}

// fill returns n copies of v.
func fill(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func cat(parts ...[]float64) []float64 {
	var out []float64
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

type nodeSpec struct {
	name      string
	gpus      []gpuSpec
	workloads []profile.Workload
	labels    map[string]string
	topology  *hwtopo.Topology
}

// mkProfile builds a profile document starting at start.
func mkProfile(t testing.TB, start time.Time, durS, interval float64, nodes ...nodeSpec) []byte {
	t.Helper()
	p := profile.Profile{SchemaVersion: profile.SchemaVersion, StartedAt: start, EndedAt: start.Add(time.Duration(durS * float64(time.Second))), IntervalS: interval, Complete: true}
	for _, n := range nodes {
		pn := profile.Node{Name: n.name, Workloads: n.workloads, Labels: n.labels, Topology: n.topology}
		for i, g := range n.gpus {
			model := g.model
			if model == "" {
				model = "NVIDIA H100 80GB HBM3"
			}
			pg := profile.GPU{Index: i, UUID: g.uuid, Model: model, MIG: g.mig, MemoryTotalBytes: g.memTotal, Usage: g.usage}
			pg.Series.T = g.t
			pg.Series.GPUUtilPct = g.util
			pg.Series.PowerW = g.power
			pg.Series.EnergyJ = g.energy
			pg.Series.MemBWUtilPct = g.membw
			pg.Series.MemUsedBytes = g.mem
			pn.GPUs = append(pn.GPUs, pg)
		}
		p.Nodes = append(p.Nodes, pn)
	}
	var b bytes.Buffer
	if err := profile.Encode(&b, &p); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func analyzeDocs(t testing.TB, p Params, docs ...[]byte) (*Report, error) {
	t.Helper()
	return Analyze(context.Background(), sourcesOf(t, docs...), p)
}

// sourcesOf opens profile documents as the analysis' sources.
func sourcesOf(t testing.TB, docs ...[]byte) []Source {
	t.Helper()
	var srcs []Source
	for i, d := range docs {
		s, err := profile.OpenStream(bytes.NewReader(d), "input"+string(rune('A'+i)))
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, Source{Name: "input" + string(rune('A'+i)), Stream: s})
	}
	return srcs
}

func mustAnalyze(t testing.TB, p Params, docs ...[]byte) *Report {
	t.Helper()
	r, err := analyzeDocs(t, p, docs...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func near(t testing.TB, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-6*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func nodeByName(r *Report, name string) *NodeReport {
	for i := range r.Nodes {
		if r.Nodes[i].Name == name {
			return &r.Nodes[i]
		}
	}
	return nil
}

func secs(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// nearPtr is near for a figure that may be null: it must not be.
func nearPtr(t testing.TB, what string, got *float64, want float64) {
	t.Helper()
	if got == nil {
		t.Errorf("%s = null, want %v", what, want)
		return
	}
	near(t, what, *got, want)
}

func ptr(v float64) *float64 { return &v }
