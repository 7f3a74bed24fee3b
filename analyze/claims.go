package analyze

import (
	"fmt"

	"github.com/seedance/seedance/internal/table"
	"github.com/seedance/seedance/profile"
)

// faults counts a kind of bad input the analysis leaves out, and names
// the first few, for one warning: the running workloads that name a GPU
// their node does not report (an index no GPU of the node has, a MIG
// device it does not list), whose claim there holds nothing; the energy
// counter steps no GPU could draw. Said, not dropped in silence.
type faults struct {
	n     int
	first []string // the first few, for the warning
}

// claims are the bad claims of GPUs.
type claims = faults

// maxFaultsNamed is how many faults a warning names.
const maxFaultsNamed = 5

// check records the workloads of a node's input whose claims name GPUs
// the node has not reported.
func (c *claims) check(n *nodeAcc, ws []profile.Workload) {
	for _, w := range ws {
		if w.State == profile.StatePending {
			continue
		}
		for _, idx := range w.GPUs {
			if !hasIndex(n, idx) {
				c.add(fmt.Sprintf("%s on node %s: GPU index %d", w.ID, n.name, idx))
			}
		}
		for _, u := range w.GPUUUIDs {
			if n.gpu(u) == nil {
				c.add(fmt.Sprintf("%s on node %s: GPU %s", w.ID, n.name, u))
			}
		}
	}
}

func (c *faults) add(what string) {
	c.n++
	if len(c.first) < maxFaultsNamed {
		c.first = append(c.first, table.Visible(what))
	}
}

func hasIndex(n *nodeAcc, idx int) bool {
	for _, g := range n.gpus {
		if int(g.index) == idx {
			return true
		}
	}
	return false
}

// warnings is the report's warning of the faults, if any: what says
// what they are.
func (c *faults) warnings(what string) []string {
	if c.n == 0 {
		return nil
	}
	more := ""
	if c.n > len(c.first) {
		more = fmt.Sprintf(" (and %d more)", c.n-len(c.first))
	}
	return []string{fmt.Sprintf("%d %s: %v%s", c.n, what, c.first, more)}
}
