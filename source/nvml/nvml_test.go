//go:build cgo

package nvml

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source"
	"github.com/seedance/seedance/source/gpu"
	"github.com/seedance/seedance/source/sim"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// fakeGPU holds the values a test injects into one mock device.
type fakeGPU struct {
	util, memUtil     uint32
	used              uint64
	powerMW           uint32
	energyMJ          uint64
	clock, temp       uint32
	pcieTx, pcieRx    uint64
	nvTx, nvRx        uint64
	ts                int64 // µs
	ret               nvml.Return
	fieldsUnsupported bool
	procs             []nvml.ProcessInfo
	block             chan struct{} // when set, GetPowerUsage waits on it
	// smUtil, by pid: what each call of GetProcessUtilization reports,
	// one sample per process a second after the last call's.
	smUtil  map[uint32]uint32
	procNow uint64
}

func (f *fakeGPU) r() nvml.Return {
	if f.ret == 0 {
		return nvml.SUCCESS
	}
	return f.ret
}

func installFake(d *mock.Device, f *fakeGPU) {
	d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
		return nvml.Utilization{Gpu: f.util, Memory: f.memUtil}, f.r()
	}
	d.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) { return nvml.Memory{Total: 80 << 30, Used: f.used}, f.r() }
	d.GetPowerUsageFunc = func() (uint32, nvml.Return) {
		if f.block != nil {
			<-f.block
		}
		return f.powerMW, f.r()
	}
	d.GetTotalEnergyConsumptionFunc = func() (uint64, nvml.Return) { return f.energyMJ, f.r() }
	d.GetClockInfoFunc = func(nvml.ClockType) (uint32, nvml.Return) { return f.clock, f.r() }
	d.GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) { return f.temp, f.r() }
	d.GetCurrentClocksEventReasonsFunc = func() (uint64, nvml.Return) { return 0, f.r() }
	d.GpmQueryDeviceSupportFunc = func() (nvml.GpmSupport, nvml.Return) { return nvml.GpmSupport{}, nvml.SUCCESS }
	d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return f.procs, nvml.SUCCESS }
	d.GetGraphicsRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.SUCCESS }
	d.GetProcessUtilizationFunc = func(last uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) {
		f.procNow += 1e6
		var out []nvml.ProcessUtilizationSample
		for pid, u := range f.smUtil {
			if f.procNow > last {
				out = append(out, nvml.ProcessUtilizationSample{Pid: pid, TimeStamp: f.procNow, SmUtil: u})
			}
		}
		if len(out) == 0 {
			return nil, nvml.ERROR_NOT_FOUND
		}
		return out, nvml.SUCCESS
	}
	d.GetFieldValuesFunc = func(vals []nvml.FieldValue) nvml.Return {
		for i := range vals {
			v := &vals[i]
			v.Timestamp = f.ts
			if f.fieldsUnsupported {
				v.NvmlReturn = uint32(nvml.ERROR_NOT_SUPPORTED)
				continue
			}
			v.NvmlReturn = uint32(nvml.SUCCESS)
			switch v.FieldId {
			case nvml.FI_DEV_PCIE_COUNT_TX_BYTES:
				putFieldValue(v, f.pcieTx)
			case nvml.FI_DEV_PCIE_COUNT_RX_BYTES:
				putFieldValue(v, f.pcieRx)
			case nvml.FI_DEV_NVLINK_THROUGHPUT_DATA_TX:
				putFieldValue(v, f.nvTx)
			case nvml.FI_DEV_NVLINK_THROUGHPUT_DATA_RX:
				putFieldValue(v, f.nvRx)
			}
		}
		return nvml.SUCCESS
	}
}

// newFakeNode returns an 8-GPU DGX H100 mock whose devices report the fakes.
func newFakeNode(t *testing.T) (*server.Server, []*fakeGPU) {
	t.Helper()
	srv := dgxh100.New()
	fakes := make([]*fakeGPU, len(srv.Devices))
	for i, d := range srv.Devices {
		fakes[i] = &fakeGPU{util: uint32(10 * i), used: 1 << 30, powerMW: 69850, energyMJ: 1e6, clock: 1980, temp: 41}
		installFake(&d.(*server.Device).Device, fakes[i])
	}
	return srv, fakes
}

func openNode(t *testing.T, lib nvml.Interface, o gpu.NodeOptions) *gpu.Node {
	t.Helper()
	if o.Name == "" {
		o.Name = "node-a"
	}
	n, err := gpu.OpenNode(Wrap(lib), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

func TestNVMLSampleValues(t *testing.T) {
	srv, fakes := newFakeNode(t)
	n := openNode(t, srv, gpu.NodeOptions{})
	inv := n.Inventory()[0]
	if len(inv.GPUs) != 8 || inv.GPUs[3].Model != "NVIDIA H100 80GB HBM3" || inv.GPUs[3].Index != 3 {
		t.Fatalf("inventory = %+v", inv.GPUs[3])
	}
	if len(inv.GPUs[0].Unsupported) != 1 || inv.GPUs[0].Unsupported[0] != "sm_active_pct" {
		t.Fatalf("unsupported = %v (GPM is off in this mock)", inv.GPUs[0].Unsupported)
	}
	f := fakes[2]
	f.ts, f.pcieTx, f.nvTx, f.energyMJ = 2e6, 4e9, 1e6, 1_500_000 // 2 s after the probe at ts=0
	rows, _ := n.Sample(context.Background())
	r := rows[0][2]
	want := map[profile.Metric]float64{
		profile.GPUUtilPct: 20, profile.MemUsedBytes: 1 << 30, profile.PowerW: 69.85, profile.EnergyJ: 1500, profile.SMClockMHz: 1980, profile.TempC: 41,
		profile.PCIeTxBytesPerS: 2e9, profile.PCIeRxBytesPerS: 0, profile.NVLinkTxBytesPerS: 1e6 * 1024 / 2,
	}
	for m, v := range want {
		if r.V[m] != v {
			t.Errorf("%s = %v, want %v", m, r.V[m], v)
		}
	}
	if !profile.IsNull(r.V[profile.SMActivePct]) || r.Err != "" {
		t.Errorf("sm_active = %v, err = %q", r.V[profile.SMActivePct], r.Err)
	}
}

func TestNVMLCounterWrap(t *testing.T) {
	srv, fakes := newFakeNode(t)
	f := fakes[0]
	f.pcieTx = math.MaxUint64 - 999 // the probe reads this at ts=0
	n := openNode(t, srv, gpu.NodeOptions{})
	f.pcieTx, f.ts = 1000, 1e6 // wrapped: 2000 bytes in 1 s
	rows, _ := n.Sample(context.Background())
	if got := rows[0][0].V[profile.PCIeTxBytesPerS]; got != 2000 {
		t.Fatalf("rate across wrap = %v, want 2000", got)
	}
	f.pcieTx, f.ts = 10, 2e6 // reset: counter went back, far from the top
	f.pcieTx = 0
	rows, _ = n.Sample(context.Background())
	if got := rows[0][0].V[profile.PCIeTxBytesPerS]; !profile.IsNull(got) {
		t.Fatalf("rate after reset = %v, want null", got)
	}
}

func TestNVMLUnsupportedFields(t *testing.T) {
	srv, fakes := newFakeNode(t)
	fakes[5].fieldsUnsupported = true
	n := openNode(t, srv, gpu.NodeOptions{})
	g := n.Inventory()[0].GPUs[5]
	for _, m := range []string{"pcie_tx_bytes_per_s", "nvlink_rx_bytes_per_s"} {
		if !strings.Contains(strings.Join(g.Unsupported, ","), m) {
			t.Errorf("%s not in unsupported %v", m, g.Unsupported)
		}
	}
	clk := sim.NewClock(sim.DefaultStart)
	p, err := source.Record(context.Background(), n, source.RecordOptions{Interval: time.Second, Duration: 3 * time.Second, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	s := p.Nodes[0].GPUs[5].Series
	if s.PCIeTxBytesPerS != nil || s.NVLinkRxBytesPerS != nil || len(s.GPUUtilPct) != 3 {
		t.Fatalf("unsupported metric has an array or supported one lacks it: %+v", s)
	}
	if p.Nodes[0].GPUs[4].Series.PCIeTxBytesPerS == nil {
		t.Fatal("GPU 4 lost its PCIe column")
	}
}

func TestNVMLGPULostMidRun(t *testing.T) {
	srv, fakes := newFakeNode(t)
	n := openNode(t, srv, gpu.NodeOptions{})
	clk := sim.NewClock(sim.DefaultStart)
	samples := 0
	p, err := source.Record(context.Background(), n, source.RecordOptions{
		Interval: time.Second, Duration: 6 * time.Second, Clock: clk,
		OnSample: func(source.Progress) {
			samples++
			if samples == 2 {
				fakes[3].ret = nvml.ERROR_GPU_IS_LOST
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	lost := p.Nodes[0].GPUs[3]
	for i, v := range lost.Series.GPUUtilPct {
		if (i >= 2) != profile.IsNull(v) {
			t.Errorf("sample %d: util %v", i, v)
		}
	}
	if len(lost.Errors) != 1 || lost.Errors[0].T != 2 || !strings.Contains(lost.Errors[0].Error, "ERROR_GPU_IS_LOST") {
		t.Fatalf("errors = %+v, want one entry at t=2", lost.Errors)
	}
	other := p.Nodes[0].GPUs[4].Series.GPUUtilPct
	if len(other) != 6 || other[5] != 40 {
		t.Fatalf("other GPU stopped being sampled: %v", other)
	}
}

func TestNVMLSlowGPUDoesNotDelayOthers(t *testing.T) {
	srv, fakes := newFakeNode(t)
	n := openNode(t, srv, gpu.NodeOptions{Timeout: 50 * time.Millisecond})
	release := make(chan struct{})
	fakes[1].block = release
	rows, _ := n.Sample(context.Background())
	// The slow GPU is still inside GetPowerUsage: Sample did not wait for it.
	if !profile.IsNull(rows[0][1].V[profile.GPUUtilPct]) || !strings.Contains(rows[0][1].Err, "did not answer") {
		t.Fatalf("slow GPU row = %+v", rows[0][1])
	}
	for i, r := range rows[0] {
		if i != 1 && (r.Err != "" || r.V[profile.GPUUtilPct] != float64(10*i)) {
			t.Errorf("GPU %d = %v %q", i, r.V[profile.GPUUtilPct], r.Err)
		}
	}
	// While it is still busy, the next sample does not queue behind it.
	rows, _ = n.Sample(context.Background())
	if !profile.IsNull(rows[0][1].V[profile.PowerW]) || rows[0][0].V[profile.PowerW] != 69.85 {
		t.Fatalf("second sample: slow %v, fast %v", rows[0][1].V[profile.PowerW], rows[0][0].V[profile.PowerW])
	}
	close(release)
	// Once it answers, it is sampled again.
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		rows, _ = n.Sample(context.Background())
		if rows[0][1].Err == "" {
			return
		}
	}
	t.Fatal("slow GPU never recovered")
}

func TestNVMLMIGDevices(t *testing.T) {
	srv := dgxa100.New()
	for _, d := range srv.Devices {
		installFake(&d.(*server.Device).Device, &fakeGPU{})
	}
	parent := srv.Devices[0].(*server.Device)
	parent.MigMode = nvml.DEVICE_MIG_ENABLE
	parent.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{}, nvml.ERROR_NOT_SUPPORTED }
	var migs []*mock.Device
	for i, a := range []nvml.DeviceAttributes{
		{GpuInstanceSliceCount: 3, ComputeInstanceSliceCount: 3, MemorySizeMB: 19968},
		{GpuInstanceSliceCount: 2, ComputeInstanceSliceCount: 1, MemorySizeMB: 9856},
	} {
		m := &mock.Device{}
		installFake(m, &fakeGPU{used: uint64(i+1) << 30, procs: []nvml.ProcessInfo{{Pid: uint32(700 + i), UsedGpuMemory: 1 << 30}}})
		m.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{}, nvml.ERROR_NOT_SUPPORTED }
		m.GetPowerUsageFunc = func() (uint32, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
		uuid, gi, attrs := "MIG-"+string(rune('a'+i)), i+1, a
		m.GetUUIDFunc = func() (string, nvml.Return) { return uuid, nvml.SUCCESS }
		m.GetGpuInstanceIdFunc = func() (int, nvml.Return) { return gi, nvml.SUCCESS }
		m.GetComputeInstanceIdFunc = func() (int, nvml.Return) { return 0, nvml.SUCCESS }
		m.GetAttributesFunc = func() (nvml.DeviceAttributes, nvml.Return) { return attrs, nvml.SUCCESS }
		migs = append(migs, m)
	}
	parent.GetMaxMigDeviceCountFunc = func() (int, nvml.Return) { return 7, nvml.SUCCESS }
	parent.GetMigDeviceHandleByIndexFunc = func(i int) (nvml.Device, nvml.Return) {
		if i < len(migs) {
			return migs[i], nvml.SUCCESS
		}
		return nil, nvml.ERROR_NOT_FOUND
	}
	n := openNode(t, srv, gpu.NodeOptions{})
	gpus := n.Inventory()[0].GPUs
	if len(gpus) != 10 {
		t.Fatalf("got %d entries, want 8 GPUs + 2 MIG devices", len(gpus))
	}
	m := gpus[1]
	if m.MIG == nil || m.MIG.ParentUUID != parent.UUID || m.MIG.Profile != "3g.20gb" || m.MIG.GI != 1 || m.Index != 0 {
		t.Fatalf("MIG entry = %+v %+v", m, m.MIG)
	}
	if gpus[2].MIG.Profile != "1c.2g.10gb" {
		t.Fatalf("profile = %q", gpus[2].MIG.Profile)
	}
	if un := strings.Join(m.Unsupported, ","); !strings.Contains(un, "gpu_util_pct") || !strings.Contains(un, "power_w") {
		t.Fatalf("MIG unsupported = %v", un)
	}
	rows, wls := n.Sample(context.Background())
	if rows[0][2].V[profile.MemUsedBytes] != 2<<30 {
		t.Fatalf("MIG memory = %v", rows[0][2].V[profile.MemUsedBytes])
	}
	var found bool
	for _, w := range wls[0] {
		if w.ID == "process/701" {
			found = true
			if len(w.GPUUUIDs) != 1 || w.GPUUUIDs[0] != "MIG-b" || w.GPUs[0] != 0 {
				t.Fatalf("MIG workload = %+v", w)
			}
		}
	}
	if !found {
		t.Fatalf("workloads = %+v", wls[0])
	}
}

func TestNoDriverForReal(t *testing.T) {
	// On a machine with no NVIDIA driver (CI, this project's build hosts)
	// go-nvml's real library cannot load libnvidia-ml.so.1.
	lib := nvml.New()
	_, err := gpu.OpenNode(Wrap(lib), gpu.NodeOptions{Name: "x"})
	if err == nil {
		t.Skip("an NVIDIA driver is present on this machine")
	}
	if !errors.Is(err, gpu.ErrNoGPU) {
		t.Fatalf("err = %v, want gpu.ErrNoGPU", err)
	}
	for _, want := range []string{"NVML library not found", "--source sim", "--source prometheus"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not mention %q", err, want)
		}
	}
}

func TestNoDevices(t *testing.T) {
	srv := dgxh100.NewWithGPUs()
	_, err := gpu.OpenNode(Wrap(srv), gpu.NodeOptions{Name: "x"})
	if !errors.Is(err, gpu.ErrNoGPU) || !strings.Contains(err.Error(), "no GPU devices") {
		t.Fatalf("err = %v", err)
	}
}

// putFieldValue stores an unsigned 64-bit counter value in f, as NVML does.
func putFieldValue(f *nvml.FieldValue, v uint64) {
	f.ValueType = uint32(nvml.VALUE_TYPE_UNSIGNED_LONG_LONG)
	for i := range f.Value {
		f.Value[i] = byte(v >> (8 * i))
	}
}
