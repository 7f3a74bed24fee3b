package profile

import (
	"reflect"
	"testing"
	"time"
)

// TestJoin: two consecutive profiles joined over (from, to]: the samples
// after from, the last one at or before from when asked, columns one
// profile lacks as nulls, tenure cut to [from, to] and meeting where the
// profiles meet, a workload with no tenure left dropped.
func TestJoin(t *testing.T) {
	t0 := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	a := &Profile{StartedAt: t0, EndedAt: t0.Add(60 * time.Second), IntervalS: 15, Complete: true, Nodes: []Node{{Name: "n1",
		GPUs:      []GPU{{UUID: "g0", Series: Series{T: Values{0, 15, 30, 45, 60}, GPUUtilPct: Values{1, 2, 3, 4, 5}}}},
		Workloads: []Workload{{ID: "w1"}, {ID: "w2", Intervals: []Tenure{{StartS: 0, EndS: 10}}}}}}}
	b := &Profile{StartedAt: t0.Add(60 * time.Second), EndedAt: t0.Add(120 * time.Second), IntervalS: 15, Complete: true, Nodes: []Node{{Name: "n1",
		GPUs:      []GPU{{UUID: "g0", Series: Series{T: Values{15, 30, 45, 60}, GPUUtilPct: Values{6, 7, 8, 9}, PowerW: Values{100, 100, 100, 100}}}},
		Workloads: []Workload{{ID: "w1"}}}}}
	j := Join([]*Profile{a, b}, t0.Add(40*time.Second), t0.Add(105*time.Second), true)
	if !j.StartedAt.Equal(t0.Add(30*time.Second)) || !j.EndedAt.Equal(t0.Add(105*time.Second)) {
		t.Fatalf("span %s → %s", j.StartedAt, j.EndedAt)
	}
	g := j.Nodes[0].GPUs[0]
	if !reflect.DeepEqual(g.Series.T, Values{0, 15, 30, 45, 60, 75}) || !reflect.DeepEqual(g.Series.GPUUtilPct, Values{3, 4, 5, 6, 7, 8}) {
		t.Fatalf("series %v %v", g.Series.T, g.Series.GPUUtilPct)
	}
	if p := g.Series.PowerW; len(p) != 6 || !IsNull(p[0]) || !IsNull(p[2]) || p[3] != 100 {
		t.Fatalf("power %v", p)
	}
	if g.IntervalS != 15 {
		t.Fatalf("interval %v", g.IntervalS)
	}
	ws := j.Nodes[0].Workloads
	if len(ws) != 1 || ws[0].ID != "w1" || !reflect.DeepEqual(ws[0].Intervals, []Tenure{{StartS: 10, EndS: 75}}) {
		t.Fatalf("workloads %+v", ws)
	}
	if j2 := Join([]*Profile{a, b}, t0.Add(40*time.Second), t0.Add(105*time.Second), false); j2.Nodes[0].GPUs[0].Series.T[0] != 5 {
		t.Fatalf("without keepLast: %v (start %s)", j2.Nodes[0].GPUs[0].Series.T, j2.StartedAt)
	}
}

// TestJoinKeepsTheLastEnergyReading: with keepLast, the last sample before
// from and, when it has no energy reading, the last one that has.
func TestJoinKeepsTheLastEnergyReading(t *testing.T) {
	t0 := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	e := Null
	a := &Profile{StartedAt: t0, EndedAt: t0.Add(90 * time.Second), IntervalS: 15, Complete: true, Nodes: []Node{{Name: "n1",
		GPUs: []GPU{{UUID: "g0", Series: Series{T: Values{0, 15, 30, 45, 60, 75}, GPUUtilPct: Values{1, 2, 3, 4, 5, 6}, EnergyJ: Values{100, 200, e, e, e, 600}}}}}}}
	j := Join([]*Profile{a}, t0.Add(70*time.Second), t0.Add(90*time.Second), true)
	g := j.Nodes[0].GPUs[0]
	if !reflect.DeepEqual(g.Series.T, Values{0, 45, 60}) || g.Series.EnergyJ[0] != 200 || !IsNull(g.Series.EnergyJ[1]) || g.Series.EnergyJ[2] != 600 {
		t.Fatalf("kept %v %v (start %s)", g.Series.T, g.Series.EnergyJ, j.StartedAt)
	}
}

// TestTrim: a profile trimmed to a time ends there: the samples after it
// dropped (context samples before its start kept), the workloads' tenure
// cut at it, a workload held only after it dropped, a pending one kept.
func TestTrim(t *testing.T) {
	t0 := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	p := &Profile{StartedAt: t0, EndedAt: t0.Add(60 * time.Second), IntervalS: 15, ContextS: 15, Complete: true, Nodes: []Node{{Name: "n1",
		GPUs: []GPU{{UUID: "g0", Series: Series{T: Values{-15, 0, 15, 30, 45, 60}, GPUUtilPct: Values{0, 1, 2, 3, 4, 5}},
			Usage: []Usage{{Workload: "w1", UtilPct: Values{0, 1, 2, 3, 4, 5}}}}},
		Workloads: []Workload{{ID: "w1"}, {ID: "w2", Intervals: []Tenure{{StartS: 40, EndS: 60}}}, {ID: "w3", State: StatePending, Intervals: []Tenure{{StartS: 45, EndS: 60}}}}}}}
	tr := Trim(p, t0.Add(30*time.Second))
	g := tr.Nodes[0].GPUs[0]
	if !tr.EndedAt.Equal(t0.Add(30*time.Second)) || !tr.StartedAt.Equal(t0) || !reflect.DeepEqual(g.Series.T, Values{-15, 0, 15, 30}) ||
		!reflect.DeepEqual(g.Series.GPUUtilPct, Values{0, 1, 2, 3}) || !reflect.DeepEqual(g.Usage[0].UtilPct, Values{0, 1, 2, 3}) {
		t.Fatalf("trimmed: %s → %s, %v %v %v", tr.StartedAt, tr.EndedAt, g.Series.T, g.Series.GPUUtilPct, g.Usage)
	}
	ws := tr.Nodes[0].Workloads
	if len(ws) != 2 || ws[0].ID != "w1" || !reflect.DeepEqual(ws[0].Intervals, []Tenure{{StartS: 0, EndS: 30}}) || ws[1].ID != "w3" || ws[1].Intervals != nil {
		t.Fatalf("workloads %+v", ws)
	}
	if len(p.Nodes[0].GPUs[0].Series.T) != 6 || len(p.Nodes[0].Workloads) != 3 {
		t.Fatal("Trim changed its input")
	}
	if Trim(p, p.EndedAt) != p {
		t.Fatal("a trim at the end copies")
	}
}
