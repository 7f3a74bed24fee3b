package report

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/profile"
)

// analyzed is the default analysis of one node with one GPU sampled every
// second at the given utilization (NaN for null), as a Result.
func analyzed(t testing.TB, util []float64) *Result {
	t.Helper()
	start := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	g := profile.GPU{UUID: "a", Model: "NVIDIA H100 80GB HBM3"}
	for i, v := range util {
		g.Series.T = append(g.Series.T, float64(i))
		g.Series.GPUUtilPct = append(g.Series.GPUUtilPct, v)
	}
	p := profile.Profile{SchemaVersion: profile.SchemaVersion, StartedAt: start, IntervalS: 1, Complete: true,
		EndedAt: start.Add(time.Duration(len(util)) * time.Second), Nodes: []profile.Node{{Name: "n1", GPUs: []profile.GPU{g}}}}
	var b bytes.Buffer
	if err := profile.Encode(&b, &p); err != nil {
		t.Fatal(err)
	}
	s, err := profile.OpenStream(&b, "input")
	if err != nil {
		t.Fatal(err)
	}
	r, err := analyze.Analyze(context.Background(), []analyze.Source{{Name: "input", Stream: s}}, analyze.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	return New(r)
}

// fill returns n copies of v.
func fill(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// eval evaluates the gates over r and records their outcomes.
func eval(r *Result, gates ...string) error {
	var err error
	r.Gates, err = Gates(r, gates)
	return err
}
