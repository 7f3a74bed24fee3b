package profile

import (
	"context"
	"errors"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

func TestRecordInterruptKeepsSamples(t *testing.T) {
	srv, _ := newFakeNode(t)
	n := openNode(t, srv, NodeOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	clk := NewSimClock(DefaultSimStart)
	samples := 0
	p, err := Record(ctx, n, RecordOptions{Interval: time.Second, Clock: clk, OnSample: func(Progress) {
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
	if err := Validate(p); err != nil {
		t.Fatal(err)
	}
}

func TestRecordDurationAndCheckpoints(t *testing.T) {
	srv, _ := newFakeNode(t)
	n := openNode(t, srv, NodeOptions{})
	clk := NewSimClock(DefaultSimStart)
	var sizes []int
	p, err := Record(context.Background(), n, RecordOptions{
		Interval: time.Second, Duration: 300 * time.Second, Clock: clk, Checkpoint: 60 * time.Second,
		OnCheckpoint: func(p *Profile) error {
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
	_, err = Record(context.Background(), n, RecordOptions{Interval: time.Second, Duration: 10 * time.Second, Clock: NewSimClock(DefaultSimStart),
		Checkpoint: 2 * time.Second, OnCheckpoint: func(*Profile) error { return boom }})
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
	defer cmd.Process.Kill()
	var child int
	for i := 0; i < 200 && child == 0; i++ {
		if d := Descendants("/proc", cmd.Process.Pid); len(d) > 0 {
			child = d[0]
		}
		time.Sleep(10 * time.Millisecond)
	}
	if child == 0 {
		t.Fatal("no child process found under sh")
	}
	// The child process (not sh itself) uses GPU 6.
	fakes[6].procs = []nvml.ProcessInfo{{Pid: uint32(child), UsedGpuMemory: 3 << 30}}
	n := openNode(t, srv, NodeOptions{Procs: &ProcFS{ProcRoot: "/proc", PodsDir: t.TempDir()}})
	job := &Job{Name: "sh", PID: cmd.Process.Pid, ProcRoot: "/proc"}
	p, err := Record(context.Background(), n, RecordOptions{Interval: time.Second, Duration: 2 * time.Second, Clock: NewSimClock(DefaultSimStart), Job: job})
	if err != nil {
		t.Fatal(err)
	}
	var got *Workload
	for i, w := range p.Nodes[0].Workloads {
		if w.Kind == KindJob {
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

func TestParentPID(t *testing.T) {
	for stat, want := range map[string]int{
		"42 (sleep) S 7 42 42 0":          7,
		"43 (a) b (c)) R 9 43 43 0":       9,
		"44 (nvidia-smi dmon) S 1 44 0 0": 1,
	} {
		if got, ok := parentPID(stat); !ok || got != want {
			t.Errorf("parentPID(%q) = %d, %v; want %d", stat, got, ok, want)
		}
	}
	if _, ok := parentPID("garbage"); ok {
		t.Error("garbage parsed")
	}
}
