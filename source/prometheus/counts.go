package prometheus

import "github.com/seedance/seedance/source/dcgm"

// counts are sample counts per GPU of the metrics read, by their position
// in the read's names: one entry per GPU, not one map per metric, since a
// pushdown read of one chunk counts every metric of every GPU of the fleet
// in its discovery (80,000 GPUs × 12 metrics of 20: 101 MB as a map per
// metric, 21 MB so).
type counts struct {
	width int // the metrics read
	gpus  map[dcgm.GPUKey]gpuCounts
}

// gpuCounts are one GPU's counts; has says which metrics were answered.
type gpuCounts struct {
	has uint32 // bit i: metric i
	n   []int
}

func newCounts(width int) *counts {
	return &counts{width: width, gpus: map[dcgm.GPUKey]gpuCounts{}}
}

// add adds n samples of metric i to a GPU's count.
func (c *counts) add(i int, key dcgm.GPUKey, n int) {
	g, ok := c.gpus[key]
	if !ok {
		g.n = make([]int, c.width)
	}
	g.has |= 1 << i
	g.n[i] += n
	c.gpus[key] = g
}

// each calls fn with every GPU's count of metric i, where it has one.
func (c *counts) each(i int, fn func(key dcgm.GPUKey, n int)) {
	for key, g := range c.gpus {
		if g.has&(1<<i) != 0 {
			fn(key, g.n[i])
		}
	}
}

// take adds src's counts of one GPU, of the metrics at the positions
// given, and says how many it had.
func (c *counts) take(src *counts, key dcgm.GPUKey, metrics []int) int {
	g, ok := src.gpus[key]
	n := 0
	for _, i := range metrics {
		if ok && g.has&(1<<i) != 0 {
			c.add(i, key, g.n[i])
			n++
		}
	}
	return n
}

// reset empties the counts, keeping their space.
func (c *counts) reset() { clear(c.gpus) }
