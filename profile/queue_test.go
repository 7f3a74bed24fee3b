package profile

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

func queuedProfile() *Profile {
	p := sharedProfile()
	eight, budget := 8.0, 0.0 // a budget of none left is not no budget
	p.Queues = []Queue{{Name: "team-a", Kind: QueueKueue, Cohort: "ml", NominalGPUs: &eight, BudgetGPUMinutes: &budget, Flavors: []string{"h100"},
		BudgetUse: &BudgetUse{UsedGPUMinutes: 120, RunningGPUMinutes: 0},
		Admitted:  []QueueSpan{{Workload: "ns/a", GPUs: 4, StartS: 0, EndS: 30}},
		Pending:   []QueueSpan{{Workload: "ns/c", GPUs: 2, StartS: 10, EndS: 30}}}}
	p.Nodes[0].Workloads[0].Queue = "team-a"
	return p
}

// TestQueuesRoundTrip (#58): a v1.3 profile's queues and a workload's
// queue come back through both readers, and through a join that moves
// its start.
func TestQueuesRoundTrip(t *testing.T) {
	p := queuedProfile()
	var b bytes.Buffer
	if err := Encode(&b, p); err != nil {
		t.Fatal(err)
	}
	for name, q := range readBoth(t, b.Bytes()) {
		if !reflect.DeepEqual(q.Queues, p.Queues) || q.Nodes[0].Workloads[0].Queue != "team-a" {
			t.Errorf("%s: queues %+v, workload %+v", name, q.Queues, q.Nodes[0].Workloads[0])
		}
	}
	s, err := OpenStream(bytes.NewReader(b.Bytes()), "q.json")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s.Header.Queues, p.Queues) {
		t.Errorf("stream header: %+v", s.Header.Queues)
	}
	// A join from 10 s: the spans move 10 s earlier and are cut at 0.
	j := Join([]*Profile{p}, p.StartedAt.Add(10*time.Second), p.EndedAt, false)
	want := []QueueSpan{{Workload: "ns/a", GPUs: 4, StartS: 0, EndS: 20}}
	if got := j.Queues[0].Admitted; !reflect.DeepEqual(got, want) || j.Queues[0].Pending[0].StartS != 0 || j.Queues[0].Pending[0].EndS != 20 {
		t.Errorf("joined: %+v %+v", got, j.Queues[0].Pending)
	}
	if p.Queues[0].Admitted[0].EndS != 30 {
		t.Error("the join changed its input's spans")
	}
}

// TestQueuesRefused: a queue without a name, twice, a negative or NaN
// quota, a span that ends before it starts or holds no GPU is an error
// naming the queue.
func TestQueuesRefused(t *testing.T) {
	neg, nan := -1.0, math.NaN()
	for name, c := range map[string]struct {
		edit func(*Profile)
		want string
	}{
		"no name":       {func(p *Profile) { p.Queues[0].Name = "" }, "a name of 1–253 bytes"},
		"twice":         {func(p *Profile) { p.Queues = append(p.Queues, p.Queues[0]) }, `queue "team-a" appears twice`},
		"negative":      {func(p *Profile) { p.Queues[0].NominalGPUs = &neg }, "a quota of -1 GPUs"},
		"NaN":           {func(p *Profile) { p.Queues[0].LendingLimitGPUs = &nan }, "a quota of NaN GPUs"},
		"budget":        {func(p *Profile) { p.Queues[0].BudgetGPUMinutes = &neg }, "a budget of -1 GPU-minutes"},
		"budget use":    {func(p *Profile) { p.Queues[0].BudgetUse.RunningGPUMinutes = nan }, "a budget use of 120 and NaN GPU-minutes"},
		"backwards":     {func(p *Profile) { p.Queues[0].Admitted[0].EndS = -5 }, `workload "ns/a": a span 0–-5 s`},
		"no GPUs":       {func(p *Profile) { p.Queues[0].Pending[0].GPUs = 0 }, `workload "ns/c": 0 GPUs`},
		"long queue ID": {func(p *Profile) { p.Nodes[0].Workloads[0].Queue = strings.Repeat("q", 300) }, "a queue longer than 253"},
	} {
		p := queuedProfile()
		c.edit(p)
		err := Validate(p)
		if err == nil || !errors.Is(err, ErrInvalid) && !strings.HasPrefix(name, "long") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

// TestMergeQueues: inputs that overlap count a reservation once (one
// workload's spans that overlap or meet are joined), a queue of one input
// only is kept, and the later input's quota wins; a queue whose workloads
// one input did not know stays so.
func TestMergeQueues(t *testing.T) {
	four, six := 4.0, 6.0
	a := []Queue{{Name: "q", Kind: QueueKueue, NominalGPUs: &four, WorkloadsUnknown: true, Admitted: []QueueSpan{{Workload: "w", GPUs: 2, StartS: 0, EndS: 100}, {Workload: "x", GPUs: 1, StartS: 0, EndS: 10}}},
		{Name: "only-a", Kind: QueueKueue}}
	b := []Queue{{Name: "q", Kind: QueueKueue, NominalGPUs: &six, Admitted: []QueueSpan{{Workload: "w", GPUs: 2, StartS: 50, EndS: 150}, {Workload: "w", GPUs: 2, StartS: 150, EndS: 200},
		{Workload: "x", GPUs: 1, StartS: 20, EndS: 30}}}}
	got := MergeQueues(a, b)
	want := []QueueSpan{{Workload: "w", GPUs: 2, StartS: 0, EndS: 200}, {Workload: "x", GPUs: 1, StartS: 0, EndS: 10}, {Workload: "x", GPUs: 1, StartS: 20, EndS: 30}}
	if len(got) != 2 || got[0].Name != "q" || *got[0].NominalGPUs != 6 || !reflect.DeepEqual(got[0].Admitted, want) || got[1].Name != "only-a" || !got[0].WorkloadsUnknown {
		t.Errorf("merged: %+v", got)
	}
	if len(a[0].Admitted) != 2 || *a[0].NominalGPUs != 4 {
		t.Error("the merge changed its input")
	}
}
