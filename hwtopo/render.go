package hwtopo

import (
	"fmt"
	"io"
	"strings"
)

// Legend is nvidia-smi's legend under the matrix.
const Legend = `Legend:

  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)
  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node
  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)
  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)
  PIX  = Connection traversing at most a single PCIe bridge
  NV#  = Connection traversing a bonded set of # NVLinks
`

// WriteMatrix writes the matrix exactly as `nvidia-smi topo -m` does:
// tab-separated, the header underlined with ANSI escapes when underline is
// set, then the legend.
func WriteMatrix(w io.Writer, t *Topology, underline bool) error {
	var b strings.Builder
	head := make([]string, 0, len(t.GPUs)+3)
	for i := range t.GPUs {
		head = append(head, fmt.Sprintf("GPU%d", i))
	}
	head = append(head, "CPU Affinity", "NUMA Affinity", "GPU NUMA ID")
	if underline {
		fmt.Fprintf(&b, "\t\x1b[4m%s\x1b[0m\n", strings.Join(head, "\t"))
	} else {
		fmt.Fprintf(&b, "\t%s\n", strings.Join(head, "\t"))
	}
	for i, g := range t.GPUs {
		cells := []string{fmt.Sprintf("GPU%d", i)}
		for j := range t.GPUs {
			c := t.Matrix[i][j]
			if c == "X" {
				c = " X "
			}
			cells = append(cells, c)
		}
		numa := "N/A"
		if g.NUMANode != nil {
			numa = fmt.Sprint(*g.NUMANode)
		}
		cpus := g.CPUAffinity
		if cpus == "" {
			cpus = "N/A"
		}
		// nvidia-smi leaves an empty cell before GPU NUMA ID (the GPU's own
		// memory NUMA node, which only C2C systems have).
		cells = append(cells, cpus, numa, "", "N/A")
		b.WriteString(strings.Join(cells, "\t") + "\n")
	}
	b.WriteString("\n" + Legend)
	_, err := io.WriteString(w, b.String())
	return err
}
