package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/seedance/seedance/profile"
)

func TestTopoWithoutGPU(t *testing.T) {
	r := run(t, nil, "topo")
	if r.code != 0 || !strings.Contains(r.out, "NUMA NODE") || !strings.Contains(r.out, "No NVIDIA GPU found: NVML library not found") {
		t.Fatalf("exit %d:\n%s%s", r.code, r.out, r.errOut)
	}
	r = run(t, nil, "topo", "--format", "json")
	var res map[string]any
	if err := json.Unmarshal([]byte(r.out), &res); err != nil || res["gpu_topology"] != nil || res["host"] == nil {
		t.Fatalf("json %v: %s", err, r.out)
	}
	if r := run(t, nil, "topo", "--format", "dot"); r.code != ExitUsage {
		t.Fatalf("bad format: %d", r.code)
	}
}

// TestTopoDGXH100 runs `seedance topo` on a DGX H100 mock with the
// simulator's topology, a process pinned to the wrong NUMA node and a
// link down.
func TestTopoDGXH100(t *testing.T) {
	srv := dgxh100.New()
	profile.InstallSimTopology(srv, "h100")
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
	os.MkdirAll(filepath.Join(proc, "4242"), 0o755)
	os.WriteFile(filepath.Join(proc, "4242", "comm"), []byte("python3\n"), 0o644)
	os.WriteFile(filepath.Join(proc, "4242", "status"), []byte("Cpus_allowed_list:\t52-103\n"), 0o644)

	f, get := testFactory(t, nil)
	f.NVML = func() profile.NVML { return srv }
	host := profile.InstallSimTopology(dgxh100.New(), "h100")
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
