package cmd

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source"
)

// progressBar is a recording's progress (pipeline.Progress) on stderr,
// when it is a terminal: "[=====>    ] 1m10s / 5m0s  64 GPUs  util 41%"
// for a sampled source, redrawn in place at most ten times a second;
// "queries 12/40 (30%), …" for a read of history.
type progressBar struct {
	w           io.Writer
	nodes, gpus int
	last        time.Time
	drawn       bool
	started     time.Time
}

func newProgress(w io.Writer) *progressBar { return &progressBar{w: w, started: time.Now()} }

// Start is told the size of a sampled source.
func (b *progressBar) Start(nodes, gpus int) { b.nodes, b.gpus = nodes, gpus }

// Read shows a read of history's progress.
func (b *progressBar) Read(p source.ReadProgress) {
	b.drawn = true
	fmt.Fprint(b.w, "\r\033[K"+readProgressText(p, time.Since(b.started)))
}

// Sample shows a sampled source's progress.
func (b *progressBar) Sample(p source.Progress) {
	now := time.Now()
	if now.Sub(b.last) < 100*time.Millisecond && b.drawn {
		return
	}
	b.last = now
	b.drawn = true
	fmt.Fprintf(b.w, "\r\033[K%s", progressText(p, b.nodes, b.gpus))
}

// progressText renders one progress line; Total 0 means open-ended.
func progressText(p source.Progress, nodes, gpus int) string {
	util := "n/a"
	if !profile.IsNull(p.MeanUtil) {
		util = fmt.Sprintf("%.0f%%", p.MeanUtil)
	}
	elapsed := p.Elapsed.Truncate(time.Second)
	if p.Nodes > 0 { // recorded node by node
		return fmt.Sprintf("[%s] %d / %d nodes  %d GPUs", bar(float64(p.NodesDone)/float64(p.Nodes)), p.NodesDone, p.Nodes, gpus)
	}
	if p.Total <= 0 {
		return fmt.Sprintf("sampling %s  %d nodes  %d GPUs  %d samples  util %s", elapsed, nodes, gpus, p.Samples, util)
	}
	return fmt.Sprintf("[%s] %s / %s  %d GPUs  util %s", bar(float64(p.Elapsed)/float64(p.Total)), elapsed, p.Total, gpus, util)
}

// bar draws a fraction done as "=====>     ".
func bar(frac float64) string {
	const width = 24
	frac = min(max(frac, 0), 1)
	filled := int(frac * width)
	b := strings.Repeat("=", filled) + strings.Repeat(" ", width-filled)
	if filled < width {
		b = b[:filled] + ">" + b[filled+1:]
	}
	return b
}

// Done clears the bar's line.
func (b *progressBar) Done() {
	if b.drawn {
		fmt.Fprint(b.w, "\r\033[K")
	}
}

// readProgressText is the progress line of a read of history: "queries
// 12/40 (30%), 64 GPUs, 1.2M samples, about 14s left".
func readProgressText(p source.ReadProgress, elapsed time.Duration) string {
	s := fmt.Sprintf("queries %d/%d", p.Done, p.Total)
	if p.Total > 0 {
		s += fmt.Sprintf(" (%d%%)", p.Done*100/p.Total)
	}
	s += fmt.Sprintf(", %d GPUs, %s samples", p.GPUs, count(p.Samples))
	if p.Done > 0 && p.Done < p.Total {
		left := time.Duration(float64(elapsed) / float64(p.Done) * float64(p.Total-p.Done))
		s += ", about " + left.Round(time.Second).String() + " left"
	}
	return s
}

// count writes a number of samples compactly: 950, 12.3k, 1.2M.
func count(n int) string {
	switch {
	case n >= 1e6:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1e4:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}
