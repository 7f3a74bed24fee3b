package source

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/seedance/seedance/profile"
)

// comings is a one-GPU node on which a process is seen at samples 3–5 and
// 9, and another at every sample.
type comings struct{ i int }

func (*comings) Name() string { return "test" }
func (*comings) Inventory() []profile.Node {
	return []profile.Node{{Name: "n", GPUs: []profile.GPU{{Index: 0, UUID: "GPU-0"}}}}
}
func (c *comings) Sample(context.Context) ([][]Row, [][]profile.Workload) {
	ws := []profile.Workload{{ID: "process/1", Kind: profile.KindProcess, State: profile.StateRunning, GPUs: []int{0}}}
	if c.i >= 3 && c.i <= 5 || c.i == 9 {
		ws = append(ws, profile.Workload{ID: "process/2", Kind: profile.KindProcess, State: profile.StateRunning, GPUs: []int{0}})
	}
	c.i++
	return [][]Row{{NullRow("")}}, [][]profile.Workload{ws}
}
func (*comings) Close() error { return nil }

// TestRecordTenure: the samples that saw a workload are its intervals
// (each sample counting for one interval); one seen at every sample has
// none.
func TestRecordTenure(t *testing.T) {
	clk := &stepClock{t: time.Unix(1767571200, 0)}
	p, err := Record(context.Background(), &comings{}, RecordOptions{Interval: time.Second, Duration: 12 * time.Second, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, w := range p.Nodes[0].Workloads {
		got[w.ID] = fmt.Sprint(w.Intervals)
	}
	if want := map[string]string{"process/1": "[]", "process/2": "[{3 6} {9 10}]"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("tenure %v, want %v", got, want)
	}
	if err := profile.Validate(p); err != nil {
		t.Fatal(err)
	}
}
