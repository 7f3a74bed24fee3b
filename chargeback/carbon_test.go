package chargeback

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestReadIntensity: seedance's own columns and Electricity Maps' hourly
// export (lifecycle intensity preferred to direct); a file of one zone
// serves every cluster; a bucket longer than an hour takes its hours'
// mean and needs every one; bad files are one line naming the line.
func TestReadIntensity(t *testing.T) {
	em := "Datetime (UTC),Country,Zone Name,Zone Id,Carbon Intensity gCO₂eq/kWh (direct),Carbon Intensity gCO₂eq/kWh (LCA)\n" +
		"2026-01-05 09:00:00,Germany,Germany,DE,300,400\n2026-01-05 10:00:00,Germany,Germany,DE,310,500\n"
	in, err := ReadIntensity(strings.NewReader(em), "de.csv")
	if err != nil {
		t.Fatal(err)
	}
	h9 := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	if g, ok := in.For("prod-eu", h9, 5*time.Minute); !ok || g != 400 {
		t.Errorf("09:00 for 5 min: %v %v, want the LCA figure 400", g, ok)
	}
	if g, ok := in.For("prod-eu", h9, 2*time.Hour); !ok || g != 450 {
		t.Errorf("09:00 for 2 h: %v %v, want the mean 450", g, ok)
	}
	if _, ok := in.For("prod-eu", h9, 3*time.Hour); ok {
		t.Error("an hour missing gave an intensity")
	}
	two, err := ReadIntensity(strings.NewReader("datetime,cluster,gco2e_per_kwh\n2026-01-05T09:00:00Z,a,100\n2026-01-05T09:00:00Z,b,200\n"), "two.csv")
	if err != nil {
		t.Fatal(err)
	}
	if g, ok := two.For("b", h9, time.Hour); !ok || g != 200 {
		t.Errorf("cluster b: %v %v", g, ok)
	}
	if _, ok := two.For("c", h9, time.Hour); ok {
		t.Error("a cluster of no zone of a file of two zones got an intensity")
	}
	for doc, want := range map[string]string{
		"when,zone,gco2e_per_kwh\n":                                "needs a time",
		"datetime,zone,gco2e_per_kwh\n2026-01-05T09:30:00Z,a,1\n":  "line 2: time \"2026-01-05T09:30:00Z\" is not the start of an hour",
		"datetime,zone,gco2e_per_kwh\n2026-01-05T09:00:00Z,a,-1\n": "line 2: intensity \"-1\"",
		"datetime,zone,gco2e_per_kwh\nyesterday,a,1\n":             "is not RFC 3339",
		"datetime,zone,gco2e_per_kwh\n":                            "no rows",
		"datetime,zone,gco2e_per_kwh\n2026-01-05T09:00:00Z,a\n":    "too few",
	} {
		_, err := ReadIntensity(strings.NewReader(doc), "g.csv")
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want one line with %q", doc, err, want)
		}
	}
}

// TestIntensityEdges: the columns in any order (each one first), the
// intensity's bounds (0 is a figure, 100000 is not), a bad row named by its
// own line, and an empty span with no intensity.
func TestIntensityEdges(t *testing.T) {
	h9 := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	for _, doc := range []string{
		"gco2e_per_kwh,zone,datetime\n0,a,2026-01-05T09:00:00Z\n",
		"zone,datetime,gco2e_per_kwh\na,2026-01-05T09:00:00Z,0\n",
	} {
		in, err := ReadIntensity(strings.NewReader(doc), "g.csv")
		if err != nil {
			t.Fatalf("%q: %v", doc, err)
		}
		if g, ok := in.For("a", h9, time.Hour); !ok || g != 0 {
			t.Errorf("%q: %v %v, want 0 (a figure, not a missing hour)", doc, g, ok)
		}
		if _, ok := in.For("a", h9, 0); ok {
			t.Errorf("%q: an empty span has an intensity", doc)
		}
	}
	head := "datetime,zone,gco2e_per_kwh\n2026-01-05T09:00:00Z,a,99999.5\n"
	if _, err := ReadIntensity(strings.NewReader(head), "g.csv"); err != nil {
		t.Errorf("99999.5 g/kWh: %v", err)
	}
	_, err := ReadIntensity(strings.NewReader(head+"2026-01-05T10:00:00Z,a,100000\n"), "g.csv")
	if err == nil || !strings.Contains(err.Error(), "line 3: intensity \"100000\"") {
		t.Errorf("100000 g/kWh on line 3: %v", err)
	}
}

// TestIntensityMissingAndTwice: an hour given twice for a zone is refused
// on the line that repeats it; an hour asked for that the file lacks makes
// a line naming the zone, the first hour and how many more, and says
// whether the zone or the hour is missing.
func TestIntensityMissingAndTwice(t *testing.T) {
	doc := "datetime,zone,gco2e_per_kwh\n2026-01-05T09:00:00Z,a,100\n2026-01-05T10:00:00Z,a,200\n2026-01-05T11:00:00Z,b,300\n"
	if _, err := ReadIntensity(strings.NewReader(doc+"2026-01-05 10:00:00,a,250\n"), "g.csv"); err == nil ||
		err.Error() != `grid intensity g.csv: line 5: hour 2026-01-05T10:00:00Z of zone "a" is given twice` {
		t.Errorf("an hour twice: %v", err)
	}
	in, err := ReadIntensity(strings.NewReader(doc), "g.csv")
	if err != nil {
		t.Fatal(err)
	}
	h9 := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	in.For("a", h9, 3*time.Hour) // 11:00 is missing
	in.For("a", h9.Add(3*time.Hour), time.Hour)
	in.For("c", h9, time.Hour) // no zone c
	if got := in.Missing(); len(got) != 2 ||
		got[0] != `grid intensity: no value for zone "a" at 2026-01-05T11:00:00Z and 1 more hour(s) to 2026-01-05T12:00:00Z (the zone has no such hour): the emissions over them are null` ||
		got[1] != `grid intensity: no value for zone "c" at 2026-01-05T09:00:00Z (it has no such zone): the emissions over them are null` {
		t.Errorf("missing: %q", got)
	}
}

// TestIntensityOfAMonthOfZones: a month of hours of 5 zones (3,720 rows)
// is well within the file's bounds (two years of 100 zones) and reads
// whole: every zone's last hour has its figure.
func TestIntensityOfAMonthOfZones(t *testing.T) {
	var b strings.Builder
	b.WriteString("datetime,cluster,gco2e_per_kwh\n")
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for h := range 744 {
		for z := range 5 {
			fmt.Fprintf(&b, "%s,z%d,%d\n", start.Add(time.Duration(h)*time.Hour).Format(time.RFC3339), z, 100+z)
		}
	}
	in, err := ReadIntensity(strings.NewReader(b.String()), "month.csv")
	if err != nil {
		t.Fatal(err)
	}
	if g, ok := in.For("z4", start.Add(743*time.Hour), time.Hour); !ok || g != 104 {
		t.Errorf("zone z4's last hour: %v %v", g, ok)
	}
}
