//go:build cgo

package nvml

import (
	"math"
	"strings"

	nv "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/seedance/seedance/internal/nvapi"
)

// device adapts a go-nvml device to nvapi. Like the device it wraps, it is
// used by one goroutine at a time (the GPU's sampler), so fields is its own
// buffer for GetFieldValues, reused on every sample.
type device struct {
	d      nv.Device
	fields []nv.FieldValue
}

func ret(r nv.Return) nvapi.Return { return nvapi.Return(r) }

func (x *device) GetUUID() (string, nvapi.Return) { v, r := x.d.GetUUID(); return v, ret(r) }
func (x *device) GetName() (string, nvapi.Return) { v, r := x.d.GetName(); return v, ret(r) }

func (x *device) GetPciBusID() (string, nvapi.Return) {
	p, r := x.d.GetPciInfo()
	return busID(p), ret(r)
}

func (x *device) GetMemoryInfo() (nvapi.Memory, nvapi.Return) {
	m, r := x.d.GetMemoryInfo()
	return nvapi.Memory{Total: m.Total, Free: m.Free, Used: m.Used}, ret(r)
}

func (x *device) GetUtilizationRates() (nvapi.Utilization, nvapi.Return) {
	u, r := x.d.GetUtilizationRates()
	return nvapi.Utilization{Gpu: u.Gpu, Memory: u.Memory}, ret(r)
}

func (x *device) GetPowerUsage() (uint32, nvapi.Return) {
	v, r := x.d.GetPowerUsage()
	return v, ret(r)
}

func (x *device) GetTotalEnergyConsumption() (uint64, nvapi.Return) {
	v, r := x.d.GetTotalEnergyConsumption()
	return v, ret(r)
}

func (x *device) GetSMClock() (uint32, nvapi.Return) {
	v, r := x.d.GetClockInfo(nv.CLOCK_SM)
	return v, ret(r)
}

func (x *device) GetGPUTemperature() (uint32, nvapi.Return) {
	v, r := x.d.GetTemperature(nv.TEMPERATURE_GPU)
	return v, ret(r)
}

func (x *device) GetCurrentClocksEventReasons() (uint64, nvapi.Return) {
	v, r := x.d.GetCurrentClocksEventReasons()
	return v, ret(r)
}

func (x *device) GetFieldValues(vals []nvapi.FieldValue) nvapi.Return {
	if cap(x.fields) < len(vals) {
		x.fields = make([]nv.FieldValue, len(vals))
	}
	fs := x.fields[:len(vals)]
	for i, v := range vals {
		fs[i] = nv.FieldValue{FieldId: v.FieldId, ScopeId: v.ScopeId}
	}
	r := x.d.GetFieldValues(fs)
	for i, f := range fs {
		vals[i].Timestamp, vals[i].Return = f.Timestamp, nvapi.Return(f.NvmlReturn)
		vals[i].Value, vals[i].Bits = fieldValue(f)
	}
	return ret(r)
}

func processes(ps []nv.ProcessInfo, r nv.Return) ([]nvapi.ProcessInfo, nvapi.Return) {
	out := make([]nvapi.ProcessInfo, len(ps))
	for i, p := range ps {
		out[i] = nvapi.ProcessInfo{Pid: p.Pid, UsedGpuMemory: p.UsedGpuMemory}
	}
	return out, ret(r)
}

func (x *device) GetComputeRunningProcesses() ([]nvapi.ProcessInfo, nvapi.Return) {
	return processes(x.d.GetComputeRunningProcesses())
}

func (x *device) GetGraphicsRunningProcesses() ([]nvapi.ProcessInfo, nvapi.Return) {
	return processes(x.d.GetGraphicsRunningProcesses())
}

func (x *device) GetProcessUtilization(lastSeen uint64) ([]nvapi.ProcessUtilizationSample, nvapi.Return) {
	ss, r := x.d.GetProcessUtilization(lastSeen)
	out := make([]nvapi.ProcessUtilizationSample, len(ss))
	for i, s := range ss {
		out[i] = nvapi.ProcessUtilizationSample{Pid: s.Pid, TimeStamp: s.TimeStamp, SmUtil: s.SmUtil}
	}
	return out, ret(r)
}

func (x *device) GpmQueryDeviceSupport() (bool, nvapi.Return) {
	s, r := x.d.GpmQueryDeviceSupport()
	return s.IsSupportedDevice != 0, ret(r)
}

func (x *device) GpmSampleGet(s nvapi.GpmSample) nvapi.Return {
	g, ok := s.(gpmSample)
	if !ok {
		return nvapi.ERROR_INVALID_ARGUMENT
	}
	return ret(x.d.GpmSampleGet(g.s))
}

func (x *device) GetMigMode() (int, nvapi.Return) {
	cur, _, r := x.d.GetMigMode()
	return cur, ret(r)
}

func (x *device) GetMaxMigDeviceCount() (int, nvapi.Return) {
	n, r := x.d.GetMaxMigDeviceCount()
	return n, ret(r)
}

func (x *device) GetMigDeviceHandleByIndex(i int) (nvapi.Device, nvapi.Return) {
	d, r := x.d.GetMigDeviceHandleByIndex(i)
	if r != nv.SUCCESS {
		return nil, ret(r)
	}
	return &device{d: d}, nvapi.SUCCESS
}

func (x *device) GetGpuInstanceId() (int, nvapi.Return) {
	v, r := x.d.GetGpuInstanceId()
	return v, ret(r)
}

func (x *device) GetComputeInstanceId() (int, nvapi.Return) {
	v, r := x.d.GetComputeInstanceId()
	return v, ret(r)
}

func (x *device) GetAttributes() (nvapi.DeviceAttributes, nvapi.Return) {
	a, r := x.d.GetAttributes()
	return nvapi.DeviceAttributes{GpuInstanceSliceCount: a.GpuInstanceSliceCount,
		ComputeInstanceSliceCount: a.ComputeInstanceSliceCount, MemorySizeMB: a.MemorySizeMB}, ret(r)
}

func (x *device) GetNumaNodeId() (int, nvapi.Return) { v, r := x.d.GetNumaNodeId(); return v, ret(r) }

func (x *device) GetCpuAffinity(words int) ([]uint, nvapi.Return) {
	v, r := x.d.GetCpuAffinity(words)
	return v, ret(r)
}

func (x *device) GetNvLinkState(l int) (bool, nvapi.Return) {
	s, r := x.d.GetNvLinkState(l)
	return s == nv.FEATURE_ENABLED, ret(r)
}

func (x *device) GetNvLinkVersion(l int) (uint32, nvapi.Return) {
	v, r := x.d.GetNvLinkVersion(l)
	return v, ret(r)
}

func (x *device) GetNvLinkRemotePciBusID(l int) (string, nvapi.Return) {
	p, r := x.d.GetNvLinkRemotePciInfo(l)
	return busID(p), ret(r)
}

func (x *device) GetNvLinkRemoteIsSwitch(l int) (bool, nvapi.Return) {
	t, r := x.d.GetNvLinkRemoteDeviceType(l)
	return t == nv.NVLINK_DEVICE_TYPE_SWITCH, ret(r)
}

func (x *device) GetTopologyCommonAncestor(other nvapi.Device) (nvapi.TopologyLevel, nvapi.Return) {
	o, ok := other.(*device)
	if !ok {
		return nvapi.TOPOLOGY_SYSTEM, nvapi.ERROR_INVALID_ARGUMENT
	}
	l, r := x.d.GetTopologyCommonAncestor(o.d)
	return nvapi.TopologyLevel(l), ret(r)
}

// busID writes a PCI address as sysfs and nvidia-smi do ("0000:18:00.0"):
// NVML pads the domain to 8 digits and uses upper case.
func busID(p nv.PciInfo) string {
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

// fieldValue widens a field's value to 64 bits and says how wide the
// counter is, for wrap arithmetic.
func fieldValue(f nv.FieldValue) (uint64, uint) {
	v := f.Value
	switch nv.ValueType(f.ValueType) {
	case nv.VALUE_TYPE_UNSIGNED_INT, nv.VALUE_TYPE_SIGNED_INT:
		return uint64(uint32(v[0]) | uint32(v[1])<<8 | uint32(v[2])<<16 | uint32(v[3])<<24), 32
	case nv.VALUE_TYPE_DOUBLE:
		return uint64(math.Float64frombits(le64(v))), 64
	}
	return le64(v), 64
}

func le64(v [8]byte) uint64 {
	return uint64(v[0]) | uint64(v[1])<<8 | uint64(v[2])<<16 | uint64(v[3])<<24 |
		uint64(v[4])<<32 | uint64(v[5])<<40 | uint64(v[6])<<48 | uint64(v[7])<<56
}
