package profile

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// windowProfile is a profile of a 20-minute window whose GPU's samples
// run from first for n samples, 30 s apart.
func windowProfile(first float64, n int, contextS float64) *Profile {
	t0 := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	s := Series{T: make(Values, n)}
	for i := range s.T {
		s.T[i] = first + float64(30*i)
	}
	return &Profile{SchemaVersion: SchemaVersion, StartedAt: t0, EndedAt: t0.Add(20 * time.Minute), IntervalS: 30, ContextS: contextS,
		Nodes: []Node{{Name: "n1", GPUs: []GPU{{Index: 0, UUID: "GPU-a", Series: s}}}}}
}

// TestSamplesOutsideTheWindow: a sample outside the profile's window by
// more than its context_s is an error that names the place (a 1,200 s
// window with samples over 2,400 s was counted before); within the
// context it is read, streamed or whole.
func TestSamplesOutsideTheWindow(t *testing.T) {
	for _, c := range []struct {
		p    *Profile
		want string // "" for valid
	}{
		{windowProfile(0, 40, 0), ""},
		{windowProfile(0, 80, 0), `node "n1" gpus[0]: series.t[79] = 2370 s lies 1170 s after the window's end (1200 s), more than its context (context_s 0)`},
		{windowProfile(-60, 44, 0), "series.t[0] = -60 s lies 60 s before the window"},
		{windowProfile(-60, 44, 60), ""},
		{windowProfile(-60, 46, 60), "after the window's end"},
	} {
		var b bytes.Buffer
		if err := Encode(&b, c.p); err != nil {
			t.Fatal(err)
		}
		for _, how := range []string{"whole", "stream"} {
			var err error
			if how == "whole" {
				_, err = Read(bytes.NewReader(b.Bytes()))
			} else if s, oerr := OpenStream(bytes.NewReader(b.Bytes()), "p"); oerr != nil {
				err = oerr
			} else {
				err = s.Walk(func(Item) error { return nil })
			}
			switch {
			case c.want == "" && err != nil:
				t.Errorf("%s: %v", how, err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("%s: %v, want %q", how, err, c.want)
			}
		}
	}
}

// TestTwoGPUsOfOneIndex: two GPUs of a node with one index are an error;
// a MIG device carries its parent's index.
func TestTwoGPUsOfOneIndex(t *testing.T) {
	p := windowProfile(0, 10, 0)
	g := p.Nodes[0].GPUs[0]
	g.UUID = "GPU-b"
	p.Nodes[0].GPUs = append(p.Nodes[0].GPUs, g)
	if err := Validate(p); err == nil || !strings.Contains(err.Error(), `gpus[1]: index 0: a second GPU with the index (uuid "GPU-b")`) {
		t.Errorf("two GPUs of index 0: %v", err)
	}
	p.Nodes[0].GPUs[1].UUID = "MIG-b"
	p.Nodes[0].GPUs[1].MIG = &MIG{ParentUUID: "GPU-a", Profile: "1g.10gb"}
	if err := Validate(p); err != nil {
		t.Errorf("a MIG device of GPU 0: %v", err)
	}
}
