package source

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/profile"
)

func TestLookupUnknown(t *testing.T) {
	Register(Registration{Name: "test-a"})
	Register(Registration{Name: "test-b"})
	if r, err := Lookup("test-b"); err != nil || r.Name != "test-b" {
		t.Fatalf("lookup: %+v %v", r, err)
	}
	_, err := Lookup("nope")
	if !errors.Is(err, ErrSettings) || !strings.HasSuffix(err.Error(), `unknown --source "nope" (choose test-a or test-b)`) {
		t.Fatalf("err = %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("a second registration of one name was accepted")
		}
	}()
	Register(Registration{Name: "test-a"})
}

// oneNode is a Source of one node with one GPU, for Sampled.
type oneNode struct{}

func (oneNode) Name() string { return "test" }
func (oneNode) Inventory() []profile.Node {
	return []profile.Node{{Name: "n", GPUs: []profile.GPU{{Index: 0, UUID: "GPU-0"}}}}
}
func (oneNode) Sample(context.Context) ([][]Row, [][]profile.Workload) {
	return [][]Row{{NullRow("")}}, [][]profile.Workload{nil}
}
func (oneNode) Close() error { return nil }

// TestSampledDefaultDuration: a run given no duration stops after the
// source's default; one wrapping a command (a Job) does not take it.
func TestSampledDefaultDuration(t *testing.T) {
	clk := &stepClock{t: time.Unix(1767571200, 0)}
	s := Sampled{Source: oneNode{}, Clock: clk, DefaultDuration: 3 * time.Second}
	if n, g := s.Size(); n != 1 || g != 1 {
		t.Fatalf("size %d %d", n, g)
	}
	p, err := s.Profile(context.Background(), RecordOptions{Interval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(p.Nodes[0].GPUs[0].Series.T); got != 3 {
		t.Fatalf("%d samples, want 3", got)
	}
}

// stepClock jumps to the time waited for.
type stepClock struct{ t time.Time }

func (c *stepClock) Now() time.Time { return c.t }
func (c *stepClock) WaitUntil(ctx context.Context, t time.Time) error {
	if t.After(c.t) {
		c.t = t
	}
	return ctx.Err()
}
