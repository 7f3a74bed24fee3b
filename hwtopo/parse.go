package hwtopo

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
)

var ansi = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// ParseMatrix reads a `nvidia-smi topo -m` capture: tab- or space-separated,
// with or without ANSI escapes, a leading "$ nvidia-smi topo -m" line, NIC
// columns (which are dropped) and the legend. It fills the matrix, CPU
// affinity and NUMA node of each GPU, for nodes seedance can only see
// through Prometheus (--topology-file).
func ParseMatrix(r io.Reader) (*Topology, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	var header []string
	t := &Topology{}
	for sc.Scan() {
		line := ansi.ReplaceAllString(sc.Text(), "")
		if strings.HasPrefix(strings.TrimSpace(line), "$") || strings.TrimSpace(line) == "" {
			if header != nil && len(t.GPUs) > 0 {
				break // the matrix ended; the legend follows
			}
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(line), "ERROR") {
			return nil, fmt.Errorf("not a topology matrix: %s", strings.TrimSpace(line))
		}
		fields := splitCells(line)
		if header == nil {
			if len(fields) == 0 || !strings.HasPrefix(fields[0], "GPU") {
				return nil, fmt.Errorf("not a topology matrix: the first line is %q", strings.TrimSpace(line))
			}
			header = fields
			continue
		}
		if !strings.HasPrefix(fields[0], "GPU") {
			continue // a NIC row
		}
		if err := t.addRow(header, fields); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(t.GPUs) == 0 {
		return nil, fmt.Errorf("not a topology matrix: no GPU rows")
	}
	for i := range t.Matrix {
		if len(t.Matrix[i]) != len(t.GPUs) {
			return nil, fmt.Errorf("row GPU%d has %d GPU columns, want %d", i, len(t.Matrix[i]), len(t.GPUs))
		}
	}
	t.NVLinkGBps = make([][]float64, len(t.GPUs))
	for i := range t.NVLinkGBps {
		t.NVLinkGBps[i] = make([]float64, len(t.GPUs))
	}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("not a usable topology matrix: %v", err)
	}
	return t, nil
}

// splitCells splits on tabs, or on runs of two or more spaces for captures
// that were re-spaced; " X " is one cell.
func splitCells(line string) []string {
	var parts []string
	if strings.Contains(line, "\t") {
		parts = strings.Split(line, "\t")
	} else {
		parts = regexp.MustCompile(`\s{2,}`).Split(line, -1)
	}
	var out []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func (t *Topology) addRow(header, fields []string) error {
	idx := len(t.GPUs)
	gpus := 0
	for _, h := range header {
		if strings.HasPrefix(h, "GPU") && h != "GPU NUMA ID" {
			gpus++
		}
	}
	if len(fields) < 1+gpus {
		return fmt.Errorf("row %s is short", fields[0])
	}
	row := fields[1 : 1+gpus]
	g := GPU{Index: idx}
	rest := fields[1+gpus:]
	// NIC columns follow the GPU columns; skip cells that are link labels.
	for len(rest) > 0 && isLinkLabel(rest[0]) {
		rest = rest[1:]
	}
	if len(rest) > 0 && rest[0] != "N/A" {
		g.CPUAffinity = rest[0]
	}
	if len(rest) > 1 {
		if n, err := strconv.Atoi(rest[1]); err == nil {
			g.NUMANode = &n
		}
	}
	t.GPUs = append(t.GPUs, g)
	t.Matrix = append(t.Matrix, append([]string(nil), row...))
	return nil
}

func isLinkLabel(s string) bool {
	switch s {
	case "X", "PIX", "PXB", "PHB", "NODE", "SYS":
		return true
	}
	return strings.HasPrefix(s, "NV") && len(s) > 2 && s[2] >= '0' && s[2] <= '9'
}

// FromCapture completes a topology parsed from a `topo -m` capture: the
// NVLink bandwidth of each pair is its link count × the per-link speed of
// the model's NVLink generation, and the host's NUMA nodes are those the
// GPUs' affinity columns name.
func FromCapture(t *Topology, model string) *Topology {
	per := 25.0
	m := strings.ToUpper(model)
	switch {
	case strings.Contains(m, "B200") || strings.Contains(m, "B300") || strings.Contains(m, "GB200"):
		per = 50
	case strings.Contains(m, "H100") || strings.Contains(m, "H200") || strings.Contains(m, "H800") || strings.Contains(m, "H20"):
		per = 26.562
	}
	for i := range t.Matrix {
		for j, label := range t.Matrix[i] {
			if n, ok := strings.CutPrefix(label, "NV"); ok {
				if k, err := strconv.Atoi(n); err == nil {
					t.NVLinkGBps[i][j] = math.Round(float64(k)*per*1000) / 1000
				}
			}
		}
	}
	if t.Host == nil {
		seen := map[int]bool{}
		h := &Host{}
		for _, g := range t.GPUs {
			if g.NUMANode != nil && !seen[*g.NUMANode] && g.CPUAffinity != "" {
				seen[*g.NUMANode] = true
				h.NUMANodes = append(h.NUMANodes, NUMANode{ID: *g.NUMANode, CPUs: g.CPUAffinity})
			}
		}
		if len(h.NUMANodes) > 0 {
			h.Sockets = len(h.NUMANodes)
			t.Host = h
		}
	}
	return t
}
