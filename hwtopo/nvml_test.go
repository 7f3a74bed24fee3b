//go:build cgo

package hwtopo

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seedance/seedance/internal/nvapi"

	nvmlsrc "github.com/seedance/seedance/source/nvml"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/seedance/seedance/internal/testkit/golden"
)

// cpuWords turns a CPU list into NVML's affinity words.
func cpuWords(t *testing.T, list string) []uint {
	cpus, err := ParseCPUList(list)
	if err != nil {
		t.Fatal(err)
	}
	words := make([]uint, 4)
	for _, c := range cpus {
		words[c/64] |= 1 << (uint(c) % 64)
	}
	return words
}

// mockNode sets topology functions on a DGX mock: every GPU's CPU list and
// NUMA node, NVLinks to NVSwitches (links per GPU, NVLink version), and a
// PCIe common ancestor.
func mockNode(t *testing.T, srv *server.Server, cpus func(i int) (string, int), links int, version uint32, pcie nvml.GpuTopologyLevel) []nvapi.Device {
	var devs []nvapi.Device
	lib := nvmlsrc.Wrap(srv)
	for i, d := range srv.Devices {
		dev := d.(*server.Device)
		bus := dev.PciBusID
		list, numa := cpus(i)
		words := cpuWords(t, list)
		dev.GetPciInfoFunc = func() (nvml.PciInfo, nvml.Return) {
			var p nvml.PciInfo
			for k, c := range "0000" + bus {
				p.BusId[k] = int8(c)
			}
			return p, nvml.SUCCESS
		}
		dev.GetCpuAffinityFunc = func(int) ([]uint, nvml.Return) { return words, nvml.SUCCESS }
		dev.GetNumaNodeIdFunc = func() (int, nvml.Return) { return numa, nvml.SUCCESS }
		dev.GetNvLinkStateFunc = func(l int) (nvml.EnableState, nvml.Return) {
			if l < links {
				return nvml.FEATURE_ENABLED, nvml.SUCCESS
			}
			return 0, nvml.ERROR_INVALID_ARGUMENT
		}
		dev.GetNvLinkVersionFunc = func(int) (uint32, nvml.Return) { return version, nvml.SUCCESS }
		dev.GetNvLinkRemotePciInfoFunc = func(int) (nvml.PciInfo, nvml.Return) { return nvml.PciInfo{}, nvml.SUCCESS }
		dev.GetNvLinkRemoteDeviceTypeFunc = func(int) (nvml.IntNvLinkDeviceType, nvml.Return) {
			return nvml.NVLINK_DEVICE_TYPE_SWITCH, nvml.SUCCESS
		}
		dev.GetTopologyCommonAncestorFunc = func(nvml.Device) (nvml.GpuTopologyLevel, nvml.Return) { return pcie, nvml.SUCCESS }
		d, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nvapi.SUCCESS {
			t.Fatalf("device %d: %v", i, ret)
		}
		devs = append(devs, d)
	}
	return devs
}

// TestRenderMatchesRealCaptures builds each real single-GPU machine's
// topology through the NVML mocks and checks that seedance prints the very
// bytes nvidia-smi printed.
func TestRenderMatchesRealCaptures(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(realdata, "nvidia_gpu_exporter__linux-*.topo.txt"))
	if len(files) == 0 {
		t.Fatalf("no captures under %s", realdata)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			want, _ := os.ReadFile(f)
			parsed, err := ParseMatrix(bytes.NewReader(want))
			if err != nil {
				t.Fatal(err)
			}
			srv := dgxh100.NewWithGPUs(dgxh100.New().Devices[0].(*server.Device).Config)
			g := parsed.GPUs[0]
			devs := mockNode(t, srv, func(int) (string, int) { return g.CPUAffinity, *g.NUMANode }, 0, 4, nvml.TOPOLOGY_SYSTEM)
			var got bytes.Buffer
			if err := WriteMatrix(&got, FromNVML(devs, 4, nil), true); err != nil {
				t.Fatal(err)
			}
			if got.String() != string(want) {
				t.Fatalf("got\n%q\nwant\n%q", got.String(), want)
			}
		})
	}
}

func TestDGXInterconnect(t *testing.T) {
	cpusA100 := func(i int) (string, int) {
		if i < 4 {
			return "0-23", 0
		}
		return "24-47", 1
	}
	topo := FromNVML(mockNode(t, dgxa100.New(), cpusA100, 12, 3, nvml.TOPOLOGY_SYSTEM), 4, nil)
	if topo.Matrix[0][7] != "NV12" || topo.Matrix[3][3] != "X" || topo.NVLinkGBps[0][1] != 300 {
		t.Fatalf("A100 matrix %v, %v GB/s", topo.Matrix[0], topo.NVLinkGBps[0][1])
	}
	if topo.GPUs[5].CPUAffinity != "24-47" || *topo.GPUs[5].NUMANode != 1 {
		t.Fatalf("GPU5 %+v", topo.GPUs[5])
	}
	h100 := FromNVML(mockNode(t, dgxh100.New(), func(i int) (string, int) { return "0-51,104-155", 0 }, 18, 4, nvml.TOPOLOGY_NODE), 4, nil)
	if h100.Matrix[2][6] != "NV18" || h100.NVLinkGBps[2][6] < 478 || h100.NVLinkGBps[2][6] > 478.2 {
		t.Fatalf("H100 %v %v", h100.Matrix[2], h100.NVLinkGBps[2][6])
	}
	var out bytes.Buffer
	if err := WriteMatrix(&out, topo, false); err != nil {
		t.Fatal(err)
	}
	spaced := strings.ReplaceAll(out.String(), "\t", "   ")
	back, err := ParseMatrix(strings.NewReader("$ nvidia-smi topo -m\n" + spaced))
	if err != nil {
		t.Fatal(err)
	}
	if back.Matrix[6][1] != "NV12" || back.GPUs[6].CPUAffinity != "24-47" || *back.GPUs[6].NUMANode != 1 || len(back.GPUs) != 8 {
		t.Fatalf("parsed back %v %+v", back.Matrix[6], back.GPUs[6])
	}
	golden.Check(t, "testdata/topo-dgxa100.txt", out.Bytes())
	// Without NVLink, the PCIe level shows.
	pcie := FromNVML(mockNode(t, dgxa100.New(), cpusA100, 0, 3, nvml.TOPOLOGY_HOSTBRIDGE), 4, nil)
	if pcie.Matrix[0][1] != "PHB" || LinkRank("PHB") >= LinkRank("NV12") || LinkRank("NV12") >= LinkRank("NV18") || LinkRank("SYS") >= LinkRank("NODE") {
		t.Fatalf("PCIe %v", pcie.Matrix[0][1])
	}
}

func TestMIGLayout(t *testing.T) {
	srv := dgxa100.New()
	devs := mockNode(t, srv, func(int) (string, int) { return "0-23", 0 }, 12, 3, nvml.TOPOLOGY_SYSTEM)
	parent := srv.Devices[0].(*server.Device)
	parent.MigMode = nvml.DEVICE_MIG_ENABLE
	var migs []*mock.Device
	for i, a := range []nvml.DeviceAttributes{{GpuInstanceSliceCount: 3, ComputeInstanceSliceCount: 3, MemorySizeMB: 19968}, {GpuInstanceSliceCount: 1, ComputeInstanceSliceCount: 1, MemorySizeMB: 4864}} {
		attrs, gi, uuid := a, i+1, "MIG-"+string(rune('a'+i))
		migs = append(migs, &mock.Device{
			GetUUIDFunc:              func() (string, nvml.Return) { return uuid, nvml.SUCCESS },
			GetGpuInstanceIdFunc:     func() (int, nvml.Return) { return gi, nvml.SUCCESS },
			GetComputeInstanceIdFunc: func() (int, nvml.Return) { return 0, nvml.SUCCESS },
			GetAttributesFunc:        func() (nvml.DeviceAttributes, nvml.Return) { return attrs, nvml.SUCCESS },
		})
	}
	parent.GetMaxMigDeviceCountFunc = func() (int, nvml.Return) { return 7, nvml.SUCCESS }
	parent.GetMigDeviceHandleByIndexFunc = func(i int) (nvml.Device, nvml.Return) {
		if i < len(migs) {
			return migs[i], nvml.SUCCESS
		}
		return nil, nvml.ERROR_NOT_FOUND
	}
	topo := FromNVML(devs, 4, nil)
	got := topo.GPUs[0].MIG
	if len(got) != 2 || got[0].Profile != "3g.20gb" || got[1].Profile != "1g.5gb" || got[1].GI != 2 || got[0].UUID != "MIG-a" || topo.GPUs[1].MIG != nil {
		t.Fatalf("MIG layout %+v", got)
	}
}
