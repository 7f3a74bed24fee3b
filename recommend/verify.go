package recommend

import (
	"fmt"
	"strings"
)

// migSlices lists the MIG profiles of MIG-capable GPUs, smallest first, with
// their memory in GB.
var migSlices = []struct {
	model    string
	profiles []string
	gb       []float64
}{
	{"H200", []string{"1g.18gb", "2g.35gb", "3g.71gb", "7g.141gb"}, []float64{18, 35, 71, 141}},
	{"H100", []string{"1g.10gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"}, []float64{10, 20, 40, 40, 80}},
	{"A100-SXM4-80GB", []string{"1g.10gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"}, []float64{10, 20, 40, 40, 80}},
	{"A100 80GB", []string{"1g.10gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"}, []float64{10, 20, 40, 40, 80}},
	{"A100", []string{"1g.5gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"}, []float64{5, 10, 20, 20, 40}},
	{"A30", []string{"1g.6gb", "2g.12gb", "4g.24gb"}, []float64{6, 12, 24}},
}

// migProfileFor returns the smallest MIG profile of the model whose memory
// holds mem bytes, or "" (not MIG-capable, or memory unknown).
func migProfileFor(model string, mem uint64) string {
	if mem == 0 {
		return ""
	}
	for _, m := range migSlices {
		if !strings.Contains(strings.ToUpper(model), strings.ToUpper(m.model)) {
			continue
		}
		for i, gb := range m.gb {
			if float64(mem) <= gb*1e9 {
				return m.profiles[i]
			}
		}
		return ""
	}
	return ""
}

// verify replays a plan on the cluster and checks that no GPU goes over its
// capacity (compute share or memory), that no pinned workload moves, that
// no workload moves twice, and that released nodes end up empty.
func verify(c *Cluster, plan *Plan) error {
	gpus := map[string][]GPU{}
	for _, n := range c.Nodes {
		gpus[n.Name] = append([]GPU(nil), n.GPUs...)
	}
	byID := map[string]*Workload{}
	running := map[string]int{}
	for _, w := range c.Workloads {
		byID[w.ID+"\x00"+w.Node] = w
		if !w.Pending {
			running[w.Node]++
		}
	}
	moved := map[string]bool{}
	for i, m := range plan.Moves {
		w, err := movedWorkload(c, byID, m)
		if err != nil {
			return fmt.Errorf("move %d: %w", i, err)
		}
		if moved[w.ID+"\x00"+w.Node] {
			return fmt.Errorf("move %d: %s moves twice", i, w.ID)
		}
		moved[w.ID+"\x00"+w.Node] = true
		if m.From != nil {
			running[*m.From]--
		}
		if err := place(gpus[m.To], m, w); err != nil {
			return fmt.Errorf("move %d: %w", i, err)
		}
		running[m.To]++
	}
	for _, n := range plan.ReleasedNodes {
		if running[n] != 0 {
			return fmt.Errorf("released node %s still runs %d workload(s)", n, running[n])
		}
	}
	return nil
}

// movedWorkload is the workload a move moves: running on its source node,
// or pending; never a pinned one, and on as many GPUs as it had.
func movedWorkload(c *Cluster, byID map[string]*Workload, m Move) (*Workload, error) {
	from := ""
	if m.From != nil {
		from = *m.From
	}
	w := byID[m.Workload+"\x00"+from]
	if w == nil && m.From == nil {
		for _, x := range c.Workloads {
			if x.ID == m.Workload && x.Pending {
				w = x
			}
		}
	}
	switch {
	case w == nil:
		return nil, fmt.Errorf("unknown workload %s", m.Workload)
	case w.Pinned:
		return nil, fmt.Errorf("%s is pinned", w.ID)
	case len(m.GPUs) != w.Count:
		return nil, fmt.Errorf("%s needs %d GPUs, gets %d", w.ID, w.Count, len(m.GPUs))
	}
	return w, nil
}

// place adds the workload to the move's GPUs of its target node, which
// must hold it.
func place(target []GPU, m Move, w *Workload) error {
	for _, gi := range m.GPUs {
		if gi < 0 || gi >= len(target) {
			return fmt.Errorf("%s has no GPU %d", m.To, gi)
		}
		g := &target[gi]
		add := milliPerGPU
		if m.Sharing != nil && w.Milli < milliPerGPU {
			add = w.Milli
		}
		g.UsedMilli += add
		g.UsedMem += w.MemPerGPU
		if g.UsedMilli > milliPerGPU || (g.MemBytes > 0 && g.UsedMem > g.MemBytes) || g.Busy {
			return fmt.Errorf("GPU %d of %s goes over capacity", gi, m.To)
		}
	}
	return nil
}
