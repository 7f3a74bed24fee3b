package hwtopo

import (
	"fmt"
	"math"
)

// Limits of a topology read from a profile or a capture.
const (
	// MaxGPUs is the most GPUs one topology lists.
	MaxGPUs = 1024
	// MaxCPU is the highest CPU number a CPU list may name (Linux allows
	// up to 8,192 CPUs in common builds; this leaves room).
	MaxCPU = 65535
	// MaxNVLinkGBps bounds one GPU pair's NVLink bandwidth per direction
	// (NVLink 5 with 18 links is 900 GB/s).
	MaxNVLinkGBps = 100_000
)

// Validate checks what every user of a topology indexes by: a matrix and a
// bandwidth table that are square and as wide as the GPU list (or absent),
// bandwidths that are finite and not negative, GPU indices that are
// distinct, and CPU lists that parse. A topology from a file is outside
// data; seedance validates it before anything reads it.
func (t *Topology) Validate() error {
	n := len(t.GPUs)
	if n > MaxGPUs {
		return fmt.Errorf("%d GPUs, more than %d", n, MaxGPUs)
	}
	if len(t.Matrix) != 0 && len(t.Matrix) != n {
		return fmt.Errorf("matrix has %d rows for %d GPUs", len(t.Matrix), n)
	}
	for i, row := range t.Matrix {
		if len(row) != n {
			return fmt.Errorf("matrix row %d has %d cells for %d GPUs", i, len(row), n)
		}
	}
	if len(t.NVLinkGBps) != 0 && len(t.NVLinkGBps) != n {
		return fmt.Errorf("nvlink_gbps has %d rows for %d GPUs", len(t.NVLinkGBps), n)
	}
	for i, row := range t.NVLinkGBps {
		if len(row) != n {
			return fmt.Errorf("nvlink_gbps row %d has %d cells for %d GPUs", i, len(row), n)
		}
		for j, v := range row {
			if !(v >= 0 && v <= MaxNVLinkGBps) || math.IsNaN(v) {
				return fmt.Errorf("nvlink_gbps[%d][%d] is %v, not 0–%d GB/s", i, j, v, MaxNVLinkGBps)
			}
		}
	}
	seen := map[int]bool{}
	for i, g := range t.GPUs {
		if g.Index < 0 || g.Index >= MaxGPUs || seen[g.Index] {
			return fmt.Errorf("gpus[%d]: index %d is negative, too large or repeated", i, g.Index)
		}
		seen[g.Index] = true
		if g.CPUAffinity != "" {
			if _, err := ParseCPUList(g.CPUAffinity); err != nil {
				return fmt.Errorf("gpus[%d]: %v", i, err)
			}
		}
	}
	if t.Host != nil {
		if len(t.Host.NUMANodes) > MaxGPUs {
			return fmt.Errorf("%d NUMA nodes, more than %d", len(t.Host.NUMANodes), MaxGPUs)
		}
		for _, nn := range t.Host.NUMANodes {
			if _, err := ParseCPUList(nn.CPUs); err != nil {
				return fmt.Errorf("NUMA node %d: %v", nn.ID, err)
			}
		}
	}
	return nil
}
