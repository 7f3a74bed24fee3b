package analyze

import (
	"fmt"
	"slices"

	"github.com/seedance/seedance/profile"
)

// eps absorbs floating-point error in sums of sample times (which are
// milliseconds): a run of 59.9999999999 s counts for a 60 s window.
const eps = 1e-6

// sample is one reading of a GPU, at an absolute time (seconds from the
// window's start), waiting for the next one to fix its coverage.
type sample struct {
	t, interval   float64
	util, memBW   float64 // NaN: null or absent
	power, energy float64
	load          float64 // the scaling signal, NaN when absent
	valid         bool
}

// gpuAcc accumulates one GPU's figures over its samples, across inputs.
// There is one per GPU of the fleet, so its fields are packed: 288 bytes,
// a size class of Go's allocator (the node's name is in ctx, a MIG
// device's parent in mig).
type gpuAcc struct {
	uuid, model string
	memTotal    uint64
	mig         *profile.MIG
	share       float64 // 1 for a GPU, slices/7 for a MIG device, 0 for a MIG parent
	index       int32   // below profile.MaxGPUsPerNode
	// energyN counts energy readings, up to 2 (all the rules ask); its
	// bit powerSeen is set once a power reading was seen.
	energyN uint8
	sampled bool
	runOpen bool

	prev sample

	observedS        float64
	cover            []Interval // the samples' coverage, adjacent pieces merged
	utilSum, utilW   float64
	bwSum, bwW       float64
	powerJ           float64 // Σ power × coverage
	energyInc        float64 // Σ positive increments of energy_j
	lastEnergy       float64
	lastEnergyT      float64 // the time of lastEnergy's reading
	runStart, runEnd float64
	runs             []Interval // counted idle runs, whole (context too)
	idleS            float64
	ext              *gpuExtra // its own timeline, its utilization track; nil when neither
	ctx              *gpuContext
}

// gpuContext is what a node's GPUs share: the rules' parameters and the
// node's timeline and demand. One per node, not one copy per GPU.
type gpuContext struct {
	node              string
	threshold, window float64
	// spanS is the analysis window's length: a sample outside [0, spanS)
	// is context (docs/analysis.md, Context samples), counted for nothing.
	spanS   float64
	faults  *faults    // the analysis' energy counter faults
	spark   *sparkline // the node's
	demand  *demandAcc // the node's, for the scaling what-if
	scaling *ScalingParams
	weights *loadWeights // scaling.Weights, resolved
}

// add feeds the GPU's series from one input whose started_at is offset
// seconds after the window's start.
func (g *gpuAcc) add(s *profile.Series, usage []profile.Usage, offset, interval float64) error {
	util, bw, pw, en := s.GPUUtilPct, s.MemBWUtilPct, s.PowerW, s.EnergyJ
	g.sampled = g.sampled || len(s.T) > 0
	if x := g.ext; x != nil && x.rare != nil && x.rare.keepsEnergy {
		x.rare.energy = slices.Grow(x.rare.energy, len(s.T))
	}
	for i, t := range s.T {
		cur := sample{t: offset + t, interval: interval, util: at(util, i), memBW: at(bw, i), power: at(pw, i), energy: at(en, i), load: profile.Null, valid: true}
		if g.ctx.scaling != nil {
			cur.load = g.ctx.weights.at(s, i)
		}
		if g.prev.valid {
			if cur.t <= g.prev.t {
				return fmt.Errorf("%w: inputs overlap: GPU %s on node %s has two samples at or around %.3f s into the window", profile.ErrInvalid, g.uuid, g.ctx.node, cur.t)
			}
			g.close(g.prev, cur.t)
		}
		g.prev = cur
		g.ext.sampleMem(s, i)
		g.ext.sampleUse(usage, i)
	}
	return nil
}

// reads is the metrics whose values the analysis reads (gpuAcc.add and
// what it calls): every other column is only checked.
func (a *analysis) reads() (keep [profile.NumMetrics]bool) {
	for _, m := range []profile.Metric{profile.GPUUtilPct, profile.MemBWUtilPct, profile.PowerW, profile.EnergyJ} {
		keep[m] = true
	}
	keep[profile.MemUsedBytes] = a.p.Fragmentation // stranded memory
	keep[profile.MemBWUtilPct] = !a.p.cut          // the summary's bandwidth: a cut has none
	if w := a.weights; w != nil {
		for m := range keep {
			keep[m] = keep[m] || w.w[m] != 0
		}
		keep[profile.SMActivePct] = keep[profile.SMActivePct] || w.preferSM
	}
	return keep
}

func at(v profile.Values, i int) float64 {
	if v == nil {
		return profile.Null
	}
	return v[i]
}

// finish closes the last sample, whose coverage is one interval.
func (g *gpuAcc) finish() {
	if g.prev.valid {
		g.close(g.prev, profile.Null)
		g.prev.valid = false
	}
	g.endRun()
}

// close applies the coverage rule to s given the next sample's time (NaN
// when there is none): s covers [t, next) when next − t ≤ 2 × interval, else
// [t, t + interval), and in that case a gap follows it. Only the part of
// the coverage inside the window counts; a sample outside it is context:
// it fixes the coverage of the sample before it, the length of the idle
// run it belongs to and the energy counter's baseline.
func (g *gpuAcc) close(s sample, next float64) {
	end := s.t + s.interval
	gap := true
	if !profile.IsNull(next) && next-s.t <= 2*s.interval+eps {
		end, gap = next, false
	}
	lo, hi := max(s.t, 0), min(end, g.ctx.spanS)
	cov := max(hi-lo, 0)
	if cov > 0 {
		g.count(s, lo, hi)
	}
	g.energy(s, lo, cov)
	idle := !profile.IsNull(s.util) && s.util < g.ctx.threshold
	if !idle {
		g.endRun()
		return
	}
	g.ext.idleSample(cov, !g.runOpen)
	if !g.runOpen {
		g.runOpen, g.runStart = true, s.t
	}
	g.runEnd = end
	if gap {
		g.endRun()
	}
}

// count adds the part [lo, hi) of a sample's coverage that lies in the
// window: observed time, utilization, bandwidth and demand.
func (g *gpuAcc) count(s sample, lo, hi float64) {
	cov := hi - lo
	g.observedS += cov
	if k := len(g.cover); k > 0 && lo <= g.cover[k-1].EndS+eps {
		g.cover[k-1].EndS = max(g.cover[k-1].EndS, hi) // the builtin: math.Max is a call
	} else {
		g.cover = append(g.cover, Interval{lo, hi})
	}
	if !profile.IsNull(s.util) {
		g.utilSum += s.util * cov
		g.utilW += cov
		g.ctx.spark.add(lo, s.util, cov)
		if x := g.ext; x != nil {
			if own := x.own(); own != nil {
				own.add(lo, s.util, cov)
			}
			if x.tracking {
				x.addTrack(lo, hi, s.util)
				x.addUse(lo, hi)
			}
		}
	}
	if !profile.IsNull(s.memBW) {
		g.bwSum += s.memBW * cov
		g.bwW += cov
	}
	if g.ctx.scaling != nil && g.parent() == "" { // a physical GPU, by its own series
		g.ctx.demand.add(lo, cov, s.load, g.ctx.scaling.Period.Seconds())
	}
}

// energy adds a closed sample's power × the coverage cov (from lo) it has
// in the window, and its energy counter's increase since the previous
// reading, when positive and read in the window: a reading outside it is
// only a baseline.
func (g *gpuAcc) energy(s sample, lo, cov float64) {
	inc := 0.0
	if !profile.IsNull(s.power) {
		g.powerJ += s.power * cov
		g.energyN |= powerSeen
	}
	if !profile.IsNull(s.energy) {
		n := g.energyN &^ powerSeen
		if n > 0 && s.energy > g.lastEnergy && s.t >= 0 && s.t < g.ctx.spanS {
			inc = s.energy - g.lastEnergy
			if inc > maxGPUPowerW*(s.t-g.lastEnergyT) {
				// A step no GPU could draw in the time: a counter fault.
				g.ctx.faults.add(fmt.Sprintf("GPU %s on node %s, %.0f J in %.3g s at %.3f s", g.uuid, g.ctx.node, inc, s.t-g.lastEnergyT, s.t))
				inc = 0
			}
			g.energyInc += inc
		}
		g.lastEnergy, g.lastEnergyT = s.energy, s.t
		g.energyN = min(n+1, 2) | g.energyN&powerSeen
	}
	if x := g.ext; x != nil && x.rare != nil && x.rare.keepsEnergy {
		x.rare.keepEnergy(energyPiece{max(s.t, lo), s.power}, lo+cov, inc, int(g.energyN&^powerSeen))
	}
}

// endRun closes the current idle run and counts it when it lasts at least
// the idle window.
func (g *gpuAcc) endRun() {
	if !g.runOpen {
		return
	}
	g.runOpen = false
	d := g.runEnd - g.runStart
	counted := d >= g.ctx.window-eps
	// A run counts by its whole length, context included; only its part
	// in the window is idle time.
	if lo, hi := max(g.runStart, 0), min(g.runEnd, g.ctx.spanS); counted && hi > lo {
		g.runs = append(g.runs, Interval{g.runStart, g.runEnd})
		g.idleS += hi - lo
	}
	g.ext.runEnded(counted)
}

// energyJ is the GPU's energy: the energy counter's increase when it has at
// least two readings, else the integral of power over coverage.
func (g *gpuAcc) energyJ() float64 {
	if g.energyN&^powerSeen >= 2 {
		return g.energyInc
	}
	return g.powerJ
}

// maxGPUPowerW bounds what a GPU can draw: an energy counter's step of
// more over its time is a fault (a reset, a corrupt reading), not energy.
// The largest GPUs draw about 1.4 kW.
const maxGPUPowerW = 10000.0

// powerSeen is the bit of gpuAcc.energyN set by a power reading.
const powerSeen = 0x80

// energyMeasured reports whether the GPU reported power or energy.
func (g *gpuAcc) energyMeasured() bool { return g.energyN != 0 }

// parent is a MIG device's parent GPU UUID, "" for a GPU.
func (g *gpuAcc) parent() string {
	if g.mig == nil {
		return ""
	}
	return g.mig.ParentUUID
}

// physical is the UUID of the physical GPU: the parent of a MIG device.
func (g *gpuAcc) physical() string {
	if p := g.parent(); p != "" {
		return p
	}
	return g.uuid
}
