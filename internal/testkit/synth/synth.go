// Package synth writes large synthetic profiles for benchmarks: thousands of
// nodes with realistic value patterns (busy, idle stretches, nulls), written
// node by node so that generating a gigabyte needs little memory.
package synth

import (
	"bufio"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/seedance/seedance/profile"
)

// Start is the synthetic profiles' started_at.
var Start = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)

// Write writes a profile of nodes × gpus × samples at 1 s.
func Write(w io.Writer, nodes, gpus, samples int) error {
	return WriteInterval(w, nodes, gpus, samples, 1)
}

// WriteInterval writes a profile of nodes × gpus × samples at interval
// seconds, one node at a time.
func WriteInterval(w io.Writer, nodes, gpus, samples int, interval float64) error {
	head := &profile.Profile{SchemaVersion: profile.SchemaVersion, Generator: profile.Generator{Name: "synth"},
		Source: "synth", StartedAt: Start, EndedAt: Start.Add(time.Duration(float64(samples) * interval * float64(time.Second))), IntervalS: interval, Complete: true}
	enc := profile.NewEncoder(w, head)
	t := make(profile.Values, samples)
	for i := range t {
		t[i] = float64(i) * interval
	}
	for n := 0; n < nodes; n++ {
		node := profile.Node{Name: nodeName(n), Labels: map[string]string{"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}}
		for g := 0; g < gpus; g++ {
			node.GPUs = append(node.GPUs, gpu(n, g, t))
		}
		enc.Node(&node)
	}
	return enc.Close()
}

// Profile returns a profile of nodes × gpus × samples at interval seconds,
// in memory.
func Profile(nodes, gpus, samples int, interval float64) *profile.Profile {
	return Slice(nodes, gpus, 0, samples, interval)
}

// Slice returns samples first to first+samples−1 of the profile Profile
// would make with more samples: consecutive slices continue each other's
// patterns and counters, so a long range can be written a slice at a time.
func Slice(nodes, gpus, first, samples int, interval float64) *profile.Profile {
	start := Start.Add(time.Duration(float64(first) * interval * float64(time.Second)))
	p := &profile.Profile{SchemaVersion: profile.SchemaVersion, Generator: profile.Generator{Name: "synth"}, Source: "synth",
		StartedAt: start, EndedAt: start.Add(time.Duration(float64(samples) * interval * float64(time.Second))), IntervalS: interval, Complete: true}
	t := make(profile.Values, samples)
	for i := range t {
		t[i] = float64(i) * interval
	}
	for n := 0; n < nodes; n++ {
		node := profile.Node{Name: nodeName(n)}
		for g := 0; g < gpus; g++ {
			node.GPUs = append(node.GPUs, gpuFrom(n, g, first, t))
		}
		p.Nodes = append(p.Nodes, node)
	}
	return p
}

// WriteFile writes the profile to path unless a file of that name exists.
func WriteFile(path string, nodes, gpus, samples int) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	f, err := os.Create(path + ".tmp")
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := Write(bw, nodes, gpus, samples); err != nil {
		f.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(path+".tmp", path)
}

func nodeName(n int) string {
	const digits = "0123456789"
	b := []byte("node-gpu-00000")
	for i := len(b) - 1; n > 0; i-- {
		b[i] = digits[n%10]
		n /= 10
	}
	return string(b)
}

// gpu makes one GPU's series: a third of the nodes idle half the time.
func gpu(n, g int, t profile.Values) profile.GPU { return gpuFrom(n, g, 0, t) }

// gpuFrom makes one GPU's series from sample first on.
func gpuFrom(n, g, first int, t profile.Values) profile.GPU {
	k := len(t)
	cols := [profile.NumMetrics]profile.Values{}
	for m := range cols {
		cols[m] = make(profile.Values, k)
	}
	h := uint64(n*131 + g*7 + 1)
	for i := 0; i < first; i++ {
		h = h*6364136223846793005 + 1442695040888963407
	}
	for j := 0; j < k; j++ {
		i := first + j
		h = h*6364136223846793005 + 1442695040888963407
		r := float64(h>>40) / (1 << 24)
		util := math.Round(60 + 40*r)
		if n%3 == 0 && (i/600)%2 == 0 {
			util = math.Round(3 * r)
		}
		cols[profile.GPUUtilPct][j] = util
		cols[profile.MemBWUtilPct][j] = math.Round(util * 0.4)
		cols[profile.SMActivePct][j] = math.Round(util*8) / 10
		cols[profile.MemUsedBytes][j] = 40 << 30
		cols[profile.PCIeTxBytesPerS][j] = math.Round(util * 3e7)
		cols[profile.PCIeRxBytesPerS][j] = math.Round(util * 5e7)
		cols[profile.NVLinkTxBytesPerS][j] = math.Round(util * 2e9)
		cols[profile.NVLinkRxBytesPerS][j] = math.Round(util * 2e9)
		cols[profile.PowerW][j] = math.Round((69+6*util)*1000) / 1000
		cols[profile.EnergyJ][j] = 1e7 + float64(i)*400
		cols[profile.SMClockMHz][j] = 1980
		cols[profile.TempC][j] = math.Round(35 + 0.3*util)
		cols[profile.ClockEventReasons][j] = 0
		if i%997 == 5 {
			cols[profile.GPUUtilPct][j] = profile.Null
		}
	}
	out := profile.GPU{Index: g, UUID: "GPU-" + nodeName(n) + "-" + string(rune('0'+g)), Model: "NVIDIA H100 80GB HBM3", MemoryTotalBytes: 80 << 30}
	out.Series.T = t
	for m := profile.Metric(0); m < profile.NumMetrics; m++ {
		*out.Series.Col(m) = cols[m]
	}
	return out
}

// BenchProfile writes (once, into the temp directory) the synthetic profile
// the analyze benchmarks read: 1,000 nodes × 8 GPUs with all 13 metrics, of
// about mb megabytes (~0.735 MB per second of 8,000 GPUs). It returns the
// path and the size in bytes.
func BenchProfile(mb int) (string, int64, error) {
	samples := mb * 1000 / 735
	path := filepath.Join(os.TempDir(), "seedance-bench-"+strconv.Itoa(samples)+"s.json")
	if err := WriteFile(path, 1000, 8, samples); err != nil {
		return "", 0, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return "", 0, err
	}
	return path, fi.Size(), nil
}
