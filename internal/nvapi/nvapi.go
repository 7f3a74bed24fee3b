// Package nvapi is the part of the NVML API that seedance calls, in pure Go:
// the GPU sampler (source/gpu), the topology reader (hwtopo) and the
// simulator (source/sim) are written against these interfaces, so that they
// build without cgo. source/nvml adapts go-nvml's real library (and its mock
// servers, in tests) to them; the simulator implements them itself.
//
// Names and numeric values follow NVML's, so that code reads as NVML code;
// where NVML returns a C struct that seedance only reads one field of (a PCI
// bus id, a link's state), the method returns that field.
package nvapi

// Return is an NVML return code.
type Return int32

// The NVML return codes seedance tells apart (nvml.h's values).
const (
	SUCCESS                 Return = 0
	ERROR_UNINITIALIZED     Return = 1
	ERROR_INVALID_ARGUMENT  Return = 2
	ERROR_NOT_SUPPORTED     Return = 3
	ERROR_NO_PERMISSION     Return = 4
	ERROR_NOT_FOUND         Return = 6
	ERROR_DRIVER_NOT_LOADED Return = 9
	ERROR_TIMEOUT           Return = 10
	ERROR_LIBRARY_NOT_FOUND Return = 12
	ERROR_GPU_IS_LOST       Return = 15
	ERROR_UNKNOWN           Return = 999
)

// ErrorString names a return code. The NVML adapter replaces it with the
// library's own nvmlErrorString; the default names the codes above.
var ErrorString = func(r Return) string {
	if s, ok := returnNames[r]; ok {
		return s
	}
	return "ERROR_UNKNOWN"
}

var returnNames = map[Return]string{
	SUCCESS: "SUCCESS", ERROR_UNINITIALIZED: "ERROR_UNINITIALIZED", ERROR_INVALID_ARGUMENT: "ERROR_INVALID_ARGUMENT",
	ERROR_NOT_SUPPORTED: "ERROR_NOT_SUPPORTED", ERROR_NO_PERMISSION: "ERROR_NO_PERMISSION", ERROR_NOT_FOUND: "ERROR_NOT_FOUND",
	ERROR_DRIVER_NOT_LOADED: "ERROR_DRIVER_NOT_LOADED", ERROR_TIMEOUT: "ERROR_TIMEOUT",
	ERROR_LIBRARY_NOT_FOUND: "ERROR_LIBRARY_NOT_FOUND", ERROR_GPU_IS_LOST: "ERROR_GPU_IS_LOST",
}

// Error returns the code's name, as go-nvml's Return.Error does.
func (r Return) Error() string { return ErrorString(r) }

// Field ids read with GetFieldValues (nvml.h's NVML_FI_DEV_*).
const (
	FI_DEV_NVLINK_THROUGHPUT_DATA_TX uint32 = 138
	FI_DEV_NVLINK_THROUGHPUT_DATA_RX uint32 = 139
	FI_DEV_PCIE_COUNT_TX_BYTES       uint32 = 197
	FI_DEV_PCIE_COUNT_RX_BYTES       uint32 = 198
)

// GPM metric ids (nvml.h's NVML_GPM_METRIC_*).
const (
	GPM_METRIC_SM_UTIL      uint32 = 2
	GPM_METRIC_DRAM_BW_UTIL uint32 = 10
)

// Clocks event reasons (nvml.h's nvmlClocksEventReason*).
const (
	ClocksEventReasonGpuIdle    uint64 = 1
	ClocksEventReasonSwPowerCap uint64 = 4
)

// TopologyLevel is the common ancestor of two GPUs (nvmlGpuTopologyLevel_t).
type TopologyLevel int32

// Topology levels, nearest first.
const (
	TOPOLOGY_INTERNAL   TopologyLevel = 0
	TOPOLOGY_SINGLE     TopologyLevel = 10
	TOPOLOGY_MULTIPLE   TopologyLevel = 20
	TOPOLOGY_HOSTBRIDGE TopologyLevel = 30
	TOPOLOGY_NODE       TopologyLevel = 40
	TOPOLOGY_SYSTEM     TopologyLevel = 50
)

// DEVICE_MIG_ENABLE is the MIG mode of a GPU partitioned into MIG devices.
const DEVICE_MIG_ENABLE = 1

// Utilization is nvmlUtilization_t: percent of time busy over the driver's
// last sample period.
type Utilization struct{ Gpu, Memory uint32 }

// Memory is nvmlMemory_t, in bytes.
type Memory struct{ Total, Free, Used uint64 }

// ProcessInfo is one process on a GPU.
type ProcessInfo struct {
	Pid           uint32
	UsedGpuMemory uint64
}

// ProcessUtilizationSample is one process's utilization of a GPU over one
// of NVML's sampling periods, ending at TimeStamp (µs): what
// nvmlDeviceGetProcessUtilization returns, less the encoder, decoder and
// memory figures seedance does not read.
type ProcessUtilizationSample struct {
	Pid       uint32
	TimeStamp uint64
	SmUtil    uint32
}

// DeviceAttributes are a MIG device's slices and memory.
type DeviceAttributes struct {
	GpuInstanceSliceCount     uint32
	ComputeInstanceSliceCount uint32
	MemorySizeMB              uint64
}

// FieldValue is one field read by GetFieldValues: the caller sets FieldId and
// ScopeId; the device sets Timestamp (µs), Return and the value, widened to
// 64 bits with Bits telling how wide the counter is (32 or 64, for wrap).
type FieldValue struct {
	FieldId, ScopeId uint32
	Timestamp        int64
	Return           Return
	Value            uint64
	Bits             uint
}

// GpmSample is a GPM sample buffer.
type GpmSample interface{ Free() Return }

// GpmMetric is one metric asked of GpmMetricsGet, and its answer.
type GpmMetric struct {
	MetricId uint32
	Value    float64
	Return   Return
}

// GpmMetrics asks for metrics between two samples (nvmlGpmMetricsGet_t).
type GpmMetrics struct {
	Sample1, Sample2 GpmSample
	Metrics          []GpmMetric
}

// Library is the library-level part of NVML.
type Library interface {
	Init() Return
	Shutdown() Return
	DeviceGetCount() (int, Return)
	DeviceGetHandleByIndex(int) (Device, Return)
	SystemGetDriverVersion() (string, Return)
	SystemGetNVMLVersion() (string, Return)
	GpmSampleAlloc() (GpmSample, Return)
	GpmMetricsGet(*GpmMetrics) Return
}

// Device is one GPU or MIG device.
type Device interface {
	GetUUID() (string, Return)
	GetName() (string, Return)
	// GetPciBusID is the PCI address as sysfs writes it ("0000:18:00.0").
	GetPciBusID() (string, Return)
	GetMemoryInfo() (Memory, Return)
	GetUtilizationRates() (Utilization, Return)
	GetPowerUsage() (uint32, Return)             // mW
	GetTotalEnergyConsumption() (uint64, Return) // mJ
	GetSMClock() (uint32, Return)                // MHz
	GetGPUTemperature() (uint32, Return)         // °C
	GetCurrentClocksEventReasons() (uint64, Return)
	GetFieldValues([]FieldValue) Return
	GetComputeRunningProcesses() ([]ProcessInfo, Return)
	GetGraphicsRunningProcesses() ([]ProcessInfo, Return)
	// GetProcessUtilization returns the processes' samples newer than
	// lastSeen (µs); ERROR_NOT_FOUND when there is none.
	GetProcessUtilization(lastSeen uint64) ([]ProcessUtilizationSample, Return)
	GpmQueryDeviceSupport() (bool, Return)
	GpmSampleGet(GpmSample) Return

	GetMigMode() (current int, ret Return)
	GetMaxMigDeviceCount() (int, Return)
	GetMigDeviceHandleByIndex(int) (Device, Return)
	GetGpuInstanceId() (int, Return)
	GetComputeInstanceId() (int, Return)
	GetAttributes() (DeviceAttributes, Return)

	GetNumaNodeId() (int, Return)
	GetCpuAffinity(words int) ([]uint, Return)
	// GetNvLinkState tells whether link l is up.
	GetNvLinkState(l int) (bool, Return)
	GetNvLinkVersion(l int) (uint32, Return)
	GetNvLinkRemotePciBusID(l int) (string, Return)
	// GetNvLinkRemoteIsSwitch tells whether link l ends at an NVSwitch.
	GetNvLinkRemoteIsSwitch(l int) (bool, Return)
	GetTopologyCommonAncestor(Device) (TopologyLevel, Return)
}
