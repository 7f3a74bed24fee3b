package profile

import (
	"fmt"
	"strings"
	"testing"
)

// TestAddTenure: samples at most 2 × interval apart join; farther ones
// start a new interval; samples out of order and repeated merge in.
func TestAddTenure(t *testing.T) {
	var ivs []Tenure
	for _, s := range []float64{0, 10, 20, 50, 60, 30, 20, 90} {
		ivs = AddTenure(ivs, s, 10)
	}
	// 0,10,20,30 → [0,40); 50,60 → 50 − 30 = 20 ≤ 2 × 10: joins → [0,70); 90: 90 − 60 = 30 > 20 → new.
	if got := fmt.Sprint(ivs); got != "[{0 70} {90 100}]" {
		t.Fatalf("tenure %s", got)
	}
	ivs = AddTenure([]Tenure{{0, 10}, {40, 50}}, 20, 10) // 20 − 0 = 20 and 40 − 20 = 20: joins both
	if got := fmt.Sprint(ivs); got != "[{0 50}]" {
		t.Fatalf("tenure %s", got)
	}
}

// TestFinishTenure: shifted and scaled, clipped to the span; the whole span
// is no list; nothing inside is not ok.
func TestFinishTenure(t *testing.T) {
	for _, c := range []struct {
		in   []Tenure
		want string
		ok   bool
	}{
		{[]Tenure{{1000, 31000}}, "[{0 30}]", true},
		{[]Tenure{{1000, 61000}}, "[]", true}, // the whole 60 s: nil
		{[]Tenure{{-9000, 11000}, {41000, 99000}}, "[{0 10} {40 60}]", true},
		{[]Tenure{{70000, 80000}}, "[]", false},
	} {
		got, ok := FinishTenure(c.in, 1000, 1e-3, 60)
		if fmt.Sprint(got) != c.want || ok != c.ok {
			t.Errorf("FinishTenure(%v) = %v, %v; want %s, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// TestTenureRead: intervals round-trip, and a reader refuses the ones that
// are not ascending, apart, non-empty and inside the profile.
func TestTenureRead(t *testing.T) {
	doc := func(ivs string) string {
		return minimalProfile[:len(minimalProfile)-3] + // without the closing "}]}"
			`,"workloads":[{"id":"ml/a","gpus":[0],"intervals":` + ivs + `}]}]}`
	}
	p, err := Read(strings.NewReader(doc(`[{"start_s":0,"end_s":1},{"start_s":2,"end_s":3}]`)))
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(p.Nodes[0].Workloads[0].Intervals); got != "[{0 1} {2 3}]" {
		t.Fatalf("intervals %s", got)
	}
	for _, c := range []struct{ ivs, want string }{
		{`[]`, "an empty list"},
		{`[{"start_s":1,"end_s":1}]`, "is not an interval inside"},
		{`[{"start_s":-1,"end_s":1}]`, "is not an interval inside"},
		{`[{"start_s":0,"end_s":3.5}]`, "is not an interval inside"},
		{`[{"start_s":0,"end_s":2},{"start_s":1,"end_s":3}]`, "ascending and apart"},
	} {
		_, err := Read(strings.NewReader(doc(c.ivs)))
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("intervals %s: error %v, want %q", c.ivs, err, c.want)
		}
	}
}

// TestFinishTenureLimit: a workload seen at every other sample of a long
// run is written within the readers' limit, covering every sample seen.
func TestFinishTenureLimit(t *testing.T) {
	var ivs []Tenure
	n := 3 * MaxIntervalsPerWorkload
	for i := 0; i < n; i++ {
		ivs = AddTenure(ivs, float64(4*i), 1) // 4 s apart: > 2 × 1 s, each its own
	}
	if len(ivs) != n {
		t.Fatalf("%d intervals", len(ivs))
	}
	out, ok := FinishTenure(ivs, 0, 1, float64(4*n))
	if !ok || len(out) > MaxIntervalsPerWorkload || len(out) == 0 {
		t.Fatalf("%d intervals", len(out))
	}
	if err := checkTenure(out, float64(4*n)); err != nil {
		t.Fatal(err)
	}
	for _, iv := range ivs[:100] {
		if overlapsNone(out, iv) {
			t.Fatalf("%v is not covered", iv)
		}
	}
}

func overlapsNone(ivs []Tenure, iv Tenure) bool {
	for _, o := range ivs {
		if o.StartS <= iv.StartS && iv.EndS <= o.EndS {
			return false
		}
	}
	return true
}
