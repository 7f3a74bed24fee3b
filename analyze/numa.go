package analyze

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/seedance/seedance/hwtopo"
	"github.com/seedance/seedance/profile"
)

// Placement suggestions: these save no money per hour; they make the GPUs a
// workload already holds faster.
const (
	SuggestRebindNUMA = "rebind-numa"
	SuggestPackNUMA   = "pack-numa"
)

// numaSuggestions looks at the placement of each running workload on a node
// whose topology is known: a workload whose GPUs are all on NUMA node N but
// whose CPUs are mostly elsewhere (less than half on N) should be bound to
// N's CPUs; a workload whose GPUs spread over NUMA nodes although one node
// has enough GPUs for it should be kept on one.
func numaSuggestions(n *nodeAcc) []Suggestion {
	t := n.topology
	if t == nil || t.Host == nil || len(t.GPUs) == 0 {
		return nil
	}
	perNode := map[int]int{}
	for _, g := range t.GPUs {
		if g.NUMANode != nil {
			perNode[*g.NUMANode]++
		}
	}
	var out []Suggestion
	for _, w := range n.workloads.sorted() {
		if w.State != profile.StateRunning || len(w.GPUs) == 0 {
			continue
		}
		nodes := gpuNUMANodes(t, w.GPUs)
		switch {
		case len(nodes) == 1 && w.CPUsAllowed != "":
			if s, ok := rebind(n.name, *w, t, nodes[0]); ok {
				out = append(out, s)
			}
		case len(nodes) > 1 && fitsOneNode(perNode, len(w.GPUs)):
			out = append(out, Suggestion{Kind: SuggestPackNUMA, Node: n.name,
				Text: fmt.Sprintf("%s: %s's %d GPUs (%s) sit on NUMA nodes %s: keep them on one NUMA node (on Kubernetes, the topology manager's single-numa-node policy), so their traffic does not cross the socket interconnect",
					n.name, w.ID, len(w.GPUs), joinInts(w.GPUs), joinInts(nodes))})
		}
	}
	return out
}

func rebind(node string, w profile.Workload, t *hwtopo.Topology, numa int) (Suggestion, bool) {
	if t.Host.FractionOn(w.CPUsAllowed, numa) >= 0.5 {
		return Suggestion{}, false
	}
	cpus := ""
	for _, h := range t.Host.NUMANodes {
		if h.ID == numa {
			cpus = h.CPUs
		}
	}
	if cpus == "" {
		return Suggestion{}, false
	}
	s := Suggestion{Kind: SuggestRebindNUMA, Node: node,
		Text: fmt.Sprintf("%s: %s may run on CPUs %s, but its GPU(s) %s are on NUMA node %d: bind it to CPUs %s (restart with numactl --cpunodebind=%d --membind=%d; on Kubernetes, the topology manager's single-numa-node policy)",
			node, w.ID, w.CPUsAllowed, joinInts(w.GPUs), numa, cpus, numa, numa)}
	s.Action = &Action{CPUs: cpus, PIDs: w.PIDs}
	return s, true
}

func gpuNUMANodes(t *hwtopo.Topology, gpus []int) []int {
	set := map[int]bool{}
	for _, i := range gpus {
		if i >= 0 && i < len(t.GPUs) && t.GPUs[i].NUMANode != nil {
			set[*t.GPUs[i].NUMANode] = true
		}
	}
	var out []int
	for n := range set {
		out = append(out, n)
	}
	sort.Ints(out)
	return out
}

func fitsOneNode(perNode map[int]int, gpus int) bool {
	for _, n := range perNode {
		if n >= gpus {
			return true
		}
	}
	return false
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}
