package profile

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

func sharedProfile() *Profile {
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	g := GPU{Index: 0, UUID: "GPU-0", Series: Series{T: Values{0, 10, 20}, GPUUtilPct: Values{50, 20, 0}},
		Usage: []Usage{{Workload: "ns/a", UtilPct: Values{40, Null, 0}}, {Workload: "ns/b", UtilPct: Values{10, 20, 0}}}}
	ws := []Workload{
		{ID: "ns/a", Kind: KindPod, State: StateRunning, GPUs: []int{0}, Sharing: &Sharing{Mode: ShareFractional, CoresPct: 30, MemoryBytes: 10 << 30}},
		{ID: "ns/b", Kind: KindPod, State: StateRunning, GPUs: []int{0}, Sharing: &Sharing{Mode: ShareTimeSlicing, Milli: 250}},
	}
	return &Profile{SchemaVersion: SchemaVersion, StartedAt: t0, EndedAt: t0.Add(30 * time.Second), IntervalS: 10, Complete: true,
		Nodes: []Node{{Name: "n", GPUs: []GPU{g}, Workloads: ws}}}
}

// TestSharingRoundTrips: a v1.1 profile's sharing and usage come back
// from the encoder through both readers (encoding/json and the stream),
// and through a join.
func TestSharingRoundTrips(t *testing.T) {
	p := sharedProfile()
	var b bytes.Buffer
	if err := Encode(&b, p); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"schema_version":"`+SchemaVersion+`"`) {
		t.Errorf("not %s: %.80s", SchemaVersion, b.String())
	}
	for name, q := range readBoth(t, b.Bytes()) {
		if !reflect.DeepEqual(q.Nodes[0].Workloads, p.Nodes[0].Workloads) {
			t.Errorf("%s: workloads %+v", name, q.Nodes[0].Workloads)
		}
		if u := q.Nodes[0].GPUs[0].Usage; len(u) != 2 || u[0].Workload != "ns/a" || !IsNull(u[0].UtilPct[1]) || u[1].UtilPct[1] != 20 {
			t.Errorf("%s: usage %+v", name, u)
		}
	}
	j := Join([]*Profile{p}, p.StartedAt.Add(10*time.Second), p.EndedAt, false)
	if u := j.Nodes[0].GPUs[0].Usage; len(u) != 2 || len(u[0].UtilPct) != 2 || u[1].UtilPct[0] != 20 {
		t.Errorf("join: usage %+v", u)
	}
}

// TestSharingRefused: a usage column or request a GPU cannot have is an
// error naming it.
func TestSharingRefused(t *testing.T) {
	cases := map[string]func(p *Profile){
		"usage[0].util_pct has 2 values":          func(p *Profile) { p.Nodes[0].GPUs[0].Usage[0].UtilPct = Values{1, 2} },
		"usage[0].util_pct[0] = 101":              func(p *Profile) { p.Nodes[0].GPUs[0].Usage[0].UtilPct[0] = 101 },
		`usage[1]: workload "ns/a" appears twice`: func(p *Profile) { p.Nodes[0].GPUs[0].Usage[1].Workload = "ns/a" },
		"sharing.gpu_milli 1001":                  func(p *Profile) { p.Nodes[0].Workloads[1].Sharing.Milli = 1001 },
		"sharing.cores_pct 120":                   func(p *Profile) { p.Nodes[0].Workloads[0].Sharing.CoresPct = 120 },
		`sharing.mode "vgpu"`:                     func(p *Profile) { p.Nodes[0].Workloads[0].Sharing.Mode = "vgpu" },
	}
	for want, spoil := range cases {
		p := sharedProfile()
		spoil(p)
		var b bytes.Buffer
		if err := Encode(&b, p); err != nil {
			t.Fatal(err)
		}
		if _, err := Read(bytes.NewReader(b.Bytes())); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", want, err)
		}
	}
}

// readBoth reads an encoded profile with the stream and with
// encoding/json, by reader.
func readBoth(t *testing.T, doc []byte) map[string]*Profile {
	t.Helper()
	got, err := Read(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	var viaJSON Profile
	if err := json.Unmarshal(doc, &viaJSON); err != nil {
		t.Fatal(err)
	}
	return map[string]*Profile{"stream": got, "encoding/json": &viaJSON}
}
