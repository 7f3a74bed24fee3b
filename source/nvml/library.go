//go:build cgo

package nvml

import (
	"sync"

	nv "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/seedance/seedance/internal/nvapi"
)

// Built tells whether this build can read GPUs through NVML.
const Built = true

func init() {
	// NVML's own names of its return codes.
	nvapi.ErrorString = func(r nvapi.Return) string { return nv.Return(r).Error() }
}

// New returns the NVML library of this machine (libnvidia-ml.so.1, loaded
// at Init). On a machine without the driver, Init returns
// ERROR_LIBRARY_NOT_FOUND.
func New() (nvapi.Library, error) { return Wrap(nv.New()), nil }

// Wrap adapts a go-nvml library (the real one, or a go-nvml mock server in
// tests) to nvapi.
func Wrap(lib nv.Interface) nvapi.Library { return library{lib} }

type library struct{ l nv.Interface }

func (x library) Init() nvapi.Return     { return nvapi.Return(x.l.Init()) }
func (x library) Shutdown() nvapi.Return { return nvapi.Return(x.l.Shutdown()) }

func (x library) DeviceGetCount() (int, nvapi.Return) {
	n, r := x.l.DeviceGetCount()
	return n, nvapi.Return(r)
}

func (x library) DeviceGetHandleByIndex(i int) (nvapi.Device, nvapi.Return) {
	d, r := x.l.DeviceGetHandleByIndex(i)
	if r != nv.SUCCESS {
		return nil, nvapi.Return(r)
	}
	return &device{d: d}, nvapi.SUCCESS
}

func (x library) SystemGetDriverVersion() (string, nvapi.Return) {
	v, r := x.l.SystemGetDriverVersion()
	return v, nvapi.Return(r)
}

func (x library) SystemGetNVMLVersion() (string, nvapi.Return) {
	v, r := x.l.SystemGetNVMLVersion()
	return v, nvapi.Return(r)
}

// gpmSample wraps a go-nvml GPM sample.
type gpmSample struct{ s nv.GpmSample }

func (g gpmSample) Free() nvapi.Return { return nvapi.Return(g.s.Free()) }

func (x library) GpmSampleAlloc() (nvapi.GpmSample, nvapi.Return) {
	s, r := x.l.GpmSampleAlloc()
	if r != nv.SUCCESS {
		return nil, nvapi.Return(r)
	}
	return gpmSample{s}, nvapi.SUCCESS
}

// gpmGets holds nvmlGpmMetricsGet_t structs for reuse: each has room for
// every GPM metric (~40 KB), too much to allocate per GPU per sample.
var gpmGets = sync.Pool{New: func() any { return new(nv.GpmMetricsGetType) }}

func (x library) GpmMetricsGet(m *nvapi.GpmMetrics) nvapi.Return {
	s1, ok1 := m.Sample1.(gpmSample)
	s2, ok2 := m.Sample2.(gpmSample)
	if !ok1 || !ok2 || len(m.Metrics) > len(nv.GpmMetricsGetType{}.Metrics) {
		return nvapi.ERROR_INVALID_ARGUMENT
	}
	mg := gpmGets.Get().(*nv.GpmMetricsGetType)
	defer gpmGets.Put(mg)
	mg.NumMetrics, mg.Sample1, mg.Sample2 = uint32(len(m.Metrics)), s1.s, s2.s
	for i, q := range m.Metrics {
		mg.Metrics[i] = nv.GpmMetric{MetricId: q.MetricId}
	}
	r := x.l.GpmMetricsGet(mg)
	for i := range m.Metrics {
		m.Metrics[i].Value, m.Metrics[i].Return = mg.Metrics[i].Value, nvapi.Return(mg.Metrics[i].NvmlReturn)
	}
	return nvapi.Return(r)
}
