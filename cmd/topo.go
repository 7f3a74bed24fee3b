package cmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	nvmlsrc "github.com/seedance/seedance/source/nvml"

	"github.com/spf13/cobra"

	"github.com/seedance/seedance/hwtopo"
	"github.com/seedance/seedance/internal/iostreams"
	"github.com/seedance/seedance/internal/nvapi"
	"github.com/seedance/seedance/internal/table"
	"github.com/seedance/seedance/source/gpu"
)

// TopoOptions are the inputs of `seedance topo`.
type TopoOptions struct {
	IO       *iostreams.IOStreams
	NVML     func() (gpu.NVML, error)
	Format   string
	HostRoot string // "/" (ghw reads sysfs and procfs under it)
	SysRoot  string
	ProcRoot string
}

// topoResult is what `seedance topo --format json` prints.
type topoResult struct {
	Host     *hwtopo.Host     `json:"host"`
	Topology *hwtopo.Topology `json:"gpu_topology"`
	NoGPU    string           `json:"no_gpu,omitempty"`
	Warnings []string         `json:"warnings"`
}

func newTopoCmd(f *Factory) *cobra.Command {
	o := &TopoOptions{IO: f.IO, NVML: f.NVML, HostRoot: "/", SysRoot: "/sys", ProcRoot: "/proc"}
	c := &cobra.Command{
		Use:   "topo",
		Short: "Show how this node's GPUs, CPUs and NUMA nodes are connected",
		Long: `Print the GPU interconnect matrix as nvidia-smi topo -m does (X, NV#, PIX, PXB,
PHB, NODE, SYS), each GPU's NUMA node and CPU affinity, the NVLink bandwidth
between GPUs, and warnings a person can act on: GPU pairs that meet only
across sockets, NVLinks that are down, and GPU processes allowed to run on
another NUMA node than their GPU. On a machine without GPUs it prints the
host part and says so (exit 0).`,
		Example: "  seedance topo\n  seedance topo --format matrix\n  seedance topo --format json",
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			switch o.Format {
			case "table", "json", "matrix":
			default:
				return usageErrorf("unknown --format %q (choose table, json or matrix)", o.Format)
			}
			return topoRun(o)
		},
	}
	c.Flags().StringVarP(&o.Format, "format", "f", "table", "output: table, json or matrix (as nvidia-smi topo -m)")
	return c
}

func topoRun(o *TopoOptions) error {
	host, herr := hwtopo.HostFromGHW(o.HostRoot)
	if herr != nil {
		return topoRunWithHost(o, nil, "host topology unknown: "+herr.Error())
	}
	return topoRunWithHost(o, host)
}

// topoRunWithHost prints the topology of the NVML GPUs on the given host.
func topoRunWithHost(o *TopoOptions, host *hwtopo.Host, warnings ...string) error {
	res := topoResult{Warnings: append([]string{}, warnings...), Host: host}
	lib, err := o.NVML()
	n := 0
	if err == nil {
		n, err = gpu.InitNVML(lib)
	}
	if err != nil {
		switch {
		case errors.Is(err, nvmlsrc.ErrNotBuilt):
			res.NoGPU = "this seedance was built without cgo, so without NVML"
		case errors.Is(err, gpu.ErrNoGPU):
			res.NoGPU = strings.SplitN(strings.TrimPrefix(err.Error(), gpu.ErrNoGPU.Error()+": "), ";", 2)[0]
		default:
			return err
		}
	} else {
		defer lib.Shutdown()
		devs := make([]nvapi.Device, 0, n)
		for i := 0; i < n; i++ {
			d, ret := lib.DeviceGetHandleByIndex(i)
			if ret != nvapi.SUCCESS {
				return fmt.Errorf("get handle of GPU %d: %s", i, ret.Error())
			}
			devs = append(devs, d)
		}
		t := hwtopo.FromNVML(devs, 16, func(bus string) *int { return gpu.NUMANodeOf(o.SysRoot, bus) })
		t.Host = host
		res.Topology = t
		res.Warnings = append(res.Warnings, hwtopo.Warnings(t, gpuProcesses(devs, o.ProcRoot))...)
	}
	switch o.Format {
	case "json":
		enc := json.NewEncoder(o.IO.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	case "matrix":
		if res.Topology == nil {
			return usageErrorf("no GPU found (%s): there is no matrix to print", res.NoGPU)
		}
		return hwtopo.WriteMatrix(o.IO.Out, res.Topology, o.IO.IsStdoutTTY())
	}
	return writeTopoTable(o.IO.Out, res, o.IO.IsStdoutTTY())
}

func gpuProcesses(devs []nvapi.Device, procRoot string) []hwtopo.Process {
	var out []hwtopo.Process
	for i, d := range devs {
		ps, ret := d.GetComputeRunningProcesses()
		if ret != nvapi.SUCCESS {
			continue
		}
		for _, p := range ps {
			name, cpus := hwtopo.ProcessCPUs(procRoot, int(p.Pid))
			out = append(out, hwtopo.Process{PID: int(p.Pid), Name: name, GPU: i, CPUsAllowed: cpus})
		}
	}
	return out
}

func writeTopoTable(w io.Writer, res topoResult, tty bool) error {
	ew := &errWriterCmd{w: w}
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
		if err := hwtopo.WriteMatrix(w, res.Topology, tty); err != nil {
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

// errWriterCmd keeps the first write error.
type errWriterCmd struct {
	w   io.Writer
	err error
}

func (e *errWriterCmd) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

// writeBandwidth prints the NVLink bandwidth of every GPU pair.
func writeBandwidth(w io.Writer, t *hwtopo.Topology) error {
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
