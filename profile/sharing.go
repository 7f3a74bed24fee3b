package profile

import (
	"fmt"
)

// Sharing modes: how several workloads came to hold one GPU
// (docs/sharing.md).
const (
	ShareTimeSlicing = "time-slicing" // the device plugin's replicas
	ShareMPS         = "mps"          // the device plugin's MPS replicas
	ShareFractional  = "fractional"   // HAMi, volcano: memory and cores asked for
	ShareMIG         = "mig"          // a MIG device of a partitioned GPU
	ShareDRA         = "dra"          // a DRA ResourceClaim several pods reserve
)

// Sharing says how a workload shares the GPUs it holds, and what it asked
// of each: the requests (per GPU) a split by requested share reads when
// no measured share is there (v1.1; docs/sharing.md).
type Sharing struct {
	// Mode is one of the Share* modes, "" when the source does not know.
	Mode string `json:"mode,omitempty"`
	// Milli is the thousandths of a GPU asked for (openb's gpu_milli), 0
	// when none.
	Milli int `json:"gpu_milli,omitempty"`
	// CoresPct is the share of the GPU's SMs asked for, in percent
	// (HAMi's nvidia.com/gpucores), 0 when none.
	CoresPct float64 `json:"cores_pct,omitempty"`
	// MemoryBytes is the GPU memory asked for (HAMi's nvidia.com/gpumem,
	// volcano's gpu-memory), 0 when none.
	MemoryBytes uint64 `json:"memory_bytes,omitempty"`
}

// Usage is one workload's measured use of a GPU it shares (v1.1): its
// utilization at each of the GPU's samples (null where not measured), as
// NVML's per-process utilization or HAMi's per-container one says.
type Usage struct {
	Workload string `json:"workload"`
	UtilPct  Values `json:"util_pct"`
}

// checkSharing refuses a request outside what a GPU has.
func checkSharing(s *Sharing) error {
	if s == nil {
		return nil
	}
	switch s.Mode {
	case "", ShareTimeSlicing, ShareMPS, ShareFractional, ShareMIG, ShareDRA:
	default:
		return fmt.Errorf("sharing.mode %q is not one of time-slicing, mps, fractional, mig, dra", short(s.Mode))
	}
	if s.Milli < 0 || s.Milli > 1000 {
		return fmt.Errorf("sharing.gpu_milli %d is outside 0–1000", s.Milli)
	}
	if !(s.CoresPct >= 0 && s.CoresPct <= 100) {
		return fmt.Errorf("sharing.cores_pct %v is outside 0–100", s.CoresPct)
	}
	if float64(s.MemoryBytes) > MaxValue {
		return fmt.Errorf("sharing.memory_bytes %d is larger than %g", s.MemoryBytes, MaxValue)
	}
	return nil
}

// checkUsage refuses a usage column that does not match the GPU's samples,
// names no workload or one twice, or holds a value outside 0–100.
func checkUsage(g *GPU) error {
	seen := make(map[string]bool, len(g.Usage))
	for k, u := range g.Usage {
		if u.Workload == "" || len(u.Workload) > MaxWorkloadIDBytes {
			return fmt.Errorf("usage[%d]: workload is empty or longer than %d bytes", k, MaxWorkloadIDBytes)
		}
		if seen[u.Workload] {
			return fmt.Errorf("usage[%d]: workload %q appears twice", k, short(u.Workload))
		}
		seen[u.Workload] = true
		if len(u.UtilPct) != len(g.Series.T) {
			return fmt.Errorf("usage[%d].util_pct has %d values but series.t has %d", k, len(u.UtilPct), len(g.Series.T))
		}
		for i, v := range u.UtilPct {
			if v < 0 || v > 100 {
				return fmt.Errorf("usage[%d].util_pct[%d] = %v is outside 0–100", k, i, v)
			}
		}
	}
	return nil
}

// sharing reads a workload's sharing.
func (r metaReader) sharing(s *Sharing) error {
	return r.object(func(key string) error {
		switch key {
		case "mode":
			return r.sc.String(&s.Mode)
		case "gpu_milli":
			return r.sc.Int(&s.Milli)
		case "cores_pct":
			return r.sc.Float(&s.CoresPct)
		case "memory_bytes":
			return r.sc.Uint64(&s.MemoryBytes)
		}
		return r.sc.Skip()
	})
}

// usage reads a GPU's usage columns.
func (r metaReader) usage(dst *[]Usage) error {
	return listOf(r, dst, func(u *Usage) error {
		return r.object(func(key string) error {
			switch key {
			case "workload":
				return r.sc.String(&u.Workload)
			case "util_pct":
				col, err := r.sc.Column(nil, MaxSamplesPerGPU)
				u.UtilPct = col
				return err
			}
			return r.sc.Skip()
		})
	})
}

// usageAt is a join's usage columns of one GPU, by workload in the order
// first seen, each as long as the GPU's samples so far.
type usageAt struct {
	ids  []string
	cols map[string][]float64
}

// add appends the value of sample i of each of us's columns (null for a
// workload measured before but not in us), n the samples now.
func (u *usageAt) add(us []Usage, i, n int) {
	if len(us) == 0 && len(u.ids) == 0 {
		return
	}
	if u.cols == nil {
		u.cols = map[string][]float64{}
	}
	for _, c := range us {
		if _, ok := u.cols[c.Workload]; !ok {
			u.ids = append(u.ids, c.Workload)
			u.cols[c.Workload] = nullValues(n - 1)
		}
		u.cols[c.Workload] = append(u.cols[c.Workload], at(c.UtilPct, i))
	}
	for _, id := range u.ids {
		if col := u.cols[id]; len(col) < n {
			u.cols[id] = append(col, Null)
		}
	}
}

// keep keeps sample k alone (n = 1) or none (n = 0), as the join's
// keepEnergyReading does.
func (u *usageAt) keep(k, n int) {
	for _, id := range u.ids {
		col := u.cols[id]
		if n == 1 {
			col[0] = col[k]
		}
		u.cols[id] = col[:n]
	}
}

// columns is the usage of the joined GPU: the columns with a value.
func (u *usageAt) columns() []Usage {
	var out []Usage
	for _, id := range u.ids {
		if col := u.cols[id]; hasValue(col) {
			out = append(out, Usage{Workload: id, UtilPct: col})
		}
	}
	return out
}

func nullValues(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = Null
	}
	return out
}
