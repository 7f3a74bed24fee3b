package cmd

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source"
)

// progressBar draws "[=====>    ] 1m10s / 5m0s  64 GPUs  util 41%" on stderr,
// redrawn in place at most ten times a second. It is only used when stderr
// is a terminal.
type progressBar struct {
	w           io.Writer
	nodes, gpus int
	last        time.Time
	drawn       bool
}

func newProgressBar(w io.Writer, nodes, gpus int) *progressBar {
	return &progressBar{w: w, nodes: nodes, gpus: gpus}
}

func (b *progressBar) update(p source.Progress) {
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
	const width = 24
	util := "n/a"
	if !profile.IsNull(p.MeanUtil) {
		util = fmt.Sprintf("%.0f%%", p.MeanUtil)
	}
	elapsed := p.Elapsed.Truncate(time.Second)
	if p.Total <= 0 {
		return fmt.Sprintf("sampling %s  %d nodes  %d GPUs  %d samples  util %s", elapsed, nodes, gpus, p.Samples, util)
	}
	frac := float64(p.Elapsed) / float64(p.Total)
	if frac > 1 {
		frac = 1
	}
	filled := int(frac * width)
	bar := strings.Repeat("=", filled) + strings.Repeat(" ", width-filled)
	if filled < width {
		bar = bar[:filled] + ">" + bar[filled+1:]
	}
	return fmt.Sprintf("[%s] %s / %s  %d GPUs  util %s", bar, elapsed, p.Total, gpus, util)
}

// done clears the bar's line.
func (b *progressBar) done() {
	if b != nil && b.drawn {
		fmt.Fprint(b.w, "\r\033[K")
	}
}
