package sim

import (
	"math"
	"strings"

	"github.com/seedance/seedance/internal/nvapi"
)

// simLib is one simulated node seen through NVML: the library the GPU
// sampler and the topology reader call, as they call the real one.
type simLib struct {
	devs []*simDevice
}

func (l *simLib) Init() nvapi.Return     { return nvapi.SUCCESS }
func (l *simLib) Shutdown() nvapi.Return { return nvapi.SUCCESS }

func (l *simLib) DeviceGetCount() (int, nvapi.Return) { return len(l.devs), nvapi.SUCCESS }

func (l *simLib) DeviceGetHandleByIndex(i int) (nvapi.Device, nvapi.Return) {
	if i < 0 || i >= len(l.devs) {
		return nil, nvapi.ERROR_INVALID_ARGUMENT
	}
	return l.devs[i], nvapi.SUCCESS
}

// The versions of the driver the DGX captures in shared/realdata ran.
func (l *simLib) SystemGetDriverVersion() (string, nvapi.Return) { return "550.54.15", nvapi.SUCCESS }
func (l *simLib) SystemGetNVMLVersion() (string, nvapi.Return)   { return "12.550.54.15", nvapi.SUCCESS }

func (l *simLib) GpmSampleAlloc() (nvapi.GpmSample, nvapi.Return) {
	return &simGPMSample{}, nvapi.SUCCESS
}

// GpmMetricsGet gives SM activity and DRAM bandwidth between two samples,
// taken at the second sample's time.
func (l *simLib) GpmMetricsGet(mg *nvapi.GpmMetrics) nvapi.Return {
	s2, ok := mg.Sample2.(*simGPMSample)
	if !ok || s2.gpu == nil {
		return nvapi.ERROR_INVALID_ARGUMENT
	}
	g := s2.gpu
	for i := range mg.Metrics {
		m := &mg.Metrics[i]
		m.Return = nvapi.SUCCESS
		switch m.MetricId {
		case nvapi.GPM_METRIC_SM_UTIL:
			m.Value = math.Round(g.util(s2.t)*(0.8+0.1*g.noise(11, s2.t))*10) / 10
		case nvapi.GPM_METRIC_DRAM_BW_UTIL:
			m.Value = math.Round(g.memBW(s2.t)*10) / 10
		default:
			m.Return = nvapi.ERROR_NOT_SUPPORTED
		}
	}
	return nvapi.SUCCESS
}

// simGPMSample is a GPM sample of a simulated GPU: the time it was taken.
type simGPMSample struct {
	gpu *simGPU
	t   float64
}

func (s *simGPMSample) Free() nvapi.Return { return nvapi.SUCCESS }

// simDevice is one simulated GPU: the identity of the GPU model it is, the
// node's interconnect, and telemetry from its simGPU.
type simDevice struct {
	g     *simGPU
	name  string
	uuid  string
	busID string
	numa  int
	cpus  []uint // affinity mask words
	topo  simTopology
}

func (d *simDevice) GetUUID() (string, nvapi.Return)     { return d.uuid, nvapi.SUCCESS }
func (d *simDevice) GetName() (string, nvapi.Return)     { return d.name, nvapi.SUCCESS }
func (d *simDevice) GetPciBusID() (string, nvapi.Return) { return d.busID, nvapi.SUCCESS }

func (d *simDevice) GetMemoryInfo() (nvapi.Memory, nvapi.Return) {
	g := d.g
	used := uint64(g.memUsed(g.now()))
	return nvapi.Memory{Total: uint64(g.memTotal), Used: used, Free: uint64(g.memTotal) - used}, nvapi.SUCCESS
}

func (d *simDevice) GetUtilizationRates() (nvapi.Utilization, nvapi.Return) {
	g := d.g
	t := g.now()
	return nvapi.Utilization{Gpu: uint32(g.util(t)), Memory: uint32(g.memBW(t))}, nvapi.SUCCESS
}

func (d *simDevice) GetPowerUsage() (uint32, nvapi.Return) {
	return uint32(d.g.power(d.g.now()) * 1e3), nvapi.SUCCESS
}

func (d *simDevice) GetTotalEnergyConsumption() (uint64, nvapi.Return) {
	g := d.g
	g.mu.Lock()
	defer g.mu.Unlock()
	g.advance(g.now())
	return uint64(g.energyMJ), nvapi.SUCCESS
}

func (d *simDevice) GetSMClock() (uint32, nvapi.Return) {
	g := d.g
	if g.util(g.now()) > 0 {
		return uint32(g.model.maxMHz), nvapi.SUCCESS
	}
	return uint32(g.model.idleMHz), nvapi.SUCCESS
}

func (d *simDevice) GetGPUTemperature() (uint32, nvapi.Return) {
	g := d.g
	if g.noFields {
		return 0, nvapi.ERROR_NOT_SUPPORTED
	}
	t := g.now()
	return uint32(g.model.idleTemp + 0.3*g.util(t) + 2*g.noise(8, t)), nvapi.SUCCESS
}

func (d *simDevice) GetCurrentClocksEventReasons() (uint64, nvapi.Return) {
	g := d.g
	t := g.now()
	switch u := g.util(t); {
	case u == 0:
		return nvapi.ClocksEventReasonGpuIdle, nvapi.SUCCESS
	case u > 95 && g.noise(10, t) > 0.8:
		return nvapi.ClocksEventReasonSwPowerCap, nvapi.SUCCESS
	}
	return 0, nvapi.SUCCESS
}

func (d *simDevice) GetFieldValues(vals []nvapi.FieldValue) nvapi.Return {
	return d.g.fieldValues(vals)
}

func (d *simDevice) GetComputeRunningProcesses() ([]nvapi.ProcessInfo, nvapi.Return) {
	g := d.g
	out := make([]nvapi.ProcessInfo, len(g.procs))
	for i, p := range g.procs {
		p.UsedGpuMemory = uint64(g.memUsed(g.now())) / uint64(len(g.procs))
		out[i] = p
	}
	return out, nvapi.SUCCESS
}

func (d *simDevice) GetGraphicsRunningProcesses() ([]nvapi.ProcessInfo, nvapi.Return) {
	return nil, nvapi.SUCCESS
}

// GetProcessUtilization is not simulated: the simulator's GPUs are not
// shared, and their one process has the GPU's utilization.
func (d *simDevice) GetProcessUtilization(uint64) ([]nvapi.ProcessUtilizationSample, nvapi.Return) {
	return nil, nvapi.ERROR_NOT_SUPPORTED
}

func (d *simDevice) GpmQueryDeviceSupport() (bool, nvapi.Return) { return d.g.model.gpm, nvapi.SUCCESS }

func (d *simDevice) GpmSampleGet(s nvapi.GpmSample) nvapi.Return {
	if ss, ok := s.(*simGPMSample); ok {
		ss.gpu, ss.t = d.g, d.g.now()
		return nvapi.SUCCESS
	}
	return nvapi.ERROR_INVALID_ARGUMENT
}

// The simulated GPUs are whole GPUs: MIG is off.
func (d *simDevice) GetMigMode() (int, nvapi.Return) { return 0, nvapi.SUCCESS }
func (d *simDevice) GetMaxMigDeviceCount() (int, nvapi.Return) {
	return 0, nvapi.ERROR_NOT_SUPPORTED
}
func (d *simDevice) GetMigDeviceHandleByIndex(int) (nvapi.Device, nvapi.Return) {
	return nil, nvapi.ERROR_NOT_SUPPORTED
}
func (d *simDevice) GetGpuInstanceId() (int, nvapi.Return)     { return 0, nvapi.ERROR_NOT_SUPPORTED }
func (d *simDevice) GetComputeInstanceId() (int, nvapi.Return) { return 0, nvapi.ERROR_NOT_SUPPORTED }
func (d *simDevice) GetAttributes() (nvapi.DeviceAttributes, nvapi.Return) {
	return nvapi.DeviceAttributes{}, nvapi.ERROR_NOT_SUPPORTED
}

func (d *simDevice) GetNumaNodeId() (int, nvapi.Return)        { return d.numa, nvapi.SUCCESS }
func (d *simDevice) GetCpuAffinity(int) ([]uint, nvapi.Return) { return d.cpus, nvapi.SUCCESS }

// Every link of a DGX GPU goes to an NVSwitch; a PCIe server has none.
func (d *simDevice) GetNvLinkState(l int) (bool, nvapi.Return) {
	if l < d.topo.links {
		return true, nvapi.SUCCESS
	}
	return false, nvapi.ERROR_INVALID_ARGUMENT
}
func (d *simDevice) GetNvLinkVersion(int) (uint32, nvapi.Return) {
	return d.topo.version, nvapi.SUCCESS
}
func (d *simDevice) GetNvLinkRemotePciBusID(int) (string, nvapi.Return) { return "", nvapi.SUCCESS }
func (d *simDevice) GetNvLinkRemoteIsSwitch(int) (bool, nvapi.Return)   { return true, nvapi.SUCCESS }

// GPUs under the same NUMA node meet at its host bridges (NODE); others
// across the CPUs' interconnect (SYS).
func (d *simDevice) GetTopologyCommonAncestor(other nvapi.Device) (nvapi.TopologyLevel, nvapi.Return) {
	if o, ok := other.(*simDevice); ok && o.numa == d.numa {
		return nvapi.TOPOLOGY_NODE, nvapi.SUCCESS
	}
	return nvapi.TOPOLOGY_SYSTEM, nvapi.SUCCESS
}

// modelLabel is a GPU model name as the GPU operator's node label writes it.
func modelLabel(name string) string { return strings.ReplaceAll(name, " ", "-") }
