package gpu

import (
	"errors"
	"fmt"
	"strings"

	"github.com/seedance/seedance/hwtopo"
	"github.com/seedance/seedance/internal/nvapi"
)

// TopologyReport reads this node's GPU topology through NVML (interconnect,
// NVLinks, MIG, each GPU's NUMA node from sysRoot) on the given host, with
// the warnings a person can act on, among them GPU processes (read under
// procRoot) allowed on another NUMA node than their GPU. With no driver or
// no GPU it returns a report that says why (NoGPU), not an error.
func TopologyReport(lib NVML, host *hwtopo.Host, sysRoot, procRoot string) (hwtopo.Report, error) {
	rep := hwtopo.Report{Host: host, Warnings: []string{}}
	n, err := InitNVML(lib)
	if errors.Is(err, ErrNoGPU) {
		// "no GPU available through NVML: CAUSE; HINT" → CAUSE
		cause := strings.TrimPrefix(err.Error(), ErrNoGPU.Error()+": ")
		rep.NoGPU, _, _ = strings.Cut(cause, ";")
		return rep, nil
	}
	if err != nil {
		return rep, err
	}
	defer lib.Shutdown()
	devs := make([]nvapi.Device, 0, n)
	for i := 0; i < n; i++ {
		d, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nvapi.SUCCESS {
			return rep, fmt.Errorf("get handle of GPU %d: %s", i, ret.Error())
		}
		devs = append(devs, d)
	}
	t := hwtopo.FromNVML(devs, 16, func(bus string) *int { return NUMANodeOf(sysRoot, bus) })
	t.Host = host
	rep.Topology = t
	rep.Warnings = append(rep.Warnings, hwtopo.Warnings(t, gpuProcesses(devs, procRoot))...)
	return rep, nil
}

func gpuProcesses(devs []nvapi.Device, procRoot string) []hwtopo.Process {
	var out []hwtopo.Process
	for i, d := range devs {
		ps, ret := d.GetComputeRunningProcesses()
		if ret != nvapi.SUCCESS {
			continue
		}
		for _, p := range ps {
			name, cpus := hwtopo.ProcessCPUs(procRoot, int(p.Pid))
			out = append(out, hwtopo.Process{PID: int(p.Pid), Name: name, GPU: i, CPUsAllowed: cpus})
		}
	}
	return out
}
