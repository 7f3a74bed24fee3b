package analyze

import (
	"sort"

	"github.com/seedance/seedance/profile"
)

// StrandedGPU is the memory a GPU held while its compute sat idle: the
// memory in use during its counted idle runs (docs/analysis.md,
// "Fragmentation"). Memory that sits on a GPU nobody computes on is the
// fragmentation an operator can act on: a MIG slice, MPS, or consolidation.
type StrandedGPU struct {
	Node  string `json:"node"`
	GPU   int    `json:"gpu"`
	UUID  string `json:"uuid"`
	Model string `json:"model"`
	// IdleS is the length of the GPU's counted idle runs, and HeldS the
	// part of it with a memory reading.
	IdleS float64 `json:"idle_s"`
	HeldS float64 `json:"held_s"`
	// MeanGiB is the mean memory in use over HeldS, GiBHours its integral.
	MeanGiB     float64 `json:"mean_gib"`
	GiBHours    float64 `json:"gib_hours"`
	MemTotalGiB float64 `json:"mem_total_gib,omitempty"`
}

// strandedAcc accumulates one GPU's memory in use over its idle runs:
// the open run's, kept until the run ends, and the counted runs'.
type strandedAcc struct {
	prevMem         float64 // the pending sample's mem_used_bytes
	runBS, runS     float64
	totalBS, totalS float64
}

// sample records the pending sample's memory (after the one before it is
// closed).
func (x *gpuExtra) sampleMem(s *profile.Series, i int) {
	if x != nil && x.keepsMem {
		x.mem.prevMem = at(s.MemUsedBytes, i)
	}
}

// idleSample adds a closed idle sample's memory to the open run; start says
// it opens the run.
func (x *gpuExtra) idleSample(cov float64, start bool) {
	if x == nil || !x.keepsMem {
		return
	}
	m := &x.mem
	if start {
		m.runBS, m.runS = 0, 0
	}
	if !profile.IsNull(m.prevMem) {
		m.runBS += m.prevMem * cov
		m.runS += cov
	}
}

// runEnded keeps the run's memory when the run counted.
func (x *gpuExtra) runEnded(counted bool) {
	if x == nil || !x.keepsMem {
		return
	}
	if counted {
		x.mem.totalBS += x.mem.runBS
		x.mem.totalS += x.mem.runS
	}
	x.mem.runBS, x.mem.runS = 0, 0
}

// strandedMemory lists the GPUs that held memory during counted idle runs,
// the most GiB-hours first.
func (a *analysis) strandedMemory() []StrandedGPU {
	out := []StrandedGPU{}
	for _, n := range a.order {
		for _, g := range n.gpus {
			if g.ext == nil || !g.ext.keepsMem || g.ext.mem.totalBS <= 0 {
				continue
			}
			m := &g.ext.mem
			s := StrandedGPU{Node: n.name, GPU: int(g.index), UUID: g.uuid, Model: g.model, IdleS: round(g.idleS, 4), HeldS: round(m.totalS, 4),
				MeanGiB: round(m.totalBS/m.totalS/(1<<30), 4), GiBHours: round(m.totalBS/(1<<30)/3600, 4)}
			if g.memTotal > 0 {
				s.MemTotalGiB = round(float64(g.memTotal)/(1<<30), 4)
			}
			out = append(out, s)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].GiBHours > out[j].GiBHours })
	return out
}

// GPUReport is one GPU's figures (Params.GPUFigures), for rules on GPUs
// (docs/rules.md). A MIG device is one entry, with its parent's UUID.
type GPUReport struct {
	Node          string   `json:"node"`
	Index         int      `json:"index"`
	UUID          string   `json:"uuid"`
	Model         string   `json:"model"`
	ParentUUID    string   `json:"parent_uuid,omitempty"`
	AvgGPUUtilPct *float64 `json:"avg_gpu_util_pct"`
	ObservedS     float64  `json:"observed_s"`
	IdleS         float64  `json:"idle_s"`
	EnergyKWh     float64  `json:"energy_kwh"`
	MemTotalGiB   float64  `json:"mem_total_gib"`
	// IdleMemGiB is the mean memory in use during its counted idle runs
	// (with the fragmentation report; else null).
	IdleMemGiB *float64 `json:"idle_mem_gib"`
}

// gpuFigures lists every GPU's figures, nodes in report order.
func (a *analysis) gpuFigures() []GPUReport {
	out := []GPUReport{}
	for _, n := range a.order {
		for _, g := range n.gpus {
			if !g.sampled {
				continue
			}
			gr := GPUReport{Node: n.name, Index: int(g.index), UUID: g.uuid, Model: g.model, ParentUUID: g.parent(), ObservedS: round(g.observedS, 4),
				IdleS: round(g.idleS, 4), EnergyKWh: sig(g.energyJ() / 3.6e6), MemTotalGiB: round(float64(g.memTotal)/(1<<30), 4)}
			if g.utilW > 0 {
				v := sig(g.utilSum / g.utilW)
				gr.AvgGPUUtilPct = &v
			}
			if m := g.ext; m != nil && m.keepsMem && m.mem.totalS > 0 {
				v := round(m.mem.totalBS/m.mem.totalS/(1<<30), 4)
				gr.IdleMemGiB = &v
			}
			out = append(out, gr)
		}
	}
	return out
}
