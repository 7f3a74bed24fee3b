package profile

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/seedance/seedance/hwtopo"
)

// Row is one GPU's reading at one sample: a value per metric (NaN when not
// measured) and the error that made values missing, if any.
type Row struct {
	V   [NumMetrics]float64
	Err string
}

// NullRow returns a row with every metric null.
func NullRow(err string) Row {
	var r Row
	for i := range r.V {
		r.V[i] = Null
	}
	r.Err = err
	return r
}

// Proc is one process on a GPU, as NVML reports it.
type Proc struct {
	PID            int
	GPUMemoryBytes uint64
}

// gpuSampler reads one GPU or MIG device. It is used by one goroutine at a time.
type gpuSampler struct {
	lib      NVML
	dev      nvml.Device
	info     GPU
	has      [NumMetrics]bool
	hasUtil  bool
	hasGPM   bool
	fieldsOK [len(counterFields)]bool
	counters [len(counterFields)]counter
	fields   []nvml.FieldValue
	gpm      [2]nvml.GpmSample
	gpmCur   int
	// gpmGet is reused: the struct holds room for 477 metrics (~40 KB), too
	// much to allocate per sample.
	gpmGet *nvml.GpmMetricsGetType
	procs  []Proc
}

// newGPUSampler reads the device's identity and finds out, by calling each
// getter once, which metrics it supports. The probe also primes the counters.
func newGPUSampler(lib NVML, dev nvml.Device, index int, mig *MIG) *gpuSampler {
	g := &gpuSampler{lib: lib, dev: dev}
	g.info.Index = index
	g.info.MIG = mig
	if uuid, ret := dev.GetUUID(); ret == nvml.SUCCESS {
		g.info.UUID = uuid
	}
	if mig == nil {
		if name, ret := dev.GetName(); ret == nvml.SUCCESS {
			g.info.Model = name
		}
		if pci, ret := dev.GetPciInfo(); ret == nvml.SUCCESS {
			g.info.PCIBusID = hwtopo.BusID(pci)
		}
	}
	if mem, ret := dev.GetMemoryInfo(); ret == nvml.SUCCESS {
		g.info.MemoryTotalBytes = mem.Total
	}
	g.probe()
	return g
}

func (g *gpuSampler) probe() {
	_, ret := g.dev.GetUtilizationRates()
	g.hasUtil = ret != nvml.ERROR_NOT_SUPPORTED
	g.has[GPUUtilPct], g.has[MemBWUtilPct] = g.hasUtil, g.hasUtil
	if sup, ret := g.dev.GpmQueryDeviceSupport(); ret == nvml.SUCCESS && sup.IsSupportedDevice != 0 {
		if g.allocGPM() {
			g.hasGPM = true
			g.has[SMActivePct], g.has[MemBWUtilPct] = true, true
		}
	}
	_, ret = g.dev.GetMemoryInfo()
	g.has[MemUsedBytes] = ret != nvml.ERROR_NOT_SUPPORTED
	_, ret = g.dev.GetPowerUsage()
	g.has[PowerW] = ret != nvml.ERROR_NOT_SUPPORTED
	_, ret = g.dev.GetTotalEnergyConsumption()
	g.has[EnergyJ] = ret != nvml.ERROR_NOT_SUPPORTED
	_, ret = g.dev.GetClockInfo(nvml.CLOCK_SM)
	g.has[SMClockMHz] = ret != nvml.ERROR_NOT_SUPPORTED
	_, ret = g.dev.GetTemperature(nvml.TEMPERATURE_GPU)
	g.has[TempC] = ret != nvml.ERROR_NOT_SUPPORTED
	_, ret = g.dev.GetCurrentClocksEventReasons()
	g.has[ClockEventReasons] = ret != nvml.ERROR_NOT_SUPPORTED

	g.fields = make([]nvml.FieldValue, len(counterFields))
	g.resetFields()
	ret = g.dev.GetFieldValues(g.fields)
	for i, f := range counterFields {
		ok := ret == nvml.SUCCESS && nvml.Return(g.fields[i].NvmlReturn) != nvml.ERROR_NOT_SUPPORTED
		g.fieldsOK[i] = ok
		g.has[f.metric] = ok
		if ok && nvml.Return(g.fields[i].NvmlReturn) == nvml.SUCCESS {
			v, bits := fieldValue(g.fields[i])
			g.counters[i].Rate(v, bits, g.fields[i].Timestamp, f.unit)
		}
	}
	for m := Metric(0); m < NumMetrics; m++ {
		if !g.has[m] {
			g.info.Unsupported = append(g.info.Unsupported, m.String())
		}
	}
}

func (g *gpuSampler) allocGPM() bool {
	for i := range g.gpm {
		s, ret := g.lib.GpmSampleAlloc()
		if ret != nvml.SUCCESS {
			return false
		}
		g.gpm[i] = s
	}
	if g.dev.GpmSampleGet(g.gpm[0]) != nvml.SUCCESS {
		return false
	}
	return true
}

func (g *gpuSampler) resetFields() {
	for i, f := range counterFields {
		g.fields[i] = nvml.FieldValue{FieldId: f.id, ScopeId: f.scope}
	}
}

// sample reads every supported metric once. A call that fails leaves its
// metric null; the first failure's message becomes the row's error.
func (g *gpuSampler) sample() Row {
	r := NullRow("")
	fail := func(what string, ret nvml.Return) {
		if r.Err == "" {
			r.Err = fmt.Sprintf("%s: %s", what, ret.Error())
		}
	}
	if g.hasUtil {
		if u, ret := g.dev.GetUtilizationRates(); ret == nvml.SUCCESS {
			r.V[GPUUtilPct], r.V[MemBWUtilPct] = float64(u.Gpu), float64(u.Memory)
		} else {
			fail("utilization", ret)
		}
	}
	if g.hasGPM {
		g.sampleGPM(&r, fail)
	}
	if g.has[MemUsedBytes] {
		if m, ret := g.dev.GetMemoryInfo(); ret == nvml.SUCCESS {
			r.V[MemUsedBytes] = float64(m.Used)
		} else {
			fail("memory", ret)
		}
	}
	if g.has[PowerW] {
		if mw, ret := g.dev.GetPowerUsage(); ret == nvml.SUCCESS {
			r.V[PowerW] = float64(mw) / 1e3
		} else {
			fail("power", ret)
		}
	}
	if g.has[EnergyJ] {
		if mj, ret := g.dev.GetTotalEnergyConsumption(); ret == nvml.SUCCESS {
			r.V[EnergyJ] = float64(mj) / 1e3
		} else {
			fail("energy", ret)
		}
	}
	if g.has[SMClockMHz] {
		if c, ret := g.dev.GetClockInfo(nvml.CLOCK_SM); ret == nvml.SUCCESS {
			r.V[SMClockMHz] = float64(c)
		} else {
			fail("sm clock", ret)
		}
	}
	if g.has[TempC] {
		if c, ret := g.dev.GetTemperature(nvml.TEMPERATURE_GPU); ret == nvml.SUCCESS {
			r.V[TempC] = float64(c)
		} else {
			fail("temperature", ret)
		}
	}
	if g.has[ClockEventReasons] {
		if b, ret := g.dev.GetCurrentClocksEventReasons(); ret == nvml.SUCCESS {
			r.V[ClockEventReasons] = float64(b)
		} else {
			fail("clock event reasons", ret)
		}
	}
	g.sampleCounters(&r, fail)
	g.sampleProcs()
	return r
}

func (g *gpuSampler) sampleCounters(r *Row, fail func(string, nvml.Return)) {
	any := false
	for _, ok := range g.fieldsOK {
		any = any || ok
	}
	if !any {
		return
	}
	g.resetFields()
	if ret := g.dev.GetFieldValues(g.fields); ret != nvml.SUCCESS {
		fail("field values", ret)
		return
	}
	for i, f := range counterFields {
		if !g.fieldsOK[i] || nvml.Return(g.fields[i].NvmlReturn) != nvml.SUCCESS {
			continue
		}
		v, bits := fieldValue(g.fields[i])
		if rate, ok := g.counters[i].Rate(v, bits, g.fields[i].Timestamp, f.unit); ok {
			r.V[f.metric] = rate
		}
	}
}

func (g *gpuSampler) sampleGPM(r *Row, fail func(string, nvml.Return)) {
	next := 1 - g.gpmCur
	if ret := g.dev.GpmSampleGet(g.gpm[next]); ret != nvml.SUCCESS {
		fail("gpm sample", ret)
		return
	}
	if g.gpmGet == nil {
		g.gpmGet = new(nvml.GpmMetricsGetType)
	}
	mg := g.gpmGet
	mg.NumMetrics, mg.Sample1, mg.Sample2 = 2, g.gpm[g.gpmCur], g.gpm[next]
	mg.Metrics[0] = nvml.GpmMetric{MetricId: uint32(nvml.GPM_METRIC_SM_UTIL)}
	mg.Metrics[1] = nvml.GpmMetric{MetricId: uint32(nvml.GPM_METRIC_DRAM_BW_UTIL)}
	g.gpmCur = next
	if ret := g.lib.GpmMetricsGet(mg); ret != nvml.SUCCESS {
		fail("gpm metrics", ret)
		return
	}
	if nvml.Return(mg.Metrics[0].NvmlReturn) == nvml.SUCCESS {
		r.V[SMActivePct] = mg.Metrics[0].Value
	}
	if nvml.Return(mg.Metrics[1].NvmlReturn) == nvml.SUCCESS {
		r.V[MemBWUtilPct] = mg.Metrics[1].Value
	}
}

// sampleProcs lists the compute and graphics processes on the GPU. A process
// that is both is counted once.
func (g *gpuSampler) sampleProcs() {
	g.procs = g.procs[:0]
	for _, list := range [2]func() ([]nvml.ProcessInfo, nvml.Return){
		g.dev.GetComputeRunningProcesses, g.dev.GetGraphicsRunningProcesses,
	} {
		ps, ret := list()
		if ret != nvml.SUCCESS {
			continue
		}
	next:
		for _, p := range ps {
			for _, q := range g.procs {
				if q.PID == int(p.Pid) {
					continue next
				}
			}
			g.procs = append(g.procs, Proc{PID: int(p.Pid), GPUMemoryBytes: p.UsedGpuMemory})
		}
	}
}

// Free releases NVML resources held by the sampler.
func (g *gpuSampler) Free() {
	for _, s := range g.gpm {
		if s != nil {
			s.Free()
		}
	}
}
