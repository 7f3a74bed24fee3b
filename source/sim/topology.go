package sim

import (
	"github.com/seedance/seedance/hwtopo"
)

// simTopology is a DGX's interconnect as the real machines report it: every
// GPU reaches every other over NVSwitches (A100: 12 NVLink 3 links, NV12;
// H100 and H200: 18 NVLink 4 links, NV18), GPUs 0–3 hang off NUMA node 0
// and 4–7 off node 1. The CPU lists are those of the captures in
// shared/realdata/topo (an 8×A100 box with 48 CPUs; an 8×H100 box with
// 208 hardware threads).
type simTopology struct {
	links   int
	version uint32
	cpus    [2]string
	memory  int64 // per NUMA node
}

var simTopologies = map[string]simTopology{
	"a100": {12, 3, [2]string{"0-23", "24-47"}, 512 << 30},
	"h100": {18, 4, [2]string{"0-51,104-155", "52-103,156-207"}, 1 << 40},
	"h200": {18, 4, [2]string{"0-51,104-155", "52-103,156-207"}, 1 << 40},
}

func (t simTopology) host() *hwtopo.Host {
	return &hwtopo.Host{Sockets: 2, NUMANodes: []hwtopo.NUMANode{
		{ID: 0, CPUs: t.cpus[0], MemoryBytes: t.memory}, {ID: 1, CPUs: t.cpus[1], MemoryBytes: t.memory},
	}}
}

// mask is a simulated node's CPU list as NVML's affinity mask; the lists
// are the simulator's own constants, so they always parse.
func mask(list string) []uint {
	words, err := hwtopo.CPUMask(list, 16)
	if err != nil {
		panic("sim: CPU list " + list + ": " + err.Error()) // programming error
	}
	return words
}
