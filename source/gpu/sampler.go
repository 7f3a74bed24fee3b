package gpu

import (
	"fmt"

	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source"

	"github.com/seedance/seedance/internal/nvapi"
)

// gpuSampler reads one GPU or MIG device. It is used by one goroutine at a time.
type gpuSampler struct {
	lib      NVML
	dev      nvapi.Device
	info     profile.GPU
	has      [profile.NumMetrics]bool
	hasUtil  bool
	hasGPM   bool
	fieldsOK [len(counterFields)]bool
	counters [len(counterFields)]counter
	fields   []nvapi.FieldValue
	gpm      [2]nvapi.GpmSample
	gpmCur   int
	// gpmGet is reused between samples.
	gpmGet nvapi.GpmMetrics
	procs  []source.Proc
	// procUtil: the device reports per-process utilization; lastSeen is
	// the time (µs) of the newest sample read of it.
	procUtil bool
	lastSeen uint64
}

// newGPUSampler reads the device's identity and finds out, by calling each
// getter once, which metrics it supports. The probe also primes the counters.
func newGPUSampler(lib NVML, dev nvapi.Device, index int, mig *profile.MIG) *gpuSampler {
	g := &gpuSampler{lib: lib, dev: dev}
	g.info.Index = index
	g.info.MIG = mig
	if uuid, ret := dev.GetUUID(); ret == nvapi.SUCCESS {
		g.info.UUID = uuid
	}
	if mig == nil {
		if name, ret := dev.GetName(); ret == nvapi.SUCCESS {
			g.info.Model = name
		}
		if bus, ret := dev.GetPciBusID(); ret == nvapi.SUCCESS {
			g.info.PCIBusID = bus
		}
	}
	if mem, ret := dev.GetMemoryInfo(); ret == nvapi.SUCCESS {
		g.info.MemoryTotalBytes = mem.Total
	}
	g.probe()
	return g
}

func (g *gpuSampler) probe() {
	_, ret := g.dev.GetUtilizationRates()
	g.hasUtil = ret != nvapi.ERROR_NOT_SUPPORTED
	g.has[profile.GPUUtilPct], g.has[profile.MemBWUtilPct] = g.hasUtil, g.hasUtil
	if sup, ret := g.dev.GpmQueryDeviceSupport(); ret == nvapi.SUCCESS && sup {
		if g.allocGPM() {
			g.hasGPM = true
			g.has[profile.SMActivePct], g.has[profile.MemBWUtilPct] = true, true
		}
	}
	if ss, ret := g.dev.GetProcessUtilization(0); ret == nvapi.SUCCESS || ret == nvapi.ERROR_NOT_FOUND {
		g.procUtil = true
		g.lastSeen = newest(ss, 0) // what came before profiling is not its
	}
	_, ret = g.dev.GetMemoryInfo()
	g.has[profile.MemUsedBytes] = ret != nvapi.ERROR_NOT_SUPPORTED
	_, ret = g.dev.GetPowerUsage()
	g.has[profile.PowerW] = ret != nvapi.ERROR_NOT_SUPPORTED
	_, ret = g.dev.GetTotalEnergyConsumption()
	g.has[profile.EnergyJ] = ret != nvapi.ERROR_NOT_SUPPORTED
	_, ret = g.dev.GetSMClock()
	g.has[profile.SMClockMHz] = ret != nvapi.ERROR_NOT_SUPPORTED
	_, ret = g.dev.GetGPUTemperature()
	g.has[profile.TempC] = ret != nvapi.ERROR_NOT_SUPPORTED
	_, ret = g.dev.GetCurrentClocksEventReasons()
	g.has[profile.ClockEventReasons] = ret != nvapi.ERROR_NOT_SUPPORTED

	g.fields = make([]nvapi.FieldValue, len(counterFields))
	g.resetFields()
	ret = g.dev.GetFieldValues(g.fields)
	for i, f := range counterFields {
		ok := ret == nvapi.SUCCESS && g.fields[i].Return != nvapi.ERROR_NOT_SUPPORTED
		g.fieldsOK[i] = ok
		g.has[f.metric] = ok
		if ok && g.fields[i].Return == nvapi.SUCCESS {
			g.counters[i].Rate(g.fields[i].Value, g.fields[i].Bits, g.fields[i].Timestamp, f.unit)
		}
	}
	for m := profile.Metric(0); m < profile.NumMetrics; m++ {
		if !g.has[m] {
			g.info.Unsupported = append(g.info.Unsupported, m.String())
		}
	}
}

func (g *gpuSampler) allocGPM() bool {
	for i := range g.gpm {
		s, ret := g.lib.GpmSampleAlloc()
		if ret != nvapi.SUCCESS {
			return false
		}
		g.gpm[i] = s
	}
	return g.dev.GpmSampleGet(g.gpm[0]) == nvapi.SUCCESS
}

func (g *gpuSampler) resetFields() {
	for i, f := range counterFields {
		g.fields[i] = nvapi.FieldValue{FieldId: f.id, ScopeId: f.scope}
	}
}

// sample reads every supported metric once. A call that fails leaves its
// metric null; the first failure's message becomes the row's error.
func (g *gpuSampler) sample() source.Row {
	r := source.NullRow("")
	fail := func(what string, ret nvapi.Return) {
		if r.Err == "" {
			r.Err = fmt.Sprintf("%s: %s", what, ret.Error())
		}
	}
	if g.hasUtil {
		if u, ret := g.dev.GetUtilizationRates(); ret == nvapi.SUCCESS {
			r.V[profile.GPUUtilPct], r.V[profile.MemBWUtilPct] = float64(u.Gpu), float64(u.Memory)
		} else {
			fail("utilization", ret)
		}
	}
	if g.hasGPM {
		g.sampleGPM(&r, fail)
	}
	if g.has[profile.MemUsedBytes] {
		if m, ret := g.dev.GetMemoryInfo(); ret == nvapi.SUCCESS {
			r.V[profile.MemUsedBytes] = float64(m.Used)
		} else {
			fail("memory", ret)
		}
	}
	if g.has[profile.PowerW] {
		if mw, ret := g.dev.GetPowerUsage(); ret == nvapi.SUCCESS {
			r.V[profile.PowerW] = float64(mw) / 1e3
		} else {
			fail("power", ret)
		}
	}
	if g.has[profile.EnergyJ] {
		if mj, ret := g.dev.GetTotalEnergyConsumption(); ret == nvapi.SUCCESS {
			r.V[profile.EnergyJ] = float64(mj) / 1e3
		} else {
			fail("energy", ret)
		}
	}
	if g.has[profile.SMClockMHz] {
		if c, ret := g.dev.GetSMClock(); ret == nvapi.SUCCESS {
			r.V[profile.SMClockMHz] = float64(c)
		} else {
			fail("sm clock", ret)
		}
	}
	if g.has[profile.TempC] {
		if c, ret := g.dev.GetGPUTemperature(); ret == nvapi.SUCCESS {
			r.V[profile.TempC] = float64(c)
		} else {
			fail("temperature", ret)
		}
	}
	if g.has[profile.ClockEventReasons] {
		if b, ret := g.dev.GetCurrentClocksEventReasons(); ret == nvapi.SUCCESS {
			r.V[profile.ClockEventReasons] = float64(b)
		} else {
			fail("clock event reasons", ret)
		}
	}
	g.sampleCounters(&r, fail)
	g.sampleProcs()
	return r
}

func (g *gpuSampler) sampleCounters(r *source.Row, fail func(string, nvapi.Return)) {
	supported := false
	for _, ok := range g.fieldsOK {
		supported = supported || ok
	}
	if !supported {
		return
	}
	g.resetFields()
	if ret := g.dev.GetFieldValues(g.fields); ret != nvapi.SUCCESS {
		fail("field values", ret)
		return
	}
	for i, f := range counterFields {
		fv := &g.fields[i]
		if !g.fieldsOK[i] || fv.Return != nvapi.SUCCESS {
			continue
		}
		if rate, ok := g.counters[i].Rate(fv.Value, fv.Bits, fv.Timestamp, f.unit); ok {
			r.V[f.metric] = rate
		}
	}
}

func (g *gpuSampler) sampleGPM(r *source.Row, fail func(string, nvapi.Return)) {
	next := 1 - g.gpmCur
	if ret := g.dev.GpmSampleGet(g.gpm[next]); ret != nvapi.SUCCESS {
		fail("gpm sample", ret)
		return
	}
	mg := &g.gpmGet
	mg.Sample1, mg.Sample2 = g.gpm[g.gpmCur], g.gpm[next]
	mg.Metrics = append(mg.Metrics[:0], nvapi.GpmMetric{MetricId: nvapi.GPM_METRIC_SM_UTIL}, nvapi.GpmMetric{MetricId: nvapi.GPM_METRIC_DRAM_BW_UTIL})
	g.gpmCur = next
	if ret := g.lib.GpmMetricsGet(mg); ret != nvapi.SUCCESS {
		fail("gpm metrics", ret)
		return
	}
	if mg.Metrics[0].Return == nvapi.SUCCESS {
		r.V[profile.SMActivePct] = mg.Metrics[0].Value
	}
	if mg.Metrics[1].Return == nvapi.SUCCESS {
		r.V[profile.MemBWUtilPct] = mg.Metrics[1].Value
	}
}

// sampleProcs lists the compute and graphics processes on the GPU. A process
// that is both is counted once.
func (g *gpuSampler) sampleProcs() {
	g.procs = g.procs[:0]
	for _, list := range [2]func() ([]nvapi.ProcessInfo, nvapi.Return){
		g.dev.GetComputeRunningProcesses, g.dev.GetGraphicsRunningProcesses,
	} {
		ps, ret := list()
		if ret != nvapi.SUCCESS {
			continue
		}
	next:
		for _, p := range ps {
			for _, q := range g.procs {
				if q.PID == int(p.Pid) {
					continue next
				}
			}
			g.procs = append(g.procs, source.Proc{PID: int(p.Pid), GPUMemoryBytes: p.UsedGpuMemory, SMUtilPct: profile.Null})
		}
	}
	g.sampleProcUtil()
}

// sampleProcUtil gives each process its mean SM utilization over NVML's
// samples since the last call: 0 for a process with none (it ran no
// kernel), NaN for all when the call fails.
func (g *gpuSampler) sampleProcUtil() {
	if !g.procUtil {
		return
	}
	ss, ret := g.dev.GetProcessUtilization(g.lastSeen)
	if ret != nvapi.SUCCESS && ret != nvapi.ERROR_NOT_FOUND {
		return
	}
	g.lastSeen = newest(ss, g.lastSeen)
	for i := range g.procs {
		sum, n := 0.0, 0
		for _, s := range ss {
			if int(s.Pid) == g.procs[i].PID && s.SmUtil <= 100 {
				sum, n = sum+float64(s.SmUtil), n+1
			}
		}
		g.procs[i].SMUtilPct = 0
		if n > 0 {
			g.procs[i].SMUtilPct = sum / float64(n)
		}
	}
}

// newest is the latest time stamp of ss, at least since.
func newest(ss []nvapi.ProcessUtilizationSample, since uint64) uint64 {
	for _, s := range ss {
		since = max(since, s.TimeStamp)
	}
	return since
}

// Free releases NVML resources held by the sampler.
func (g *gpuSampler) Free() {
	for _, s := range g.gpm {
		if s != nil {
			s.Free()
		}
	}
}
