package chargeback

import (
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Intensity is a grid's carbon intensity by zone and UTC hour, gCO2e per
// kWh, from a CSV file (docs/chargeback.md, Emissions). A zone is a
// cluster's name; a file of one zone serves every cluster.
type Intensity struct {
	zones map[string]map[int64]float64 // zone → hour (Unix s) → g/kWh
	only  string                       // the zone, when the file has one
	// missing are the hours asked for that the file lacks, by zone (the
	// cluster's name when it names no zone of the file).
	missing map[string]map[int64]bool
}

// The columns ReadIntensity knows: its own, and Electricity Maps' hourly
// exports' (lifecycle intensity before direct).
var (
	timeCols      = []string{"datetime", "time", "datetime (utc)"}
	zoneCols      = []string{"zone", "cluster", "zone id", "region"}
	intensityCols = []string{"gco2e_per_kwh", "carbon intensity gco₂eq/kwh (lca)", "carbon intensity gco2eq/kwh (lca)", "carbon intensity gco₂eq/kwh (direct)", "carbon intensity gco2eq/kwh (direct)"}
)

// MaxIntensityRows bounds a grid-intensity file's rows, and
// MaxIntensityBytes its size: two years of hours of 100 zones (a file of
// 101 MB took 41 s to read whole before; ask for the window's months).
const (
	MaxIntensityRows  = 2 * 366 * 24 * 100
	MaxIntensityBytes = 64 << 20
)

// ReadIntensity reads an hourly grid-intensity CSV: a header naming a time
// column (RFC 3339 or "YYYY-MM-DD HH:MM:SS", UTC), a zone column and an
// intensity column (gCO2e/kWh), a row an hour and zone.
func ReadIntensity(r io.Reader, name string) (*Intensity, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("grid intensity %s: %v", name, err)
	}
	ti, zi, ii := column(header, timeCols), column(header, zoneCols), column(header, intensityCols)
	if ti < 0 || zi < 0 || ii < 0 {
		return nil, fmt.Errorf("grid intensity %s: the header needs a time (datetime), a zone (zone or cluster) and an intensity (gco2e_per_kwh) column", name)
	}
	in := &Intensity{zones: map[string]map[int64]float64{}}
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("grid intensity %s: %v", name, err)
		}
		if line > MaxIntensityRows {
			return nil, fmt.Errorf("grid intensity %s: more than %d rows", name, MaxIntensityRows)
		}
		if err := in.add(rec, ti, zi, ii); err != nil {
			return nil, fmt.Errorf("grid intensity %s: line %d: %v", name, line, err)
		}
	}
	if len(in.zones) == 0 {
		return nil, fmt.Errorf("grid intensity %s: no rows", name)
	}
	if len(in.zones) == 1 {
		for z := range in.zones {
			in.only = z
		}
	}
	return in, nil
}

func (in *Intensity) add(rec []string, ti, zi, ii int) error {
	if max(ti, zi, ii) >= len(rec) {
		return fmt.Errorf("%d fields, too few", len(rec))
	}
	t, err := parseHour(rec[ti])
	if err != nil {
		return err
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(rec[ii]), 64)
	if err != nil || !(v >= 0 && v < 1e5) {
		return fmt.Errorf("intensity %q is not a number from 0 to 100000 g/kWh", rec[ii])
	}
	z := strings.TrimSpace(rec[zi])
	if in.zones[z] == nil {
		in.zones[z] = map[int64]float64{}
	}
	if _, dup := in.zones[z][t.Unix()]; dup {
		return fmt.Errorf("hour %s of zone %q is given twice", t.Format(time.RFC3339), z)
	}
	in.zones[z][t.Unix()] = v
	return nil
}

// column is the position of the first of names (in their order of
// preference) that the header has, case aside; -1 when none.
func column(header, names []string) int {
	for _, n := range names {
		for i, h := range header {
			if strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))) == n {
				return i
			}
		}
	}
	return -1
}

// parseHour reads an hour's start, UTC.
func parseHour(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339, "2006-01-02 15:04:05", "2006-01-02T15:04:05", "2006-01-02 15:04"} {
		if t, err := time.Parse(layout, s); err == nil {
			if t.Truncate(time.Hour) != t {
				return t, fmt.Errorf("time %q is not the start of an hour", s)
			}
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("time %q is not RFC 3339 or YYYY-MM-DD HH:MM:SS", s)
}

// For is the mean intensity of the cluster's zone over [from, from+d),
// hour by hour; ok is false when an hour of it is missing.
func (in *Intensity) For(cluster string, from time.Time, d time.Duration) (float64, bool) {
	zone, hours := cluster, in.zones[cluster]
	if hours == nil && in.only != "" {
		zone, hours = in.only, in.zones[in.only]
	}
	sum, n := 0.0, 0
	for h := from.Truncate(time.Hour); h.Before(from.Add(d)); h = h.Add(time.Hour) {
		v, ok := hours[h.Unix()]
		if !ok {
			in.miss(zone, h)
			return math.NaN(), false
		}
		sum, n = sum+v, n+1
	}
	return sum / float64(n), n > 0
}

func (in *Intensity) miss(zone string, h time.Time) {
	if in.missing == nil {
		in.missing = map[string]map[int64]bool{}
	}
	if in.missing[zone] == nil {
		in.missing[zone] = map[int64]bool{}
	}
	in.missing[zone][h.Unix()] = true
}

// Missing says, a line per zone, which hours the emissions asked for
// that the file lacks: why an emissions figure is null.
func (in *Intensity) Missing() []string {
	var out []string
	for _, z := range slices.Sorted(maps.Keys(in.missing)) {
		hours := slices.Sorted(maps.Keys(in.missing[z]))
		first := time.Unix(hours[0], 0).UTC().Format(time.RFC3339)
		more := ""
		if len(hours) > 1 {
			more = fmt.Sprintf(" and %d more hour(s) to %s", len(hours)-1, time.Unix(hours[len(hours)-1], 0).UTC().Format(time.RFC3339))
		}
		known := "it has no such zone"
		if in.zones[z] != nil {
			known = "the zone has no such hour"
		}
		out = append(out, fmt.Sprintf("grid intensity: no value for zone %q at %s%s (%s): the emissions over them are null", z, first, more, known))
	}
	return out
}
