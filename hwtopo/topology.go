// Package hwtopo knows the hardware a GPU workload runs on: which GPUs meet
// over NVLink and with how many links, which meet only across PCIe bridges
// or sockets, and which CPUs and NUMA node each GPU hangs off. It reads NVML
// (through an injected device list) and the host through jaypipes/ghw
// (through an injected root), renders the matrix as `nvidia-smi topo -m`
// does, and parses such captures. It never prints.
package hwtopo

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/seedance/seedance/internal/nvapi"
)

// Topology is one node's interconnect.
type Topology struct {
	GPUs []GPU `json:"gpus"`
	// Matrix[i][j] is what `nvidia-smi topo -m` prints for GPUs i and j:
	// X, NV#, PIX, PXB, PHB, NODE or SYS.
	Matrix [][]string `json:"matrix"`
	// NVLinkGBps[i][j] is the NVLink bandwidth between GPUs i and j, per
	// direction, in GB/s (0 without NVLink).
	NVLinkGBps [][]float64 `json:"nvlink_gbps"`
	Host       *Host       `json:"host,omitempty"`
}

// GPU is one GPU's place in the topology.
type GPU struct {
	Index       int      `json:"index"`
	UUID        string   `json:"uuid,omitempty"`
	BusID       string   `json:"pci_bus_id,omitempty"`
	NUMANode    *int     `json:"numa_node"`
	CPUAffinity string   `json:"cpu_affinity,omitempty"` // a CPU list: "0-51,104-155"
	NVLinks     []NVLink `json:"nvlinks,omitempty"`
	// MIG lists the GPU's MIG devices when MIG mode is on.
	MIG []MIGDevice `json:"mig,omitempty"`
}

// MIGDevice is one MIG device of a GPU.
type MIGDevice struct {
	UUID    string `json:"uuid"`
	GI      int    `json:"gi"`
	CI      int    `json:"ci"`
	Profile string `json:"profile"`
}

// MIGProfileName names a MIG device as nvidia-smi does: "1g.10gb", or
// "1c.2g.20gb" for a compute instance smaller than its GPU instance.
func MIGProfileName(a nvapi.DeviceAttributes) string {
	gb := (a.MemorySizeMB + 512) / 1024
	name := fmt.Sprintf("%dg.%dgb", a.GpuInstanceSliceCount, gb)
	if a.ComputeInstanceSliceCount > 0 && a.ComputeInstanceSliceCount < a.GpuInstanceSliceCount {
		name = fmt.Sprintf("%dc.%s", a.ComputeInstanceSliceCount, name)
	}
	return name
}

// NVLink is one link of a GPU.
type NVLink struct {
	Link        int    `json:"link"`
	Up          bool   `json:"up"`
	RemoteBusID string `json:"remote_pci_bus_id,omitempty"`
	// ToSwitch is a link to an NVSwitch (DGX/HGX): such a GPU reaches every
	// other switch-connected GPU over all of its switch links.
	ToSwitch bool    `json:"to_switch,omitempty"`
	GBps     float64 `json:"gbps"` // per direction
}

// Host is the machine around the GPUs.
type Host struct {
	Sockets   int        `json:"sockets"`
	NUMANodes []NUMANode `json:"numa_nodes"`
}

// NUMANode is one NUMA node: its CPUs and memory.
type NUMANode struct {
	ID          int    `json:"id"`
	CPUs        string `json:"cpus"` // a CPU list
	MemoryBytes int64  `json:"memory_bytes"`
}

// levelLabel is how nvidia-smi names a PCIe common ancestor.
func levelLabel(l nvapi.TopologyLevel) string {
	switch l {
	case nvapi.TOPOLOGY_INTERNAL:
		return "X"
	case nvapi.TOPOLOGY_SINGLE:
		return "PIX"
	case nvapi.TOPOLOGY_MULTIPLE:
		return "PXB"
	case nvapi.TOPOLOGY_HOSTBRIDGE:
		return "PHB"
	case nvapi.TOPOLOGY_NODE:
		return "NODE"
	}
	return "SYS"
}

// LinkRank orders connections from best to worst, for "never a worse
// interconnect" checks: more NVLinks beat fewer, any NVLink beats PCIe.
func LinkRank(label string) int {
	if n, ok := strings.CutPrefix(label, "NV"); ok {
		if v, err := strconv.Atoi(n); err == nil {
			return 1000 + v
		}
	}
	switch label {
	case "X":
		return 10000
	case "PIX":
		return 50
	case "PXB":
		return 40
	case "PHB":
		return 30
	case "NODE":
		return 20
	}
	return 10 // SYS
}

// nvlinkGBps is the bandwidth of one link per direction by NVLink version,
// as `nvidia-smi nvlink -s` reports it (A100: 25, H100/H200: 26.562).
func nvlinkGBps(version uint32) float64 {
	switch version {
	case 1:
		return 20
	case 2, 3:
		return 25
	case 4:
		return 26.562
	case 5:
		return 50
	}
	return 25
}

// CPUList writes a CPU bit mask (64 CPUs per word, as NVML returns it) as
// a CPU list: "0-19", "0-51,104-155".
func CPUList(words []uint) string {
	var parts []string
	start := -1
	n := len(words) * 64
	for cpu := 0; cpu <= n; cpu++ {
		on := cpu < n && words[cpu/64]&(1<<(uint(cpu)%64)) != 0
		switch {
		case on && start < 0:
			start = cpu
		case !on && start >= 0:
			if start == cpu-1 {
				parts = append(parts, strconv.Itoa(start))
			} else {
				parts = append(parts, fmt.Sprintf("%d-%d", start, cpu-1))
			}
			start = -1
		}
	}
	return strings.Join(parts, ",")
}

// CheckCPUList checks a CPU list's syntax and bounds (CPU numbers up to
// MaxCPU) without expanding it: validation costs the list's length, not the
// number of CPUs it names.
func CheckCPUList(s string) error {
	for _, part := range strings.Split(strings.TrimSpace(s), ",") {
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return fmt.Errorf("bad CPU list %q", short(s))
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return fmt.Errorf("bad CPU list %q", short(s))
			}
		}
		if b > MaxCPU {
			return fmt.Errorf("CPU list %q names CPU %d, above %d", short(s), b, MaxCPU)
		}
	}
	return nil
}

// CPUMask is CPUList's inverse: the list as a bit mask of the given number
// of 64-CPU words, as NVML's GetCpuAffinity returns it (CPUs past the last
// word are left out).
func CPUMask(list string, words int) ([]uint, error) {
	cpus, err := ParseCPUList(list)
	if err != nil {
		return nil, err
	}
	out := make([]uint, words)
	for _, c := range cpus {
		if c/64 < words {
			out[c/64] |= 1 << (uint(c) % 64)
		}
	}
	return out, nil
}

// ParseCPUList reads "0-3,8,10-11" into CPU numbers, each at most MaxCPU
// and each once: the work is bounded by MaxCPU, not by the numbers given.
func ParseCPUList(s string) ([]int, error) {
	if err := CheckCPUList(s); err != nil {
		return nil, err
	}
	ranges := cpuRanges(s)
	var out []int
	var seen map[int]bool // only for a list that goes back on itself
	for i, r := range ranges {
		if seen == nil && i > 0 && r[0] <= ranges[i-1][1] {
			seen = make(map[int]bool, len(out))
			for _, c := range out {
				seen[c] = true
			}
		}
		for c := r[0]; c <= r[1]; c++ {
			if seen == nil {
				out = append(out, c)
			} else if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	return out, nil
}

// cpuRanges are the ranges of a checked CPU list, as written.
func cpuRanges(s string) [][2]int {
	var out [][2]int
	for _, part := range strings.Split(strings.TrimSpace(s), ",") {
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, _ := strconv.Atoi(lo)
		b := a
		if isRange {
			b, _ = strconv.Atoi(hi)
		}
		out = append(out, [2]int{a, b})
	}
	return out
}

// mergedRanges are a CPU list's ranges sorted and merged: no CPU twice.
func mergedRanges(s string) ([][2]int, error) {
	if err := CheckCPUList(s); err != nil {
		return nil, err
	}
	r := cpuRanges(s)
	slices.SortFunc(r, func(a, b [2]int) int { return a[0] - b[0] })
	out := r[:0]
	for _, x := range r {
		if n := len(out); n > 0 && x[0] <= out[n-1][1]+1 {
			out[n-1][1] = max(out[n-1][1], x[1])
			continue
		}
		out = append(out, x)
	}
	return out, nil
}

// short cuts a long input for an error message.
func short(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
