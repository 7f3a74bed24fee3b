package prometheus

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source/dcgm"
)

// The metrics pushdown reads (docs/sources.md, Pushdown).
const (
	utilName   = "DCGM_FI_DEV_GPU_UTIL"
	grName     = "DCGM_FI_PROF_GR_ENGINE_ACTIVE"
	powerName  = "DCGM_FI_DEV_POWER_USAGE"
	energyName = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"
)

// has says whether a GPU's metric bits (by index in r.names) include name.
func (r *reading) has(bits uint32, name string) bool {
	for i, n := range r.names {
		if n == name {
			return bits&(1<<i) != 0
		}
	}
	return false
}

// pushdownNames are the metrics a batch reads raw with pushdown: the
// utilization the idle rule reads (GR_ENGINE_ACTIVE only where a GPU has
// no GPU_UTIL), and power only where a GPU has no energy counter, for
// those GPUs alone (only: a matcher on their UUIDs) when their labels
// name them. energy says whether some GPU's energy counter is read as
// aggregates.
func (r *reading) pushdownNames(bt batch) (names []string, only map[string]string, energy bool) {
	want := map[string]bool{}
	var powerOnly []string
	for key, bits := range bt.gpus {
		switch {
		case r.has(bits, utilName):
			want[utilName] = true
		case r.has(bits, grName):
			want[grName] = true
		}
		if r.has(bits, energyName) {
			energy = true
		} else if r.has(bits, powerName) {
			want[powerName] = true
			powerOnly = append(powerOnly, key.UUID)
		}
	}
	for _, n := range []string{utilName, grName, powerName} {
		if want[n] {
			names = append(names, n)
		}
	}
	if bt.uuidLabel != "" && len(powerOnly) > 0 {
		sort.Strings(powerOnly)
		only = map[string]string{powerName: nodeMatcher(bt.uuidLabel, slices.Compact(powerOnly))}
	}
	return names, only, energy
}

// energyAgg is one GPU's energy counter over one chunk, from the engine's
// aggregates of its raw samples.
type energyAgg struct {
	id                dcgm.Identity
	last, min, resets float64
	seen              [3]bool
	series            int
}

// energyChunk reads one chunk of the batch's energy counters as three
// aggregates a GPU (last_over_time, min_over_time, resets over the chunk's
// raw samples, [start, end) in Prometheus) instead of every sample. Where
// the counter never went down, from the chunk before's last value through
// this chunk, the energy the analysis counts (the sum of the counter's
// increases) is the same with two readings, the chunk's first (its
// minimum) and its last, put at the GPU's first and last utilization
// samples of the chunk: exactly, not approximately. Every other GPU (a
// reset, a blank value, two series, no utilization sample to put the
// readings at) gets the chunk's raw samples.
func (r *reading) energyChunk(ctx context.Context, b *dcgm.Builder, matchers string, ch timeRange, prev map[dcgm.GPUKey]float64) error {
	evalAt := ch.End.Add(-time.Millisecond)
	sel := fmt.Sprintf("%s[%dms]", withMatchers(energyName, matchers), evalAt.Sub(ch.Start).Milliseconds())
	aggs := map[dcgm.GPUKey]*energyAgg{}
	for f, fn := range []string{"last_over_time", "min_over_time", "resets"} {
		ans, err := r.c.query(ctx, fn+"("+sel+")", evalAt)
		r.tick(b)
		if err != nil {
			return err
		}
		r.warnings = append(r.warnings, ans.Warnings...)
		for _, s := range ans.Series {
			id, ok := dcgm.ParseLabels(func(k string) string { return s.Labels[k] })
			if !ok || len(s.Pairs) == 0 {
				continue
			}
			a := aggs[id.Key]
			if a == nil {
				a = &energyAgg{id: id}
				aggs[id.Key] = a
			}
			if f == 0 {
				a.series++
			}
			r.aggregates++
			a.seen[f] = true
			*[]*float64{&a.last, &a.min, &a.resets}[f] = s.Pairs[0].V
		}
	}
	raw := map[dcgm.GPUKey]bool{}
	lo, hi := ch.Start.UnixMilli(), ch.End.UnixMilli()
	for key, a := range aggs {
		first, last, ok := b.TimeBounds(key, lo, hi)
		p, hasPrev := prev[key]
		if !ok || a.series != 1 || a.seen != [3]bool{true, true, true} || a.resets != 0 ||
			!validEnergy(a.min) || !validEnergy(a.last) || hasPrev && a.min < p {
			raw[key] = true
			delete(prev, key) // the raw samples decide the next chunk's start
			continue
		}
		pairs := []dcgm.Pair{{TMillis: first, V: a.min}}
		if last != first {
			pairs = append(pairs, dcgm.Pair{TMillis: last, V: a.last})
		}
		b.Add(a.id, energyName, pairs)
		r.fromAggregates += len(pairs)
		prev[key] = a.last
	}
	if len(raw) == 0 {
		return nil
	}
	r.total++
	ans, err := r.c.query(ctx, fmt.Sprintf("%s[%dms]", withMatchers(energyName, matchers), ch.End.Sub(ch.Start).Milliseconds()), ch.End)
	r.tick(b)
	if err != nil {
		return err
	}
	r.warnings = append(r.warnings, ans.Warnings...)
	latest := map[dcgm.GPUKey]int64{}
	for _, s := range ans.Series {
		id, ok := dcgm.ParseLabels(func(k string) string { return s.Labels[k] })
		if !ok || !raw[id.Key] {
			continue
		}
		addSeries(b, energyName, s, ch.Start, ch.End)
		for _, p := range s.Pairs { // the chunk's last valid reading starts the next
			if p.TMillis >= lo && p.TMillis < hi && p.TMillis >= latest[id.Key] && validEnergy(p.V) {
				latest[id.Key], prev[id.Key] = p.TMillis, p.V
			}
		}
	}
	return nil
}

// validEnergy says whether an energy counter's reading (mJ) is a value,
// not a blank sentinel or a reading the profile would refuse.
func validEnergy(v float64) bool {
	m, _ := dcgm.MetricByName(energyName)
	return !dcgm.IsBlank(v) && !math.IsNaN(v) && v >= 0 && v*m.Scale <= profile.EnergyJ.Limit()
}

// rawSamples estimates what reading every metric of every GPU raw holds:
// each GPU's metrics times the steps of the range.
func (d *discovery) rawSamples(r *reading, steps int) int {
	total := 0
	for _, n := range d.nodes {
		for _, bits := range n.gpus {
			for i := range r.names {
				if bits&(1<<i) != 0 {
					total += steps
				}
			}
		}
	}
	return total
}
