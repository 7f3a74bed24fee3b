package profile

import (
	"bytes"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// carriedProfile has every kind of column the carried form keeps, and the
// metadata around them: GPUs sharing their node's times and one that does
// not, a MIG device, a null and an absent column, a GPU with no samples,
// usage, counters sharing their workload's times and one that does not,
// tenure, sharing, labels, an unscheduled workload with counters, queues
// and notes; and pointers to zero values (NUMA node 0, a sharing that
// asked for nothing, a nominal quota of 0), which gob alone loses.
func carriedProfile() *Profile {
	t0 := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	times := func() Values { return Values{0, 10, 20} }
	gpu := func(i int, uuid string) GPU {
		return GPU{Index: i, UUID: uuid, Model: "NVIDIA H100 80GB HBM3", MemoryTotalBytes: 80 << 30,
			Series: Series{T: times(), GPUUtilPct: Values{5, Null, 90}, PowerW: Values{100, 200.5, 650}, EnergyJ: Values{1e6, 1.000002e6, 1.000009e6}}}
	}
	a := []GPU{gpu(0, "GPU-a0"), gpu(1, "GPU-a1"), gpu(2, "GPU-a2"), gpu(3, "GPU-a3")}
	a[2].Series.T = Values{1, 11, 21}
	a[2].Usage = []Usage{{Workload: "ns/a", UtilPct: Values{40, Null, 0}}, {Workload: "ns/b", UtilPct: Values{10, 20, 0}}}
	a[3].MIG = &MIG{ParentUUID: "GPU-a0", Profile: "3g.40gb", GI: 1, CI: 0}
	zero := 0
	a[3].NUMANode = &zero
	work := []Work{
		{Unit: UnitRequests, Model: "llama", Series: `vllm:request_success_total{pod="a"}`, T: times(), V: Values{100, 130, 170}},
		{Unit: UnitOutputTokens, Model: "llama", T: times(), V: Values{5e6, 5.1e6, 5.25e6}},
		{Unit: "videos", T: Values{5, 15}, V: Values{1, 2}},
	}
	ws := []Workload{
		{ID: "ns/a", Name: "a", Kind: KindPod, State: StateRunning, GPUs: []int{2}, Labels: map[string]string{"team": "x", "app": "srv"},
			Sharing: &Sharing{Mode: ShareFractional, CoresPct: 30}, Work: work, Queue: "cq-a", Intervals: []Tenure{{0, 12}, {15, 30}}},
		{ID: "ns/b", Kind: KindPod, State: StateRunning, GPUs: []int{2}, Sharing: &Sharing{Mode: ShareTimeSlicing, Milli: 250}},
		{ID: "ns/c", Kind: KindPod, State: StateRunning, GPUs: []int{0}, Sharing: &Sharing{}},
	}
	none, two := 0.0, 2.0
	return &Profile{SchemaVersion: SchemaVersion, Generator: Generator{Name: "test"}, Source: SourceSim, Cluster: "c1",
		StartedAt: t0, EndedAt: t0.Add(30 * time.Second), IntervalS: 10, ContextS: 20, Complete: true,
		Unscheduled: []Workload{{ID: "ns/q", Kind: KindPod, State: StatePending, GPUCount: 2, Work: []Work{{Unit: UnitRequests, T: Values{0}, V: Values{3}}}}},
		Notes:       []string{"a note"},
		Queues: []Queue{{Name: "cq-a", Kind: QueueKueue, Cohort: "all", NominalGPUs: &none, LendingLimitGPUs: &two, Flavors: []string{"h100"}, BudgetUse: &BudgetUse{},
			Admitted: []QueueSpan{{Workload: "ns/a", GPUs: 1, StartS: 0, EndS: 30}}}},
		Nodes: []Node{
			{Name: "a", Labels: map[string]string{"pool": "h100"}, GPUs: a, Workloads: ws},
			{Name: "b", GPUs: []GPU{{Index: 0, UUID: "GPU-b0", Series: Series{T: Values{}, MemBWUtilPct: Values{}}}}},
		}}
}

// TestCarriedRoundTrips: a profile comes back from the carried form as it
// went in, byte for byte in JSON, its times shared as Read shares them,
// and writing it changes nothing of it.
func TestCarriedRoundTrips(t *testing.T) {
	p := carriedProfile()
	before := encoded(t, p)
	b, err := MarshalCarried(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := encoded(t, p); !bytes.Equal(got, before) {
		t.Fatalf("writing the carried form changed the profile:\n%s\n%s", before, got)
	}
	q, err := UnmarshalCarried(b)
	if err != nil {
		t.Fatal(err)
	}
	if got := encoded(t, q); !bytes.Equal(got, before) {
		t.Fatalf("the carried form read back differs:\n%s\n%s", before, got)
	}
	g := q.Nodes[0].GPUs
	same := func(x, y Values) bool { return len(x) > 0 && len(y) > 0 && &x[0] == &y[0] }
	if !same(g[0].Series.T, g[1].Series.T) || same(g[1].Series.T, g[2].Series.T) || same(g[2].Series.T, g[3].Series.T) {
		t.Error("a node's GPUs do not share their times as Read shares them")
	}
	w := q.Nodes[0].Workloads[0].Work
	if !same(w[0].T, w[1].T) || same(w[1].T, w[2].T) {
		t.Error("a workload's counters do not share their times")
	}
	if same(g[1].Series.T, w[0].T) {
		t.Error("a counter shares a GPU's times")
	}
	if s := q.Nodes[1].GPUs[0].Series; s.T == nil || s.MemBWUtilPct == nil || s.SMActivePct != nil {
		t.Error("an empty column came back absent, or an absent one present")
	}
}

// TestCarriedRefusesDamage: a carried form cut anywhere, with a byte
// changed, or that is JSON, is refused with an error, never read as
// another profile.
func TestCarriedRefusesDamage(t *testing.T) {
	b, err := MarshalCarried(carriedProfile())
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < len(b); n++ {
		if _, err := UnmarshalCarried(b[:n]); err == nil {
			t.Fatalf("cut at %d of %d: read", n, len(b))
		}
	}
	want := encoded(t, carriedProfile())
	for i := len(carriedMagic); i < len(b); i++ {
		c := append([]byte{}, b...)
		c[i] ^= 0x20
		if q, err := UnmarshalCarried(c); err == nil && !bytes.Equal(encoded(t, q), want) {
			t.Fatalf("byte %d of %d changed: read as another profile", i, len(b))
		}
	}
	if _, err := UnmarshalCarried(encoded(t, carriedProfile())); err == nil || !strings.Contains(err.Error(), "not in the carried form") {
		t.Fatalf("JSON read as the carried form: %v", err)
	}
}

// TestCarriedPointersAllKept: every pointer of a profile's metadata is one
// whose zero value the carried form keeps (zeros.walk); a pointer added to
// the types and not there fails here.
func TestCarriedPointersAllKept(t *testing.T) {
	kept := []string{"Profile.Nodes.GPUs.NUMANode", "Profile.Nodes.GPUs.MIG", "Profile.Nodes.Workloads.Sharing", "Profile.Unscheduled.Sharing",
		"Profile.Queues.NominalGPUs", "Profile.Queues.BorrowingLimitGPUs", "Profile.Queues.LendingLimitGPUs", "Profile.Queues.BudgetGPUMinutes", "Profile.Queues.BudgetUse"}
	var found []string
	var walk func(path string, t reflect.Type)
	walk = func(path string, ty reflect.Type) {
		switch ty.Kind() {
		case reflect.Slice, reflect.Map:
			walk(path, ty.Elem())
		case reflect.Struct:
			for i := range ty.NumField() {
				f := ty.Field(i)
				if !f.IsExported() || f.Type == reflect.TypeOf(time.Time{}) || path+"."+f.Name == "Profile.Nodes.Topology" {
					continue // time: gob keeps its zero; topology: not carried
				}
				if f.Type.Kind() == reflect.Pointer {
					found = append(found, path+"."+f.Name)
					walk(path+"."+f.Name, f.Type.Elem())
					continue
				}
				walk(path+"."+f.Name, f.Type)
			}
		}
	}
	walk("Profile", reflect.TypeOf(Profile{}))
	slices.Sort(found)
	slices.Sort(kept)
	if !slices.Equal(found, kept) {
		t.Fatalf("the metadata's pointers are %q; the carried form keeps the zero values of %q", found, kept)
	}
}

func encoded(t *testing.T, p *Profile) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Encode(&b, p); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
