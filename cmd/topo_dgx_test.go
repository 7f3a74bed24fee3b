//go:build cgo

package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/seedance/seedance/hwtopo"
	"github.com/seedance/seedance/source/gpu"
	nvmlsrc "github.com/seedance/seedance/source/nvml"
)

// TestTopoDGXH100 runs `seedance topo` on a DGX H100 mock with the
// simulator's topology, a process pinned to the wrong NUMA node and a
// link down.
func TestTopoDGXH100(t *testing.T) {
	srv := dgxh100.New()
	installDGXTopology(srv)
	dev := srv.Devices[2].(*server.Device)
	dev.GetNvLinkStateFunc = func(l int) (nvml.EnableState, nvml.Return) {
		if l == 7 {
			return nvml.FEATURE_DISABLED, nvml.SUCCESS
		}
		if l < 18 {
			return nvml.FEATURE_ENABLED, nvml.SUCCESS
		}
		return 0, nvml.ERROR_INVALID_ARGUMENT
	}
	for i, d := range srv.Devices {
		var procs []nvml.ProcessInfo
		if i == 1 {
			procs = []nvml.ProcessInfo{{Pid: 4242}}
		}
		d.(*server.Device).GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return procs, nvml.SUCCESS }
	}
	proc := t.TempDir()
	if err := os.MkdirAll(filepath.Join(proc, "4242"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proc, "4242", "comm"), []byte("python3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proc, "4242", "status"), []byte("Cpus_allowed_list:\t52-103\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	f, get := testFactory(t, nil)
	f.NVML = func() (gpu.NVML, error) { return nvmlsrc.Wrap(srv), nil }
	host := dgxHost
	o := &TopoOptions{IO: f.IO, NVML: f.NVML, Format: "table", HostRoot: "/", SysRoot: t.TempDir(), ProcRoot: proc}
	if err := topoRunWithHost(o, host); err != nil {
		t.Fatal(err)
	}
	out := get().out
	for _, want := range []string{
		"GPU0\t X \tNV18\tNV17", "GPU4\tNV18\tNV18\tNV17", "0-51,104-155\t0\t\tN/A", "GPU2  ", "17/18",
		"GPU2: NVLink 7 is down", "NVLink GB/s per direction between GPUs", "GPU2  452   452   -     452",
		"process 4242 (python3) on GPU1 (NUMA node 0) may run on CPUs 52-103 (mostly NUMA node 1): bind it with numactl --cpunodebind=0 --membind=0",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "SYS)") {
		t.Error("NVSwitch-connected GPUs reported as SYS")
	}
}

// dgxHost is a DGX H100's host side: two sockets of 104 hardware threads.
var dgxHost = &hwtopo.Host{Sockets: 2, NUMANodes: []hwtopo.NUMANode{
	{ID: 0, CPUs: "0-51,104-155", MemoryBytes: 1 << 40}, {ID: 1, CPUs: "52-103,156-207", MemoryBytes: 1 << 40},
}}

// installDGXTopology gives a go-nvml DGX H100 mock the simulator's
// topology (source/sim): 18 NVLink 4 links per GPU to NVSwitches, GPUs 0–3
// on NUMA node 0 and 4–7 on node 1.
func installDGXTopology(srv *server.Server) {
	t := struct {
		links   int
		version uint32
		cpus    [2]string
	}{18, 4, [2]string{"0-51,104-155", "52-103,156-207"}}
	numaOf := map[nvml.Device]int{}
	for i, d := range srv.Devices {
		numaOf[d] = i / 4
	}
	for i, d := range srv.Devices {
		dev := d.(*server.Device)
		numa := i / 4
		words, _ := hwtopo.CPUMask(t.cpus[numa], 16)
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
