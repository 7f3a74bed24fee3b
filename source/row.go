package source

import (
	"cmp"
	"slices"

	"github.com/seedance/seedance/profile"
)

// Row is one GPU's reading at one sample: a value per metric (NaN when not
// measured) and the error that made values missing, if any.
type Row struct {
	V   [profile.NumMetrics]float64
	Err string
	// Use is each workload's measured utilization of the GPU at this
	// sample (NVML's per-process utilization, summed over its processes),
	// nil when not measured (docs/sharing.md).
	Use map[string]float64
}

// NullRow returns a row with every metric null.
func NullRow(err string) Row {
	var r Row
	for i := range r.V {
		r.V[i] = profile.Null
	}
	r.Err = err
	return r
}

// Proc is one process on a GPU, as NVML reports it.
type Proc struct {
	PID            int
	GPUMemoryBytes uint64
	// SMUtilPct is its utilization of the GPU over the last sample's
	// time, NaN when not measured.
	SMUtilPct float64
}

// AddSorted adds v to the sorted set *s, unless it holds v already.
func AddSorted[T cmp.Ordered](s *[]T, v T) {
	i, found := slices.BinarySearch(*s, v)
	if !found {
		*s = slices.Insert(*s, i, v)
	}
}
