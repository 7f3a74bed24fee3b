package cmd

import (
	"encoding/json"
	"errors"

	"github.com/seedance/seedance/internal/exit"

	nvmlsrc "github.com/seedance/seedance/source/nvml"

	"github.com/spf13/cobra"

	"github.com/seedance/seedance/hwtopo"
	"github.com/seedance/seedance/internal/iostreams"
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

func newTopoCmd(f *Factory, runF func(*TopoOptions) error) *cobra.Command {
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
				return exit.Usagef("unknown --format %q (choose table, json or matrix)", o.Format)
			}
			if runF != nil {
				return runF(o)
			}
			return topoRun(o)
		},
	}
	c.Flags().StringVarP(&o.Format, "format", "f", "table", "output: table, json or matrix (as nvidia-smi topo -m)")
	completeValues(c, "format", []string{"table", "json", "matrix"})
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
	lib, err := o.NVML()
	var rep hwtopo.Report
	switch {
	case errors.Is(err, nvmlsrc.ErrNotBuilt):
		rep = hwtopo.Report{Host: host, NoGPU: "this seedance was built without cgo, so without NVML", Warnings: []string{}}
	case err != nil:
		return err
	default:
		if rep, err = gpu.TopologyReport(lib, host, o.SysRoot, o.ProcRoot); err != nil {
			return err
		}
	}
	rep.Warnings = append(append([]string{}, warnings...), rep.Warnings...)
	switch o.Format {
	case "json":
		enc := json.NewEncoder(o.IO.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	case "matrix":
		if rep.Topology == nil {
			return exit.Usagef("no GPU found (%s): there is no matrix to print", rep.NoGPU)
		}
		return hwtopo.WriteMatrix(o.IO.Out, rep.Topology, o.IO.ColorEnabled())
	}
	return hwtopo.WriteTable(o.IO.Out, rep, o.IO.ColorEnabled())
}
