package hwtopo

import (
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// maxLinks is NVML's NVML_NVLINK_MAX_LINKS.
const maxLinks = 18

// FromNVML builds the GPU side of a node's topology from its NVML devices
// (in index order). A call NVML does not support leaves its part empty:
// GPUs without NVLink meet over PCIe, a GPU without affinity data has none.
// numa, when set, gives a GPU's NUMA node from its PCI bus id (sysfs).
func FromNVML(devs []nvml.Device, cpuWords int, numa func(busID string) *int) *Topology {
	t := &Topology{}
	for i, d := range devs {
		g := GPU{Index: i}
		if u, ret := d.GetUUID(); ret == nvml.SUCCESS {
			g.UUID = u
		}
		if p, ret := d.GetPciInfo(); ret == nvml.SUCCESS {
			g.BusID = BusID(p)
		}
		if numa != nil {
			g.NUMANode = numa(g.BusID)
		}
		if g.NUMANode == nil {
			if n, ret := d.GetNumaNodeId(); ret == nvml.SUCCESS && n >= 0 {
				g.NUMANode = &n
			}
		}
		if words, ret := d.GetCpuAffinity(cpuWords); ret == nvml.SUCCESS {
			g.CPUAffinity = CPUList(words)
		}
		for l := 0; l < maxLinks; l++ {
			state, ret := d.GetNvLinkState(l)
			if ret != nvml.SUCCESS {
				continue
			}
			link := NVLink{Link: l, Up: state == nvml.FEATURE_ENABLED}
			if v, ret := d.GetNvLinkVersion(l); ret == nvml.SUCCESS {
				link.GBps = nvlinkGBps(v)
			}
			if p, ret := d.GetNvLinkRemotePciInfo(l); ret == nvml.SUCCESS {
				link.RemoteBusID = BusID(p)
			}
			if typ, ret := d.GetNvLinkRemoteDeviceType(l); ret == nvml.SUCCESS && typ == nvml.NVLINK_DEVICE_TYPE_SWITCH {
				link.ToSwitch = true
			}
			g.NVLinks = append(g.NVLinks, link)
		}
		g.MIG = migLayout(d)
		t.GPUs = append(t.GPUs, g)
	}
	n := len(devs)
	t.Matrix = make([][]string, n)
	t.NVLinkGBps = make([][]float64, n)
	for i := range devs {
		t.Matrix[i] = make([]string, n)
		t.NVLinkGBps[i] = make([]float64, n)
		for j := range devs {
			if i == j {
				t.Matrix[i][j] = "X"
				continue
			}
			links, gbps := nvlinksBetween(t.GPUs[i], t.GPUs[j])
			if links > 0 {
				t.Matrix[i][j] = "NV" + itoa(links)
				t.NVLinkGBps[i][j] = gbps
				continue
			}
			lvl, ret := devs[i].GetTopologyCommonAncestor(devs[j])
			if ret != nvml.SUCCESS {
				t.Matrix[i][j] = "SYS"
				continue
			}
			t.Matrix[i][j] = levelLabel(lvl)
		}
	}
	return t
}

// nvlinksBetween counts the links from a to b: direct links to b's PCI
// function, or, through NVSwitches, the fewer of the two GPUs' switch links.
func nvlinksBetween(a, b GPU) (int, float64) {
	direct, gbps := 0, 0.0
	switchA, gbpsA, switchB := 0, 0.0, 0
	for _, l := range a.NVLinks {
		switch {
		case !l.Up:
		case l.ToSwitch:
			switchA++
			gbpsA += l.GBps
		case l.RemoteBusID != "" && l.RemoteBusID == b.BusID:
			direct++
			gbps += l.GBps
		}
	}
	for _, l := range b.NVLinks {
		if l.Up && l.ToSwitch {
			switchB++
		}
	}
	if direct > 0 {
		return direct, gbps
	}
	if n := min(switchA, switchB); n > 0 {
		return n, gbpsA / float64(switchA) * float64(n)
	}
	return 0, 0
}

// BusID writes a PCI address as sysfs and nvidia-smi do ("0000:18:00.0"):
// NVML pads the domain to 8 digits and uses upper case.
func BusID(p nvml.PciInfo) string {
	b := make([]byte, 0, len(p.BusId))
	for _, c := range p.BusId {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	id := strings.ToLower(string(b))
	if len(id) == 16 && strings.HasPrefix(id, "0000") {
		id = id[4:]
	}
	return id
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// migLayout lists a GPU's MIG devices when MIG mode is on.
func migLayout(d nvml.Device) []MIGDevice {
	cur, _, ret := d.GetMigMode()
	if ret != nvml.SUCCESS || cur != nvml.DEVICE_MIG_ENABLE {
		return nil
	}
	n, ret := d.GetMaxMigDeviceCount()
	if ret != nvml.SUCCESS {
		return nil
	}
	var out []MIGDevice
	for i := 0; i < n; i++ {
		m, ret := d.GetMigDeviceHandleByIndex(i)
		if ret != nvml.SUCCESS {
			continue
		}
		var dev MIGDevice
		dev.UUID, _ = m.GetUUID()
		dev.GI, _ = m.GetGpuInstanceId()
		dev.CI, _ = m.GetComputeInstanceId()
		if a, ret := m.GetAttributes(); ret == nvml.SUCCESS {
			dev.Profile = MIGProfileName(a)
		}
		out = append(out, dev)
	}
	return out
}
