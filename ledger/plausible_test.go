package ledger

import (
	"fmt"
	"strings"
	"testing"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/profile"
)

// TestPlausibleGPU: a GPU row at each bound is plausible, past it is not,
// and the reason says the figures; a sum may exceed a bound by its
// rounding slack (1e-6 of it) and no more.
func TestPlausibleGPU(t *testing.T) {
	sp := span{lo: 7200, hi: 10800} // an hour
	most := 3600.0 * maxGPUsPerNode
	check := func(what string, observed, idle, util, covered, energy float64, want string) {
		t.Helper()
		err := plausibleGPU("c", 7200, "n1", "H100", sp, observed, idle, util, covered, 0, energy)
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", what, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: %v, want %q", what, err, want)
		}
	}
	check("zero", 0, 0, 0, 0, 0, "")
	check("every GPU observed all hour", most, 0, 0, 0, 0, "")
	check("more than every GPU", most+1, 0, 0, 0, 0, fmt.Sprintf("%.6g GPU-hours observed, more than 1024 GPUs could in 1 h", (most+1)/3600))
	check("idle within the slack", 1000, 1000.0005, 0, 0, 0, "")
	check("idle past it", 1000, 1000.01, 0, 0, 0, "0.277781 idle GPU-hours of 0.277778 observed")
	check("covered within the slack", 1000, 0, 0, 1000.0005, 0, "")
	check("covered past it", 1000, 0, 0, 1000.01, 0, "covering 0.277781 GPU-hours of 0.277778 observed")
	check("utilization at 100 %", 1000, 0, 500, 500, 0, "")
	check("utilization past 100 %", 1000, 0, 600, 500, 0, "utilization of 120 %")
	check("the most energy", most, 0, 0, 0, most*maxWattsPerGPU, "")
	check("more energy", most, 0, 0, 0, most*maxWattsPerGPU*1.01, "kWh, more than 1024 GPUs of 5000 W could draw")
	check("a rounding below 0", 1000, -1e-6, 0, 0, 0, "")
	check("below 0", 1000, -1e-5, 0, 0, 0, "not a number, or below 0")
}

// TestPlausibleWorkloads: used and idle within held (and its slack), the
// workloads' held within what was observed.
func TestPlausibleWorkloads(t *testing.T) {
	sp := span{lo: 0, hi: 3600}
	row := func(held, used, idle float64) workloadRow {
		return workloadRow{cluster: "c", w: profile.Workload{ID: "w1"}, held: held, used: used, idle: idle}
	}
	for _, c := range []struct {
		what  string
		rows  []workloadRow
		heldH float64
		want  string
	}{
		{"at the bounds", []workloadRow{row(3600, 3600, 3600)}, 1, ""},
		{"within the slack", []workloadRow{row(1000, 1000.0005, 1000.0005)}, 1, ""},
		{"used past held", []workloadRow{row(1000, 1000.01, 0)}, 1, "0.277781 GPU-hours used of 0.277778 held"},
		{"idle past held", []workloadRow{row(1000, 0, 1000.01)}, 1, "0.277781 idle GPU-hours of 0.277778 held"},
		{"a rounding below 0", []workloadRow{row(1000, -1e-6, 0)}, 1, ""},
		{"below 0", []workloadRow{row(1000, -1e-5, 0)}, 1, "not a number, or below 0"},
		{"held all that was observed", []workloadRow{row(1800, 0, 0), row(1800, 0, 0)}, 1, ""},
		{"held more", []workloadRow{row(1800, 0, 0), row(1801, 0, 0)}, 1, "held 1.00028 GPU-hours in 1970-01-01T00:00:00Z → 1970-01-01T01:00:00Z, more than the 1 observed"},
	} {
		err := plausible(c.rows, analyze.Held{HeldH: c.heldH}, sp)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.what, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.what, err, c.want)
		}
	}
}

// TestPlausibleState: buckets that divide a day, first ≤ watermark, and
// first ≤ data end + 1 ms.
func TestPlausibleState(t *testing.T) {
	for _, c := range []struct {
		first, wm, end, bucket int64
		ok                     bool
	}{
		{1000, 1000, 999, 3600, true}, // a new cluster: the data end a ms before its first
		{1000, 999, 1000, 3600, false},
		{1000, 1000, 998, 3600, false},
		{1000, 2000, 3000, 86400, true},
		{1000, 2000, 3000, 0, false},
		{1000, 2000, 3000, -3600, false},
		{1000, 2000, 3000, 7, false}, // does not divide a day
	} {
		if err := plausibleState("c", c.first, c.wm, c.end, c.bucket); (err == nil) != c.ok {
			t.Errorf("%+v: %v", c, err)
		}
	}
}
