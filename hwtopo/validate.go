package hwtopo

import (
	"fmt"
	"math"
	"strconv"
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
			if err := CheckCPUList(g.CPUAffinity); err != nil {
				return fmt.Errorf("gpus[%d]: %v", i, err)
			}
		}
	}
	if t.Host != nil {
		if len(t.Host.NUMANodes) > MaxGPUs {
			return fmt.Errorf("%d NUMA nodes, more than %d", len(t.Host.NUMANodes), MaxGPUs)
		}
		for _, nn := range t.Host.NUMANodes {
			if err := CheckCPUList(nn.CPUs); err != nil {
				return fmt.Errorf("NUMA node %d: %v", nn.ID, err)
			}
		}
	}
	return nil
}

// Compact returns the part of a topology that placement advice and the
// migration planner read: the matrix, the NVLink bandwidths, each GPU's
// index, NUMA node and CPU affinity, and the host's NUMA nodes. Per-link
// detail, UUIDs, bus ids and MIG layouts are dropped and the matrix's
// labels are shared, so that a reader holding every node's topology keeps
// about a kilobyte per 8-GPU node instead of tens.
func (t *Topology) Compact() *Topology {
	if t == nil {
		return nil
	}
	out := &Topology{Host: t.Host, NVLinkGBps: t.NVLinkGBps}
	out.GPUs = make([]GPU, len(t.GPUs))
	for i, g := range t.GPUs {
		out.GPUs[i] = GPU{Index: g.Index, NUMANode: g.NUMANode, CPUAffinity: g.CPUAffinity}
	}
	if len(t.Matrix) > 0 {
		cells := make([]string, len(t.Matrix)*len(t.Matrix))
		out.Matrix = make([][]string, len(t.Matrix))
		for i, row := range t.Matrix {
			r := cells[i*len(t.Matrix) : (i+1)*len(t.Matrix)]
			for j, c := range row {
				r[j] = internLabel(c)
			}
			out.Matrix[i] = r
		}
	}
	return out
}

// labels are the matrix cells nvidia-smi prints, shared by Compact.
var labels = map[string]string{}

func init() {
	for _, l := range []string{"X", "PIX", "PXB", "PHB", "NODE", "SYS"} {
		labels[l] = l
	}
	for k := 1; k <= 18; k++ {
		l := fmt.Sprintf("NV%d", k)
		labels[l] = l
	}
}

func internLabel(s string) string {
	if l, ok := labels[s]; ok {
		return l
	}
	return s
}

// Interner shares identical compact topologies: the nodes of a fleet are
// mostly of a few kinds (8-GPU DGX, PCIe servers), and one copy of each
// kind serves them all. It is not safe for concurrent use.
type Interner struct {
	seen map[string]*Topology
	buf  []byte // key's, reused
}

// key is a byte string that two compact topologies share exactly when
// they are equal: every field, each string with its length.
func (in *Interner) key(c *Topology) []byte {
	b := in.buf[:0]
	str := func(s string) {
		b = strconv.AppendInt(b, int64(len(s)), 10)
		b = append(b, ':')
		b = append(b, s...)
	}
	num := func(x int64) {
		b = strconv.AppendInt(b, x, 10)
		b = append(b, ',')
	}
	num(int64(len(c.GPUs)))
	for _, g := range c.GPUs {
		num(int64(g.Index))
		if g.NUMANode == nil {
			b = append(b, 'n')
		} else {
			num(int64(*g.NUMANode))
		}
		str(g.CPUAffinity)
	}
	num(int64(len(c.NVLinkGBps)))
	for _, row := range c.NVLinkGBps {
		num(int64(len(row)))
		for _, x := range row {
			b = strconv.AppendUint(b, math.Float64bits(x), 16)
			b = append(b, ',')
		}
	}
	num(int64(len(c.Matrix)))
	for _, row := range c.Matrix {
		num(int64(len(row)))
		for _, cell := range row {
			str(cell)
		}
	}
	if h := c.Host; h != nil {
		b = append(b, 'h')
		num(int64(h.Sockets))
		num(int64(len(h.NUMANodes)))
		for _, n := range h.NUMANodes {
			num(int64(n.ID))
			num(n.MemoryBytes)
			str(n.CPUs)
		}
	}
	in.buf = b
	return b
}

// Intern returns the compact form of t, shared with every earlier node
// whose compact topology is the same.
func (in *Interner) Intern(t *Topology) *Topology {
	if t == nil {
		return nil
	}
	key := in.key(t) // what Compact keeps: t's key is its compact form's
	if s, ok := in.seen[string(key)]; ok {
		return s
	}
	if in.seen == nil {
		in.seen = map[string]*Topology{}
	}
	c := t.Compact()
	in.seen[string(key)] = c
	return c
}
