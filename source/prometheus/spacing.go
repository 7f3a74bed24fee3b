package prometheus

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/seedance/seedance/profile"
)

// AssumedStep is the scrape interval assumed with --step auto for a GPU
// with a single sample in the range (none to measure a spacing from), and
// for sizing batches before anything is read.
const AssumedStep = 15 * time.Second

// spacings counts the nodes (dcgm-exporter targets) by the scrape spacing
// measured on their samples, in seconds.
type spacings map[float64]int

// count adds the nodes' spacings: a node's is that of its first GPU with
// one (every GPU of a target is scraped together).
func (s spacings) count(nodes []profile.Node) {
	for _, n := range nodes {
		for _, g := range n.GPUs {
			if g.IntervalS > 0 {
				s[g.IntervalS]++
				break
			}
		}
	}
}

// mode is the spacing most targets have (the longer one on a tie); 0 when
// none was measured.
func (s spacings) mode() float64 {
	best, n := 0.0, 0
	for v, k := range s {
		if k > n || k == n && v > best {
			best, n = v, k
		}
	}
	return best
}

// finish sets the profile's interval_s to the spacing most targets have
// (each GPU carries its own), and notes a --step the data contradicts,
// spacings that differ between targets, or a spacing that could not be
// measured and was assumed.
func (s spacings) finish(p *profile.Profile, step time.Duration) {
	p.IntervalS = s.mode()
	if p.IntervalS == 0 {
		assumed := step
		if assumed <= 0 {
			assumed = AssumedStep
		}
		p.IntervalS = assumed.Seconds()
		p.Notes = append(p.Notes, fmt.Sprintf("scrape interval: no target has two samples in the range to measure it from; %s is assumed (set --step)", assumed))
		return
	}
	if len(s) > 1 {
		p.Notes = append(p.Notes, "scrape interval differs between targets: "+s.String()+"; each GPU's coverage and gaps use its own target's")
	}
	if step > 0 && !s.agree(step.Seconds()) {
		p.Notes = append(p.Notes, fmt.Sprintf("--step %s is not the scrape interval measured on the data (%s): the measured one is used, so the figures are the data's", step, s))
	}
}

// agree reports whether every measured spacing is within 10 % of step.
func (s spacings) agree(step float64) bool {
	for v := range s {
		if math.Abs(v-step) > 0.1*step {
			return false
		}
	}
	return true
}

// String lists the spacings with their target counts, most common first:
// "30s on 20 targets, 15s on 4 targets".
func (s spacings) String() string {
	vs := make([]float64, 0, len(s))
	for v := range s {
		vs = append(vs, v)
	}
	slices.SortFunc(vs, func(a, b float64) int {
		if s[a] != s[b] {
			return s[b] - s[a]
		}
		return int(math.Copysign(1, b-a))
	})
	parts := make([]string, len(vs))
	for i, v := range vs {
		unit := "targets"
		if s[v] == 1 {
			unit = "target"
		}
		parts[i] = fmt.Sprintf("%s on %d %s", time.Duration(v*float64(time.Second)), s[v], unit)
	}
	return strings.Join(parts, ", ")
}
