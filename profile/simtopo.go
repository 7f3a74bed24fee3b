package profile

import (
	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

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

// install sets the topology functions of a simulated node's devices.
func (t simTopology) install(srv *server.Server) {
	numaOf := map[nvml.Device]int{}
	for i, d := range srv.Devices {
		numaOf[d] = i / 4
	}
	for i, d := range srv.Devices {
		dev := d.(*server.Device)
		numa := i / 4
		words := cpuMask(t.cpus[numa])
		dev.GetNumaNodeIdFunc = func() (int, nvml.Return) { return numa, nvml.SUCCESS }
		dev.GetCpuAffinityFunc = func(int) ([]uint, nvml.Return) { return words, nvml.SUCCESS }
		dev.GetNvLinkStateFunc = func(l int) (nvml.EnableState, nvml.Return) {
			if l < t.links {
				return nvml.FEATURE_ENABLED, nvml.SUCCESS
			}
			return 0, nvml.ERROR_INVALID_ARGUMENT
		}
		dev.GetNvLinkVersionFunc = func(int) (uint32, nvml.Return) { return t.version, nvml.SUCCESS }
		dev.GetNvLinkRemotePciInfoFunc = func(int) (nvml.PciInfo, nvml.Return) { return nvml.PciInfo{}, nvml.SUCCESS }
		dev.GetNvLinkRemoteDeviceTypeFunc = func(int) (nvml.IntNvLinkDeviceType, nvml.Return) {
			return nvml.NVLINK_DEVICE_TYPE_SWITCH, nvml.SUCCESS
		}
		dev.GetTopologyCommonAncestorFunc = func(other nvml.Device) (nvml.GpuTopologyLevel, nvml.Return) {
			if numaOf[other] == numa {
				return nvml.TOPOLOGY_NODE, nvml.SUCCESS
			}
			return nvml.TOPOLOGY_SYSTEM, nvml.SUCCESS
		}
	}
}

func cpuMask(list string) []uint {
	cpus, _ := hwtopo.ParseCPUList(list)
	words := make([]uint, 16)
	for _, c := range cpus {
		words[c/64] |= 1 << (uint(c) % 64)
	}
	return words
}

// InstallSimTopology gives a go-nvml DGX mock server ("a100", "h100" or
// "h200") the simulator's topology, and returns the host it implies. Tests
// of topology consumers use it.
func InstallSimTopology(srv *server.Server, hw string) *hwtopo.Host {
	t := simTopologies[hw]
	t.install(srv)
	return t.host()
}
