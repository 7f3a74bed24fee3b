package profile

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"
)

// workProfile is a profile of 60 s whose pod ns/a has two counters, one
// with a baseline before the start and a null reading.
func workProfile() *Profile {
	p := sharedProfile()
	p.EndedAt = p.StartedAt.Add(60 * time.Second)
	p.Nodes[0].Workloads[0].Work = []Work{
		{Unit: UnitRequests, Model: "llama", Series: `vllm:request_success_total{pod="a"}`, T: Values{-10, 0, 10, 20, 30, 40, 50}, V: Values{5, 7, Null, 9, 2, 4, 6}},
		{Unit: "videos", T: Values{0, 30}, V: Values{0, 1}},
	}
	return p
}

// TestWorkRoundTrips: a v1.2 profile's work counters come back from the
// encoder through both readers (encoding/json and the stream), nulls and
// baseline included.
func TestWorkRoundTrips(t *testing.T) {
	p := workProfile()
	var b bytes.Buffer
	if err := Encode(&b, p); err != nil {
		t.Fatal(err)
	}
	want := p.Nodes[0].Workloads[0].Work
	for name, q := range readBoth(t, b.Bytes()) {
		w := q.Nodes[0].Workloads[0].Work
		if len(w) != 2 || w[0].Series != want[0].Series || w[0].Model != "llama" || !IsNull(w[0].V[2]) || !reflect.DeepEqual(w[1], want[1]) ||
			!reflect.DeepEqual(w[0].T, want[0].T) || w[0].V[6] != 6 {
			t.Errorf("%s: work %+v", name, w)
		}
		if q.Nodes[0].Workloads[1].Work != nil {
			t.Errorf("%s: a workload without counters has %+v", name, q.Nodes[0].Workloads[1].Work)
		}
	}
}

// TestWorkJoined: a join keeps the readings in its window and the one
// before it (a baseline), with times from the join's start; joining the
// two halves of a profile gives each reading once.
func TestWorkJoined(t *testing.T) {
	p := workProfile()
	j := Join([]*Profile{p}, p.StartedAt.Add(20*time.Second), p.EndedAt, false)
	w := j.Nodes[0].Workloads[0].Work
	if len(w) != 2 || !reflect.DeepEqual(w[0].T, Values{-10, 0, 10, 20, 30}) || !IsNull(w[0].V[0]) || !reflect.DeepEqual(w[0].V[1:], Values{9, 2, 4, 6}) {
		t.Errorf("join from 20 s: %+v", w)
	}
	if !reflect.DeepEqual(w[1].T, Values{-20, 10}) {
		t.Errorf("join from 20 s: videos %+v", w[1])
	}
	first := Join([]*Profile{p}, p.StartedAt, p.StartedAt.Add(30*time.Second), false)
	second := Join([]*Profile{p}, p.StartedAt.Add(30*time.Second), p.EndedAt, false)
	all := Join([]*Profile{first, second}, p.StartedAt, p.EndedAt, false)
	got := all.Nodes[0].Workloads[0].Work[0]
	if !reflect.DeepEqual(got.T, Values{-10, 0, 10, 20, 30, 40, 50}) || got.V[4] != 2 || got.V[6] != 6 {
		t.Errorf("the halves joined: %+v", got)
	}
}

// TestWorkRefused: a counter a reader cannot use is an error naming it.
func TestWorkRefused(t *testing.T) {
	cases := map[string]func(w *Work){
		`unit "Tokens"`:                 func(w *Work) { w.Unit = "Tokens" },
		"7 times but 6 readings":        func(w *Work) { w.V = w.V[:6] },
		"t[2] = 0: times are finite":    func(w *Work) { w.T[2] = 0 },
		`unit "": a unit is lower-case`: func(w *Work) { w.Unit = "" },
	}
	for want, spoil := range cases {
		p := workProfile()
		spoil(&p.Nodes[0].Workloads[0].Work[0])
		var b bytes.Buffer
		if err := Encode(&b, p); err != nil {
			t.Fatal(err)
		}
		if _, err := Read(bytes.NewReader(b.Bytes())); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", want, err)
		}
	}
}

// TestWorkJoinedFromAKeptSample: a join that keeps each GPU's last sample
// before its window starts at that sample; the counters' readings move
// with the workloads' tenure, so that each reading keeps its instant
// (a ledger's tail).
func TestWorkJoinedFromAKeptSample(t *testing.T) {
	p := workProfile()
	p.Nodes[0].GPUs[0].Series = Series{T: Values{0, 10, 20, 30, 40, 50}, GPUUtilPct: Values{1, 2, 3, 4, 5, 6}}
	p.Nodes[0].GPUs[0].Usage = nil
	from := p.StartedAt.Add(25 * time.Second)
	j := Join([]*Profile{p}, from, p.EndedAt, true)
	if !j.StartedAt.Equal(p.StartedAt.Add(20 * time.Second)) {
		t.Fatalf("joined from %s, want the kept sample's 20 s", j.StartedAt.Sub(p.StartedAt))
	}
	w := j.Nodes[0].Workloads[0].Work[0]
	for i, x := range w.T {
		if at := j.StartedAt.Add(time.Duration(x * float64(time.Second))).Sub(p.StartedAt).Seconds(); at != []float64{20, 30, 40, 50}[i] {
			t.Errorf("reading %d at %v s of the profile, want %v", i, at, []float64{20, 30, 40, 50}[i])
		}
	}
}

// TestCountersShareTheirTimes (#56): a server's counters read at the same
// times share one times array, as read (shareTimes) and as joined
// (joinWork), and a join that starts at a kept sample moves each shared
// array once; the joined readings are the input's, which a later join's
// appends do not change.
func TestCountersShareTheirTimes(t *testing.T) {
	p := workProfile()
	ts := Values{-10, 0, 10, 20, 30, 40, 50}
	p.Nodes[0].Workloads[0].Work = []Work{
		{Unit: UnitRequests, T: ts, V: Values{5, 7, 8, 9, 10, 11, 12}},
		{Unit: UnitInputTokens, T: append(Values{}, ts...), V: Values{50, 70, 80, 90, 100, 110, 120}},
		{Unit: UnitOutputTokens, T: append(Values{}, ts...), V: Values{1, 2, 3, 4, 5, 6, 7}},
		{Unit: "videos", T: Values{0, 30}, V: Values{0, 1}},
	}
	read := reread(t, p)
	shared := func(ws []Work, i, j int) bool { return len(ws[i].T) > 0 && &ws[i].T[0] == &ws[j].T[0] }
	if ws := read.Nodes[0].Workloads[0].Work; !shared(ws, 0, 1) || !shared(ws, 1, 2) || shared(ws, 2, 3) {
		t.Fatalf("read: the counters' times are not shared where equal")
	}
	read.Nodes[0].GPUs[0].Series = Series{T: Values{0, 10, 20, 30, 40, 50}, GPUUtilPct: Values{1, 2, 3, 4, 5, 6}}
	read.Nodes[0].GPUs[0].Usage = nil
	from := read.StartedAt.Add(25 * time.Second)
	j := Join([]*Profile{read}, from, read.EndedAt, true) // starts at the kept sample at 20 s
	ws := j.Nodes[0].Workloads[0].Work
	if !shared(ws, 0, 1) || !shared(ws, 1, 2) {
		t.Fatalf("joined: the counters' times are not shared")
	}
	for k, w := range ws[:3] {
		for i, x := range w.T { // each reading at its instant: the shared array moved once
			if at := j.StartedAt.Add(time.Duration(x * float64(time.Second))).Sub(read.StartedAt).Seconds(); at != []float64{20, 30, 40, 50}[i] {
				t.Errorf("counter %d, reading %d at %v s of the profile, want %v", k, i, at, []float64{20, 30, 40, 50}[i])
			}
		}
	}
	// The first 35 s joined, then a later profile's reading appended: the
	// input's readings after 35 s stay as they were.
	early := Join([]*Profile{read}, read.StartedAt, read.StartedAt.Add(35*time.Second), false)
	later := workProfile()
	later.StartedAt = early.EndedAt
	later.Nodes[0].Workloads[0].Work = []Work{{Unit: UnitRequests, T: Values{1}, V: Values{99}}}
	Join([]*Profile{early, later}, early.StartedAt, later.EndedAt, false)
	if got := read.Nodes[0].Workloads[0].Work[0].V; !reflect.DeepEqual(got, Values{5, 7, 8, 9, 10, 11, 12}) {
		t.Errorf("a join changed its input's readings: %v", got)
	}
}

// reread is p encoded and read back by the stream.
func reread(t *testing.T, p *Profile) *Profile {
	t.Helper()
	var b bytes.Buffer
	if err := Encode(&b, p); err != nil {
		t.Fatal(err)
	}
	out, err := Read(&b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
