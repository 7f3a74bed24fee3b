package hwtopo

import (
	"fmt"
	"io"
	"strings"

	"github.com/seedance/seedance/internal/table"
)

// Report is a node's topology as `seedance topo` prints it.
type Report struct {
	Host     *Host     `json:"host"`
	Topology *Topology `json:"gpu_topology"`
	// NoGPU says why there is no GPU topology (no driver, no GPU, a build
	// without NVML).
	NoGPU    string   `json:"no_gpu,omitempty"`
	Warnings []string `json:"warnings"`
}

// WriteTable writes a report for people: the host's NUMA nodes, then each
// GPU's bus, NUMA node, CPU affinity, NVLinks and MIG devices, the matrix
// (as nvidia-smi topo -m), the NVLink bandwidth between GPUs, and the
// warnings. underline marks the matrix's header as nvidia-smi does on a
// terminal.
func WriteTable(w io.Writer, res Report, underline bool) error {
	ew := &errWriter{w: w}
	if h := res.Host; h != nil {
		ew.printf("Host: %d socket(s), %d NUMA node(s)\n", h.Sockets, len(h.NUMANodes))
		t := table.New(w, "NUMA NODE", "CPUS", "MEMORY")
		for _, n := range h.NUMANodes {
			t.Row(fmt.Sprint(n.ID), n.CPUs, fmt.Sprintf("%.1f GiB", float64(n.MemoryBytes)/(1<<30)))
		}
		if err := t.Flush(); err != nil {
			return err
		}
	}
	if res.Topology == nil {
		ew.printf("\nNo NVIDIA GPU found: %s.\n", res.NoGPU)
	} else {
		ew.printf("\n")
		t := table.New(w, "GPU", "PCI BUS ID", "NUMA NODE", "CPU AFFINITY", "NVLINKS UP", "NVLINK GB/S (PER DIRECTION, BEST PEER)", "MIG DEVICES")
		for i, g := range res.Topology.GPUs {
			up := 0
			for _, l := range g.NVLinks {
				if l.Up {
					up++
				}
			}
			best := 0.0
			for _, v := range res.Topology.NVLinkGBps[i] {
				best = max(best, v)
			}
			numa := "N/A"
			if g.NUMANode != nil {
				numa = fmt.Sprint(*g.NUMANode)
			}
			mig := "-"
			if len(g.MIG) > 0 {
				var names []string
				for _, m := range g.MIG {
					names = append(names, fmt.Sprintf("%s (GI %d)", m.Profile, m.GI))
				}
				mig = strings.Join(names, ", ")
			}
			t.Row(fmt.Sprintf("GPU%d", i), g.BusID, numa, g.CPUAffinity, fmt.Sprintf("%d/%d", up, len(g.NVLinks)), fmt.Sprintf("%.1f", best), mig)
		}
		if err := t.Flush(); err != nil {
			return err
		}
		ew.printf("\n")
		if err := WriteMatrix(w, res.Topology, underline); err != nil {
			return err
		}
		if err := writeBandwidth(w, res.Topology); err != nil {
			return err
		}
	}
	if len(res.Warnings) > 0 {
		ew.printf("\nWarnings\n")
		for _, s := range res.Warnings {
			ew.printf("  - %s\n", s)
		}
	}
	return ew.err
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

// writeBandwidth prints the NVLink bandwidth of every GPU pair.
func writeBandwidth(w io.Writer, t *Topology) error {
	if len(t.GPUs) < 2 {
		return nil
	}
	fmt.Fprintf(w, "\nNVLink GB/s per direction between GPUs\n")
	head := []string{""}
	for i := range t.GPUs {
		head = append(head, fmt.Sprintf("GPU%d", i))
	}
	tb := table.New(w, head...)
	for i, row := range t.NVLinkGBps {
		cells := []string{fmt.Sprintf("GPU%d", i)}
		for j, v := range row {
			if i == j {
				cells = append(cells, "-")
			} else {
				cells = append(cells, fmt.Sprintf("%.0f", v))
			}
		}
		tb.Row(cells...)
	}
	return tb.Flush()
}
