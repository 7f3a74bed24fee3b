package profile

import "github.com/seedance/seedance/hwtopo"

// AttachTopology gives node (every node when "") the topology read from a
// capture (--topology-file), for sources that cannot see it themselves. A
// topology whose GPU count differs from the node's is not attached.
func AttachTopology(p *Profile, node string, t *hwtopo.Topology) (attached int) {
	for i := range p.Nodes {
		n := &p.Nodes[i]
		if node != "" && n.Name != node {
			continue
		}
		full := 0
		model := ""
		for _, g := range n.GPUs {
			if g.MIG == nil {
				full++
				model = g.Model
			}
		}
		if full != len(t.GPUs) {
			continue
		}
		c := *t
		c.NVLinkGBps = make([][]float64, len(t.NVLinkGBps))
		for k := range t.NVLinkGBps {
			c.NVLinkGBps[k] = append([]float64(nil), t.NVLinkGBps[k]...)
		}
		n.Topology = hwtopo.FromCapture(&c, model)
		attached++
	}
	return attached
}
