package gpu

import (
	"errors"
	"fmt"
	"math"

	"github.com/seedance/seedance/internal/nvapi"
	"github.com/seedance/seedance/profile"
)

// NVML is the library-level part of NVML. source/nvml adapts go-nvml's real
// library (and its mock servers) to it, and the simulator implements it, so
// the simulator and the tests run the very code that samples real GPUs.
type NVML = nvapi.Library

// ErrNoGPU is returned when NVML cannot be used on this machine: the library or
// driver is missing, or there are no GPUs.
var ErrNoGPU = errors.New("no GPU available through NVML")

// noGPUHint names the alternatives to NVML on a machine without GPUs.
const noGPUHint = "use --source sim to try seedance on a simulated cluster, or --source prometheus for a cluster's dcgm-exporter metrics"

// InitNVML initialises lib and returns the number of GPUs, or an error that
// wraps ErrNoGPU and names the cause and the alternatives.
func InitNVML(lib NVML) (int, error) {
	if ret := lib.Init(); ret != nvapi.SUCCESS {
		cause := "NVML initialisation failed (" + ret.Error() + ")"
		switch ret {
		case nvapi.ERROR_LIBRARY_NOT_FOUND:
			cause = "NVML library not found (libnvidia-ml.so.1: is the NVIDIA driver installed?)"
		case nvapi.ERROR_DRIVER_NOT_LOADED:
			cause = "NVIDIA driver not loaded"
		case nvapi.ERROR_NO_PERMISSION:
			cause = "no permission to use NVML"
		}
		return 0, fmt.Errorf("%w: %s; %s", ErrNoGPU, cause, noGPUHint)
	}
	n, ret := lib.DeviceGetCount()
	if ret != nvapi.SUCCESS || n == 0 {
		lib.Shutdown()
		cause := "NVML found no GPU devices"
		if ret != nvapi.SUCCESS {
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
	metric profile.Metric
	unit   float64
}{
	{nvapi.FI_DEV_PCIE_COUNT_TX_BYTES, 0, profile.PCIeTxBytesPerS, 1},
	{nvapi.FI_DEV_PCIE_COUNT_RX_BYTES, 0, profile.PCIeRxBytesPerS, 1},
	{nvapi.FI_DEV_NVLINK_THROUGHPUT_DATA_TX, math.MaxUint32, profile.NVLinkTxBytesPerS, 1024},
	{nvapi.FI_DEV_NVLINK_THROUGHPUT_DATA_RX, math.MaxUint32, profile.NVLinkRxBytesPerS, 1024},
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
