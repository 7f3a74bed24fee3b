package hwtopo

import (
	"fmt"
	"sort"

	"github.com/jaypipes/ghw"
)

// HostFromGHW reads sockets, NUMA nodes, their CPUs and memory with
// jaypipes/ghw under root ("/" for this machine, a fixture tree in tests).
func HostFromGHW(root string) (*Host, error) {
	opts := []any{ghw.WithChroot(root), ghw.WithDisableWarnings()}
	topo, err := ghw.Topology(opts...)
	if err != nil {
		return nil, fmt.Errorf("read NUMA topology: %w", err)
	}
	h := &Host{}
	if cpu, err := ghw.CPU(opts...); err == nil {
		h.Sockets = len(cpu.Processors)
	}
	for _, n := range topo.Nodes {
		node := NUMANode{ID: n.ID}
		var cpus []int
		for _, c := range n.Cores {
			cpus = append(cpus, c.LogicalProcessors...)
		}
		sort.Ints(cpus)
		words := make([]uint, 0)
		for _, c := range cpus {
			for len(words) <= c/64 {
				words = append(words, 0)
			}
			words[c/64] |= 1 << (uint(c) % 64)
		}
		node.CPUs = CPUList(words)
		if n.Memory != nil {
			node.MemoryBytes = n.Memory.TotalUsableBytes
		}
		h.NUMANodes = append(h.NUMANodes, node)
	}
	sort.Slice(h.NUMANodes, func(i, j int) bool { return h.NUMANodes[i].ID < h.NUMANodes[j].ID })
	return h, nil
}

// NodeOfCPUs returns the NUMA node whose CPUs hold most of the given CPU
// list, or -1.
func (h *Host) NodeOfCPUs(list string) int {
	want, err := mergedRanges(list)
	if err != nil || h == nil {
		return -1
	}
	best, bestN := -1, 0
	for _, n := range h.NUMANodes {
		have, _ := mergedRanges(n.CPUs)
		if k := overlap(have, want); k > bestN {
			best, bestN = n.ID, k
		}
	}
	return best
}

// FractionOn is the share of the CPUs in list that belong to NUMA node id.
func (h *Host) FractionOn(list string, id int) float64 {
	want, err := mergedRanges(list)
	if err != nil || len(want) == 0 || h == nil {
		return 0
	}
	for _, n := range h.NUMANodes {
		if n.ID == id {
			have, _ := mergedRanges(n.CPUs)
			return float64(overlap(have, want)) / float64(count(want))
		}
	}
	return 0
}

// count is the number of CPUs in merged ranges.
func count(r [][2]int) int {
	k := 0
	for _, x := range r {
		k += x[1] - x[0] + 1
	}
	return k
}

// overlap counts the CPUs in both merged range lists.
func overlap(a, b [][2]int) int {
	k := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		lo, hi := max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
		if lo <= hi {
			k += hi - lo + 1
		}
		if a[i][1] < b[j][1] {
			i++
		} else {
			j++
		}
	}
	return k
}
