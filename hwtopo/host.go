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
	want, err := ParseCPUList(list)
	if err != nil || h == nil {
		return -1
	}
	best, bestN := -1, 0
	for _, n := range h.NUMANodes {
		if k := overlap(n.CPUs, want); k > bestN {
			best, bestN = n.ID, k
		}
	}
	return best
}

// FractionOn is the share of the CPUs in list that belong to NUMA node id.
func (h *Host) FractionOn(list string, id int) float64 {
	want, err := ParseCPUList(list)
	if err != nil || len(want) == 0 || h == nil {
		return 0
	}
	for _, n := range h.NUMANodes {
		if n.ID == id {
			return float64(overlap(n.CPUs, want)) / float64(len(want))
		}
	}
	return 0
}

// overlap counts the CPUs of want that are in the CPU list.
func overlap(list string, want []int) int {
	cpus, _ := ParseCPUList(list)
	set := make(map[int]bool, len(cpus))
	for _, c := range cpus {
		set[c] = true
	}
	k := 0
	for _, c := range want {
		if set[c] {
			k++
		}
	}
	return k
}
