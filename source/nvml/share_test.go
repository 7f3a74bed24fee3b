//go:build cgo

package nvml

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/testkit/dcgmtest"
	"github.com/seedance/seedance/source"
	"github.com/seedance/seedance/source/gpu"
	"github.com/seedance/seedance/source/sim"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// TestProcessUtilizationSplitsASharedGPU: two processes on one GPU of the
// NVML mock report 60 % and 20 % of its SMs (nvmlDeviceGetProcessUtilization):
// the profile has a usage column for each, and the analysis gives them
// three quarters and one quarter of the GPU. A third process on another
// GPU, alone, is measured but holds its GPU whole.
func TestProcessUtilizationSplitsASharedGPU(t *testing.T) {
	srv, fakes := newFakeNode(t)
	fakes[2].procs = []nvml.ProcessInfo{{Pid: 1001, UsedGpuMemory: 1 << 30}, {Pid: 1002, UsedGpuMemory: 1 << 30}}
	fakes[2].smUtil = map[uint32]uint32{1001: 60, 1002: 20}
	fakes[5].procs = []nvml.ProcessInfo{{Pid: 1003}}
	fakes[5].smUtil = map[uint32]uint32{1003: 50}
	n := openNode(t, srv, gpu.NodeOptions{})
	p, err := source.Record(context.Background(), n, source.RecordOptions{Interval: time.Second, Duration: 4 * time.Second, Clock: sim.NewClock(sim.DefaultStart)})
	if err != nil {
		t.Fatal(err)
	}
	g := p.Nodes[0].GPUs[2]
	if len(g.Usage) != 2 || g.Usage[0].Workload != "process/1001" || g.Usage[1].Workload != "process/1002" {
		t.Fatalf("usage %+v", g.Usage)
	}
	for i := range g.Series.T {
		if g.Usage[0].UtilPct[i] != 60 || g.Usage[1].UtilPct[i] != 20 {
			t.Fatalf("sample %d: usage %v, %v", i, g.Usage[0].UtilPct[i], g.Usage[1].UtilPct[i])
		}
	}
	if len(p.Nodes[0].GPUs[0].Usage) != 0 {
		t.Errorf("a GPU with no process has usage %+v", p.Nodes[0].GPUs[0].Usage)
	}
	held, err := dcgmtest.ByWorkload(p)
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := held["process/1001"], held["process/1002"], held["process/1003"]
	if math.Abs(a.HeldGPUHours-3*b.HeldGPUHours) > 1e-9 || a.HeldGPUHours <= 0 || a.Basis != "measured" || b.Basis != "measured" {
		t.Errorf("held %v (%s) and %v (%s), want 3:1 measured", a.HeldGPUHours, a.Basis, b.HeldGPUHours, b.Basis)
	}
	if math.Abs(c.HeldGPUHours-(a.HeldGPUHours+b.HeldGPUHours)) > 1e-9 || c.Basis != "whole" {
		t.Errorf("the lone process held %v (%s), want a whole GPU's %v", c.HeldGPUHours, c.Basis, a.HeldGPUHours+b.HeldGPUHours)
	}
}
