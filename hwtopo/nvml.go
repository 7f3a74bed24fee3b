package hwtopo

import (
	"github.com/seedance/seedance/internal/nvapi"
)

// maxLinks is NVML's NVML_NVLINK_MAX_LINKS.
const maxLinks = 18

// FromNVML builds the GPU side of a node's topology from its NVML devices
// (in index order). A call NVML does not support leaves its part empty:
// GPUs without NVLink meet over PCIe, a GPU without affinity data has none.
// numa, when set, gives a GPU's NUMA node from its PCI bus id (sysfs).
func FromNVML(devs []nvapi.Device, cpuWords int, numa func(busID string) *int) *Topology {
	t := &Topology{}
	for i, d := range devs {
		g := GPU{Index: i}
		if u, ret := d.GetUUID(); ret == nvapi.SUCCESS {
			g.UUID = u
		}
		if p, ret := d.GetPciBusID(); ret == nvapi.SUCCESS {
			g.BusID = p
		}
		if numa != nil {
			g.NUMANode = numa(g.BusID)
		}
		if g.NUMANode == nil {
			if n, ret := d.GetNumaNodeId(); ret == nvapi.SUCCESS && n >= 0 {
				g.NUMANode = &n
			}
		}
		if words, ret := d.GetCpuAffinity(cpuWords); ret == nvapi.SUCCESS {
			g.CPUAffinity = CPUList(words)
		}
		for l := 0; l < maxLinks; l++ {
			up, ret := d.GetNvLinkState(l)
			if ret != nvapi.SUCCESS {
				continue
			}
			link := NVLink{Link: l, Up: up}
			if v, ret := d.GetNvLinkVersion(l); ret == nvapi.SUCCESS {
				link.GBps = nvlinkGBps(v)
			}
			if p, ret := d.GetNvLinkRemotePciBusID(l); ret == nvapi.SUCCESS {
				link.RemoteBusID = p
			}
			if sw, ret := d.GetNvLinkRemoteIsSwitch(l); ret == nvapi.SUCCESS && sw {
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
			if ret != nvapi.SUCCESS {
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

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// migLayout lists a GPU's MIG devices when MIG mode is on.
func migLayout(d nvapi.Device) []MIGDevice {
	cur, ret := d.GetMigMode()
	if ret != nvapi.SUCCESS || cur != nvapi.DEVICE_MIG_ENABLE {
		return nil
	}
	n, ret := d.GetMaxMigDeviceCount()
	if ret != nvapi.SUCCESS {
		return nil
	}
	var out []MIGDevice
	for i := 0; i < n; i++ {
		m, ret := d.GetMigDeviceHandleByIndex(i)
		if ret != nvapi.SUCCESS {
			continue
		}
		var dev MIGDevice
		dev.UUID, _ = m.GetUUID()
		dev.GI, _ = m.GetGpuInstanceId()
		dev.CI, _ = m.GetComputeInstanceId()
		if a, ret := m.GetAttributes(); ret == nvapi.SUCCESS {
			dev.Profile = MIGProfileName(a)
		}
		out = append(out, dev)
	}
	return out
}
