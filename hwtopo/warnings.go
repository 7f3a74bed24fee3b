package hwtopo

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Process is a process on a GPU, with the CPUs it may run on.
type Process struct {
	PID         int
	Name        string
	GPU         int
	CPUsAllowed string // a CPU list, from /proc/PID/status
}

// ProcessCPUs reads a process's Cpus_allowed_list and name from procfs.
func ProcessCPUs(procRoot string, pid int) (name, cpus string) {
	dir := filepath.Join(procRoot, strconv.Itoa(pid))
	if b, err := os.ReadFile(filepath.Join(dir, "comm")); err == nil {
		name = strings.TrimSpace(string(b))
	}
	b, err := os.ReadFile(filepath.Join(dir, "status"))
	if err != nil {
		return name, ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			return name, strings.TrimSpace(v)
		}
	}
	return name, ""
}

// Warnings lists what a person can act on: GPU pairs that meet only across
// sockets, NVLinks that are down, and processes allowed to run on CPUs of
// another NUMA node than their GPU's (their host memory traffic crosses
// the socket interconnect).
func Warnings(t *Topology, procs []Process) []string {
	var out []string
	for i := range t.Matrix {
		for j := i + 1; j < len(t.Matrix[i]); j++ {
			if t.Matrix[i][j] == "SYS" {
				out = append(out, fmt.Sprintf("GPU%d and GPU%d meet only across sockets (SYS): keep a multi-GPU job's GPUs on one NUMA node", i, j))
			}
		}
	}
	for _, g := range t.GPUs {
		for _, l := range g.NVLinks {
			if !l.Up {
				out = append(out, fmt.Sprintf("GPU%d: NVLink %d is down (nvidia-smi nvlink -s -i %d; a reset or reseat may bring it back)", g.Index, l.Link, g.Index))
			}
		}
	}
	for _, p := range procs {
		if p.GPU < 0 || p.GPU >= len(t.GPUs) || p.CPUsAllowed == "" || t.Host == nil {
			continue
		}
		g := t.GPUs[p.GPU]
		if g.NUMANode == nil {
			continue
		}
		// An unpinned process on a 2-socket host has half its CPUs on the
		// GPU's node: only less than that is worth a warning.
		if n := t.Host.NodeOfCPUs(p.CPUsAllowed); n >= 0 && n != *g.NUMANode && t.Host.FractionOn(p.CPUsAllowed, *g.NUMANode) < 0.5 {
			out = append(out, fmt.Sprintf("process %d (%s) on GPU%d (NUMA node %d) may run on CPUs %s (mostly NUMA node %d): bind it with numactl --cpunodebind=%d --membind=%d, or on Kubernetes use the topology manager's single-numa-node policy",
				p.PID, p.Name, p.GPU, *g.NUMANode, p.CPUsAllowed, n, *g.NUMANode, *g.NUMANode))
		}
	}
	return out
}
