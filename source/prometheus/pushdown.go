package prometheus

import (
	"context"
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

// pushdown is a batch's read with pushdown: its queries of every chunk,
// and what the chunk's aggregates said until the chunk is finished.
type pushdown struct {
	r       *reading
	bt      batch
	plan    []chunkQuery
	counted []string // metrics not read raw whose sample times are checked
	counts  *counts  // theirs in the chunk, by position in r.names
	energy  map[dcgm.GPUKey]*energyAgg
	prev    map[dcgm.GPUKey]float64 // each counter's last value, of the chunk before
	// edge: the GPUs whose raw answer of the chunk (asked from its start
	// − 1 ms, promQL) had a sample exactly 1 ms before its start. An engine
	// whose range selectors include their left edge (Prometheus 2.x) puts
	// it into the chunk's aggregates too, one that does not
	// (VictoriaMetrics) leaves it out: such a GPU's energy in the chunk is
	// read raw, and a count that includes it reads its times raw, so that
	// both give the same samples.
	edge map[dcgm.GPUKey]bool
	// given: the counts of the read's one chunk are the discovery's, not
	// asked again.
	given bool
}

// energyAgg is one GPU's energy counter over one chunk, from the engine's
// aggregates of its raw samples.
type energyAgg struct {
	id                dcgm.Identity
	last, min, resets float64
	seen              [3]bool
	series            int
}

var energyFns = []string{"last_over_time", "min_over_time", "resets"}

// newPushdown plans a batch's queries of each chunk: the metrics read raw
// (pushdownNames), the energy counter's three aggregates, and the sample
// count (count_over_time) of every other metric its GPUs have, which
// tells whether that metric was read at times utilization was not.
func (r *reading) newPushdown(bt batch) *pushdown {
	names, only, energy := r.pushdownNames(bt)
	pd := &pushdown{r: r, bt: bt, plan: r.rawPlan(names, only), prev: map[dcgm.GPUKey]float64{}}
	if energy {
		for _, fn := range energyFns {
			pd.plan = append(pd.plan, chunkQuery{metric: energyName, fn: fn})
		}
	}
	var union uint32
	for _, bits := range bt.gpus {
		union |= bits
	}
	pd.given = r.found != nil && r.found.counts != nil && !bt.mixed
	for i, n := range r.names {
		if union&(1<<i) != 0 && n != dcgm.FBFree && (!slices.Contains(names, n) || only[n] != "") {
			pd.counted = append(pd.counted, n)
			if !pd.given {
				pd.plan = append(pd.plan, chunkQuery{metric: n, fn: "count_over_time"})
			}
		}
	}
	pd.counts = newCounts(len(r.names))
	pd.reset()
	if pd.given { // the one chunk's counts: the discovery's, of the batch's GPUs
		metrics := make([]int, len(pd.counted))
		for k, n := range pd.counted {
			metrics[k] = slices.Index(r.names, n)
		}
		for key := range bt.gpus {
			r.aggregates += pd.counts.take(r.found.counts, key, metrics)
		}
	}
	return pd
}

func (pd *pushdown) reset() {
	pd.counts.reset()
	pd.energy, pd.edge = map[dcgm.GPUKey]*energyAgg{}, map[dcgm.GPUKey]bool{}
}

// answer keeps what an aggregate query of the chunk said, and whether the
// raw ones had a sample at its start.
func (pd *pushdown) answer(q chunkQuery, ch timeRange, series []promSeries) {
	metric := slices.Index(pd.r.names, q.metric) // its position in the counts
	for _, s := range series {
		id, ok := dcgm.ParseLabels(func(k string) string { return s.Labels[k] })
		if !ok || len(s.Pairs) == 0 {
			continue
		}
		if q.fn == "" {
			if s.Pairs[0].TMillis == ch.Start.UnixMilli()-1 {
				pd.edge[id.Key] = true
			}
			continue
		}
		pd.r.aggregates++
		v := s.Pairs[0].V
		if q.fn == "count_over_time" {
			pd.counts.add(metric, id.Key, int(v))
			continue
		}
		a := pd.energy[id.Key]
		if a == nil {
			a = &energyAgg{id: id}
			pd.energy[id.Key] = a
		}
		f := slices.Index(energyFns, q.fn)
		if f == 0 {
			a.series++
		}
		a.seen[f] = true
		*[]*float64{&a.last, &a.min, &a.resets}[f] = v
	}
}

// finish completes a chunk. A metric with more samples on a GPU than the
// GPU has rows was read at times utilization was not: those times are
// samples with a null utilization in the raw read, so that metric's raw
// samples of the chunk are read for those GPUs to put the times on their
// axes (the energy counter's with their values). Then the energy counters
// of the other GPUs are read from the aggregates (energyChunk).
func (pd *pushdown) finish(ctx context.Context, b *dcgm.Builder, matchers string, ch timeRange) error {
	defer pd.reset()
	lo, hi := ch.Start.UnixMilli(), ch.End.UnixMilli()
	var energyRaw map[dcgm.GPUKey]bool
	for _, n := range pd.counted {
		odd := map[dcgm.GPUKey]bool{}
		var uuids []string
		pd.counts.each(slices.Index(pd.r.names, n), func(key dcgm.GPUKey, c int) {
			if rows := b.Rows(key, lo, hi); c > rows {
				odd[key] = true
				uuids = append(uuids, key.UUID)
			}
		})
		if len(odd) == 0 {
			continue
		}
		sort.Strings(uuids)
		extra := ""
		if pd.bt.uuidLabel != "" {
			extra = nodeMatcher(pd.bt.uuidLabel, slices.Compact(uuids))
		}
		if n == energyName {
			energyRaw = odd
			if err := pd.rawTimes(ctx, b, chunkQuery{metric: n, extra: extra}, matchers, ch, odd); err != nil {
				return err
			}
			continue
		}
		if err := pd.refine(ctx, b, chunkQuery{metric: n, extra: extra}, matchers, ch, odd); err != nil {
			return err
		}
	}
	return pd.energyChunk(ctx, b, matchers, ch, energyRaw)
}

// refineParts is how many parts refine cuts a chunk into.
const refineParts = 8

// refine finds, by the metric's sample counts in each eighth of the chunk,
// where it has samples the odd GPUs' rows lack, and reads only those
// eighths raw: a utilization missing from one scrape costs an eighth of a
// chunk of one metric, not the chunk.
func (pd *pushdown) refine(ctx context.Context, b *dcgm.Builder, q chunkQuery, matchers string, ch timeRange, odd map[dcgm.GPUKey]bool) error {
	span := ch.End.Sub(ch.Start)
	for k := 0; k < refineParts; k++ {
		w := timeRange{ch.Start.Add(span * time.Duration(k) / refineParts), ch.Start.Add(span * time.Duration(k+1) / refineParts)}
		if !w.End.After(w.Start) {
			continue
		}
		count := q
		count.fn = "count_over_time"
		ans, err := pd.query(ctx, b, count, matchers, w)
		if err != nil {
			return err
		}
		counts := map[dcgm.GPUKey]int{}
		for _, s := range ans.Series {
			if id, ok := dcgm.ParseLabels(func(k string) string { return s.Labels[k] }); ok && odd[id.Key] && len(s.Pairs) > 0 {
				counts[id.Key] += int(s.Pairs[0].V)
				pd.r.aggregates++
			}
		}
		lo, hi := w.Start.UnixMilli(), w.End.UnixMilli()
		part := map[dcgm.GPUKey]bool{}
		for key, c := range counts {
			if rows := b.Rows(key, lo, hi); c > rows {
				part[key] = true
			}
		}
		if len(part) > 0 {
			if err := pd.rawTimes(ctx, b, q, matchers, w, part); err != nil {
				return err
			}
		}
	}
	return nil
}

// rawTimes reads one metric of the chunk raw for the odd GPUs and puts its
// sample times on their axes; the energy counter goes in with its values.
func (pd *pushdown) rawTimes(ctx context.Context, b *dcgm.Builder, q chunkQuery, matchers string, ch timeRange, odd map[dcgm.GPUKey]bool) error {
	ans, err := pd.query(ctx, b, q, matchers, ch)
	if err != nil {
		return err
	}
	lo, hi := ch.Start.UnixMilli(), ch.End.UnixMilli()
	for _, s := range ans.Series {
		id, ok := dcgm.ParseLabels(func(k string) string { return s.Labels[k] })
		if !ok || !odd[id.Key] {
			continue
		}
		if q.metric == energyName {
			pd.addRawEnergy(b, s, ch)
			continue
		}
		var times []int64
		for _, p := range s.Pairs {
			if p.TMillis >= lo && p.TMillis < hi {
				times = append(times, p.TMillis)
			}
		}
		pd.r.samples += len(times)
		b.AddTimes(id.Key, times)
	}
	return nil
}

// query runs one more query of the chunk, counted in the progress.
func (pd *pushdown) query(ctx context.Context, b *dcgm.Builder, q chunkQuery, matchers string, ch timeRange) (*promAnswer, error) {
	pd.r.total++
	text, at := q.promQL(matchers, ch)
	ans, err := pd.r.c.query(ctx, text, at)
	pd.r.tick(b)
	if err != nil {
		return nil, err
	}
	pd.r.warnings = append(pd.r.warnings, ans.Warnings...)
	return ans, nil
}

// addRawEnergy adds a chunk's raw energy samples of one series; the
// chunk's last valid reading starts the next chunk's check.
func (pd *pushdown) addRawEnergy(b *dcgm.Builder, s promSeries, ch timeRange) {
	id, _ := dcgm.ParseLabels(func(k string) string { return s.Labels[k] })
	addSeries(b, energyName, s, ch.Start, ch.End)
	lo, hi := ch.Start.UnixMilli(), ch.End.UnixMilli()
	latest := int64(math.MinInt64)
	for _, p := range s.Pairs {
		if p.TMillis >= lo && p.TMillis < hi && p.TMillis >= latest && validEnergy(p.V) {
			latest, pd.prev[id.Key] = p.TMillis, p.V
		}
	}
}

// energyChunk reads one chunk of the batch's energy counters from the
// aggregates (last_over_time, min_over_time, resets over the chunk's raw
// samples, [start, end)) instead of every sample. Where the counter never
// went down, from the chunk before's last value through this chunk, the
// energy the analysis counts (the sum of the counter's increases) is the
// same with two readings, the chunk's first (its minimum) and its last,
// put at the GPU's first and last samples of the chunk: exactly, not
// approximately. Every other GPU (a reset, a blank value, two series, no
// sample to put the readings at) gets the chunk's raw samples; done names
// the GPUs that have them already (finish).
func (pd *pushdown) energyChunk(ctx context.Context, b *dcgm.Builder, matchers string, ch timeRange, done map[dcgm.GPUKey]bool) error {
	raw := map[dcgm.GPUKey]bool{}
	lo, hi := ch.Start.UnixMilli(), ch.End.UnixMilli()
	for key, a := range pd.energy {
		if done[key] {
			continue
		}
		first, last, ok := b.TimeBounds(key, lo, hi)
		p, hasPrev := pd.prev[key]
		if !ok || pd.edge[key] || a.series != 1 || a.seen != [3]bool{true, true, true} || a.resets != 0 ||
			!validEnergy(a.min) || !validEnergy(a.last) || hasPrev && a.min < p {
			raw[key] = true
			delete(pd.prev, key) // the raw samples decide the next chunk's start
			continue
		}
		pairs := []dcgm.Pair{{TMillis: first, V: a.min}}
		if last != first {
			pairs = append(pairs, dcgm.Pair{TMillis: last, V: a.last})
		}
		b.Add(a.id, energyName, pairs)
		pd.r.fromAggregates += len(pairs)
		pd.prev[key] = a.last
	}
	if len(raw) == 0 {
		return nil
	}
	ans, err := pd.query(ctx, b, chunkQuery{metric: energyName}, matchers, ch)
	if err != nil {
		return err
	}
	for _, s := range ans.Series {
		if id, ok := dcgm.ParseLabels(func(k string) string { return s.Labels[k] }); ok && raw[id.Key] {
			pd.addRawEnergy(b, s, ch)
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
