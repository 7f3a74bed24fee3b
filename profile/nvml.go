package profile

import (
	"errors"
	"fmt"
	"math"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// NVML is the part of the NVML library that seedance calls at library level.
// go-nvml's real library (nvml.New()) and its mock servers both satisfy it, so
// the simulator and the tests run the very code that samples real GPUs.
type NVML interface {
	Init() nvml.Return
	Shutdown() nvml.Return
	DeviceGetCount() (int, nvml.Return)
	DeviceGetHandleByIndex(int) (nvml.Device, nvml.Return)
	SystemGetDriverVersion() (string, nvml.Return)
	SystemGetNVMLVersion() (string, nvml.Return)
	GpmSampleAlloc() (nvml.GpmSample, nvml.Return)
	GpmMetricsGet(*nvml.GpmMetricsGetType) nvml.Return
}

// ErrNoGPU is returned when NVML cannot be used on this machine: the library or
// driver is missing, or there are no GPUs.
var ErrNoGPU = errors.New("no GPU available through NVML")

// noGPUHint names the alternatives to NVML on a machine without GPUs.
const noGPUHint = "use --source sim to try seedance on a simulated cluster, or --source prometheus for a cluster's dcgm-exporter metrics"

// InitNVML initialises lib and returns the number of GPUs, or an error that
// wraps ErrNoGPU and names the cause and the alternatives.
func InitNVML(lib NVML) (int, error) {
	if ret := lib.Init(); ret != nvml.SUCCESS {
		cause := "NVML initialisation failed (" + ret.Error() + ")"
		switch ret {
		case nvml.ERROR_LIBRARY_NOT_FOUND:
			cause = "NVML library not found (libnvidia-ml.so.1: is the NVIDIA driver installed?)"
		case nvml.ERROR_DRIVER_NOT_LOADED:
			cause = "NVIDIA driver not loaded"
		case nvml.ERROR_NO_PERMISSION:
			cause = "no permission to use NVML"
		}
		return 0, fmt.Errorf("%w: %s; %s", ErrNoGPU, cause, noGPUHint)
	}
	n, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS || n == 0 {
		lib.Shutdown()
		cause := "NVML found no GPU devices"
		if ret != nvml.SUCCESS {
			cause = "NVML could not count GPU devices (" + ret.Error() + ")"
		}
		return 0, fmt.Errorf("%w: %s; %s", ErrNoGPU, cause, noGPUHint)
	}
	return n, nil
}

// Counter fields read with GetFieldValues. NVLink throughput is counted in KiB.
var counterFields = [...]struct {
	id     uint32
	scope  uint32
	metric Metric
	unit   float64
}{
	{nvml.FI_DEV_PCIE_COUNT_TX_BYTES, 0, PCIeTxBytesPerS, 1},
	{nvml.FI_DEV_PCIE_COUNT_RX_BYTES, 0, PCIeRxBytesPerS, 1},
	{nvml.FI_DEV_NVLINK_THROUGHPUT_DATA_TX, math.MaxUint32, NVLinkTxBytesPerS, 1024},
	{nvml.FI_DEV_NVLINK_THROUGHPUT_DATA_RX, math.MaxUint32, NVLinkRxBytesPerS, 1024},
}

// MaxPlausibleRate bounds a counter-derived rate in bytes/s. A larger rate
// means the counter was reset (driver reload, GPU reset), not that it wrapped,
// so the sample is recorded as null.
const MaxPlausibleRate = 1e13

// counter remembers the previous reading of one cumulative counter.
type counter struct {
	valid bool
	value uint64
	ts    int64 // microseconds
}

// Rate converts a new reading of a cumulative counter into a rate per second.
// It handles wrap of 32- and 64-bit counters by modular subtraction and
// returns ok=false for the first reading, a non-advancing clock, or an
// implausible jump (a reset).
func (c *counter) Rate(value uint64, bits uint, ts int64, unit float64) (float64, bool) {
	prev := *c
	*c = counter{valid: true, value: value, ts: ts}
	if !prev.valid || ts <= prev.ts {
		return 0, false
	}
	delta := value - prev.value
	if bits == 32 {
		delta = uint64(uint32(value) - uint32(prev.value))
	}
	rate := float64(delta) * unit / (float64(ts-prev.ts) / 1e6)
	if rate > MaxPlausibleRate {
		return 0, false
	}
	return rate, true
}

func fieldValue(f nvml.FieldValue) (uint64, uint) {
	v := f.Value
	switch nvml.ValueType(f.ValueType) {
	case nvml.VALUE_TYPE_UNSIGNED_INT, nvml.VALUE_TYPE_SIGNED_INT:
		return uint64(uint32(v[0]) | uint32(v[1])<<8 | uint32(v[2])<<16 | uint32(v[3])<<24), 32
	case nvml.VALUE_TYPE_DOUBLE:
		return uint64(math.Float64frombits(le64(v))), 64
	}
	return le64(v), 64
}

func le64(v [8]byte) uint64 {
	return uint64(v[0]) | uint64(v[1])<<8 | uint64(v[2])<<16 | uint64(v[3])<<24 |
		uint64(v[4])<<32 | uint64(v[5])<<40 | uint64(v[6])<<48 | uint64(v[7])<<56
}

// PutFieldValue stores an unsigned 64-bit counter value in f, as NVML does.
func PutFieldValue(f *nvml.FieldValue, v uint64) {
	f.ValueType = uint32(nvml.VALUE_TYPE_UNSIGNED_LONG_LONG)
	for i := range f.Value {
		f.Value[i] = byte(v >> (8 * i))
	}
}
