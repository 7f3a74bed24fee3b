//go:build cgo

package nvml

import (
	"context"
	"fmt"
	"testing"

	"github.com/seedance/seedance/internal/testkit/cputime"

	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source"
	"github.com/seedance/seedance/source/gpu"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
)

// leanDevice answers the sampler's calls with fixed values and none of the
// generated mock's locking and call recording, so that a benchmark measures
// seedance's own work per sample rather than the mock's.
type leanDevice struct {
	mock.Device
	uuid string
	ts   int64
}

func (d *leanDevice) GetUUID() (string, nvml.Return)          { return d.uuid, nvml.SUCCESS }
func (d *leanDevice) GetName() (string, nvml.Return)          { return "NVIDIA H100 80GB HBM3", nvml.SUCCESS }
func (d *leanDevice) GetPciInfo() (nvml.PciInfo, nvml.Return) { return nvml.PciInfo{}, nvml.SUCCESS }
func (d *leanDevice) GetMigMode() (int, int, nvml.Return)     { return 0, 0, nvml.SUCCESS }
func (d *leanDevice) GetUtilizationRates() (nvml.Utilization, nvml.Return) {
	return nvml.Utilization{Gpu: 42, Memory: 17}, nvml.SUCCESS
}
func (d *leanDevice) GetMemoryInfo() (nvml.Memory, nvml.Return) {
	return nvml.Memory{Total: 80 << 30, Used: 20 << 30}, nvml.SUCCESS
}
func (d *leanDevice) GetPowerUsage() (uint32, nvml.Return) { return 312000, nvml.SUCCESS }
func (d *leanDevice) GetTotalEnergyConsumption() (uint64, nvml.Return) {
	return 123456789, nvml.SUCCESS
}
func (d *leanDevice) GetClockInfo(nvml.ClockType) (uint32, nvml.Return) { return 1980, nvml.SUCCESS }
func (d *leanDevice) GetTemperature(nvml.TemperatureSensors) (uint32, nvml.Return) {
	return 55, nvml.SUCCESS
}
func (d *leanDevice) GetCurrentClocksEventReasons() (uint64, nvml.Return) { return 0, nvml.SUCCESS }
func (d *leanDevice) GpmQueryDeviceSupport() (nvml.GpmSupport, nvml.Return) {
	return nvml.GpmSupport{}, nvml.SUCCESS
}
func (d *leanDevice) GetComputeRunningProcesses() ([]nvml.ProcessInfo, nvml.Return) {
	return nil, nvml.SUCCESS
}
func (d *leanDevice) GetGraphicsRunningProcesses() ([]nvml.ProcessInfo, nvml.Return) {
	return nil, nvml.SUCCESS
}
func (d *leanDevice) GetFieldValues(v []nvml.FieldValue) nvml.Return {
	d.ts += 1e6
	for i := range v {
		v[i].Timestamp = d.ts
		v[i].NvmlReturn = 0
		putFieldValue(&v[i], uint64(d.ts)*1000)
	}
	return nvml.SUCCESS
}

func leanNode(b *testing.B, gpus int) *gpu.Node {
	srv := dgxh100.New()
	srv.Devices = srv.Devices[:0]
	for i := 0; i < gpus; i++ {
		srv.Devices = append(srv.Devices, &leanDevice{uuid: fmt.Sprintf("GPU-%08x-0000-0000-0000-000000000000", i)})
	}
	n, err := gpu.OpenNode(Wrap(srv), gpu.NodeOptions{Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { n.Close() })
	return n
}

// BenchmarkSamplePerGPU measures seedance's CPU time for one GPU sample:
// dispatching to the GPU's goroutine, the ~12 NVML calls, counter and row
// handling, and appending to the series. Target: ≤ 20 µs per GPU sample.
func BenchmarkSamplePerGPU(b *testing.B) {
	const gpus = 8
	n := leanNode(b, gpus)
	p := &profile.Profile{Nodes: n.Inventory()}
	for gi := range p.Nodes[0].GPUs {
		source.InitSeries(&p.Nodes[0].GPUs[gi], 64)
	}
	lastErr := [][]string{make([]string, gpus)}
	ctx := context.Background()
	b.ReportAllocs()
	cpu0 := cputime.Process()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rows, _ := n.Sample(ctx)
		source.AppendRows(p, float64(i), rows, lastErr)
	}
	b.StopTimer()
	// CPU time, not wall time: the GPU goroutines run in parallel, so wall
	// time alone would under-count the work on a multi-core machine.
	b.ReportMetric(float64((cputime.Process()-cpu0).Nanoseconds())/float64(b.N*gpus)/1e3, "cpu-µs/gpu-sample")
}
