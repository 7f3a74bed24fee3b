//go:build cgo

package nvml

import (
	"context"
	"errors"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source"
	"github.com/seedance/seedance/source/gpu"
	"github.com/seedance/seedance/source/sim"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

func TestRecordInterruptKeepsSamples(t *testing.T) {
	srv, _ := newFakeNode(t)
	n := openNode(t, srv, gpu.NodeOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	clk := sim.NewClock(sim.DefaultStart)
	samples := 0
	p, err := source.Record(ctx, n, source.RecordOptions{Interval: time.Second, Clock: clk, OnSample: func(source.Progress) {
		samples++
		if samples == 5 {
			cancel()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Complete {
		t.Error("interrupted profile marked complete")
	}
	if got := p.Nodes[0].GPUs[0].Series.Len(); got != 5 {
		t.Errorf("kept %d samples, want 5", got)
	}
	// ended_at is the end of the last sample's coverage: t=4 plus 1 s.
	if d := p.EndedAt.Sub(p.StartedAt); d != 5*time.Second {
		t.Errorf("ended_at - started_at = %v, want 5s", d)
	}
	if err := profile.Validate(p); err != nil {
		t.Fatal(err)
	}
}

func TestRecordDurationAndCheckpoints(t *testing.T) {
	srv, _ := newFakeNode(t)
	n := openNode(t, srv, gpu.NodeOptions{})
	clk := sim.NewClock(sim.DefaultStart)
	var sizes []int
	p, err := source.Record(context.Background(), n, source.RecordOptions{
		Interval: time.Second, Duration: 300 * time.Second, Clock: clk, Checkpoint: 60 * time.Second,
		OnCheckpoint: func(p *profile.Profile) error {
			if p.Complete {
				t.Error("checkpoint marked complete")
			}
			sizes = append(sizes, p.Nodes[0].GPUs[0].Series.Len())
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Complete || p.Nodes[0].GPUs[0].Series.Len() != 300 || p.Nodes[0].GPUs[0].Series.T[299] != 299 {
		t.Fatalf("complete=%v samples=%d", p.Complete, p.Nodes[0].GPUs[0].Series.Len())
	}
	if want := []int{61, 121, 181, 241}; len(sizes) != len(want) || sizes[0] != want[0] || sizes[3] != want[3] {
		t.Fatalf("checkpoints at %v samples, want %v", sizes, want)
	}
	boom := errors.New("disk full")
	_, err = source.Record(context.Background(), n, source.RecordOptions{Interval: time.Second, Duration: 10 * time.Second, Clock: sim.NewClock(sim.DefaultStart),
		Checkpoint: 2 * time.Second, OnCheckpoint: func(*profile.Profile) error { return boom }})
	if !errors.Is(err, boom) {
		t.Fatalf("checkpoint error = %v", err)
	}
}

func TestRecordJobWorkload(t *testing.T) {
	srv, fakes := newFakeNode(t)
	cmd := exec.Command("sh", "-c", "sleep 5 & wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	var child int
	for i := 0; i < 200 && child == 0; i++ {
		if d := source.Descendants("/proc", cmd.Process.Pid); len(d) > 0 {
			child = d[0]
		}
		time.Sleep(10 * time.Millisecond)
	}
	if child == 0 {
		t.Fatal("no child process found under sh")
	}
	// The child process (not sh itself) uses GPU 6.
	fakes[6].procs = []nvml.ProcessInfo{{Pid: uint32(child), UsedGpuMemory: 3 << 30}}
	n := openNode(t, srv, gpu.NodeOptions{Procs: &gpu.ProcFS{ProcRoot: "/proc", PodsDir: t.TempDir()}})
	job := &source.Job{Name: "sh", PID: cmd.Process.Pid, ProcRoot: "/proc"}
	p, err := source.Record(context.Background(), n, source.RecordOptions{Interval: time.Second, Duration: 2 * time.Second, Clock: sim.NewClock(sim.DefaultStart), Job: job})
	if err != nil {
		t.Fatal(err)
	}
	var got *profile.Workload
	for i, w := range p.Nodes[0].Workloads {
		if w.Kind == profile.KindJob {
			got = &p.Nodes[0].Workloads[i]
		}
	}
	if got == nil {
		t.Fatalf("no job workload in %+v", p.Nodes[0].Workloads)
	}
	if got.ID != "job/sh-"+strconv.Itoa(cmd.Process.Pid) || len(got.GPUs) != 1 || got.GPUs[0] != 6 || got.GPUMemoryBytes != 3<<30 {
		t.Fatalf("job = %+v", got)
	}
	if got.PIDs[0] != cmd.Process.Pid || len(got.PIDs) < 2 {
		t.Fatalf("job pids = %v, want sh and its child", got.PIDs)
	}
}
