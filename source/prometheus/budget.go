package prometheus

import (
	"errors"
	"sync/atomic"
)

// Memory of the answers being parsed. maxAnswerBytes bounds the bytes of
// one answer's body as it streams; answersBudget bounds what the answers
// being parsed hold in memory, all together: the parsed samples, series
// and labels are charged as they grow (by what their slices and maps
// allocate, not by the JSON, which can be 6 times smaller), and an answer
// that would take the total past the budget is refused. Without it, one
// answer of 256 MiB of one-sample series held about 870 MB parsed, and
// the 4 queries in flight 3.5 GB before the refusal: a pod limited to 1–2
// GiB was OOM-killed instead of getting the error. The budget is half the
// bound because the collector lets the heap grow to about twice what is
// live: refused answers then peak within twice the bound in total
// (TestEndlessAnswer). Accepted answers are far smaller: a batch of nodes
// holds DefaultBatchSamples (2.5 M samples, about 40 MB parsed) over all
// its queries.
var answersInFlight atomic.Int64

// answersBudget is what the answers being parsed may hold together.
const answersBudget = maxAnswerBytes / 2

// errAnswerTooLarge stops a parse past the bound.
var errAnswerTooLarge = errors.New("answer too large")

// answerMem is one answer's charge against answersInFlight.
type answerMem struct {
	n    int64
	over bool
}

// add charges n more bytes; past the bound it fails.
func (m *answerMem) add(n int64) error {
	if m == nil || n <= 0 {
		return nil
	}
	m.n += n
	if answersInFlight.Add(n) > answersBudget {
		m.over = true
		return errAnswerTooLarge
	}
	return nil
}

// release gives the charge back: the parse is over (the answer goes to
// its caller, or to the collector).
func (m *answerMem) release() {
	if m != nil {
		answersInFlight.Add(-m.n)
		m.n = 0
	}
}

// Sizes the charges count (amd64, measured: a one-label series costs 332
// bytes live): a sample (dcgm.Pair), a series (promSeries), a map (its
// header and first group of 8 slots), a label's entry in it.
const (
	pairBytes   = 16
	seriesBytes = 32
	mapBytes    = 208
	labelBytes  = 64
)

// labelsCost is what a series' labels hold: the map, its entries and
// their strings (counted even when shared with other series: an upper
// bound).
func labelsCost(labels map[string]string) int64 {
	n := int64(mapBytes)
	for k, v := range labels {
		n += labelBytes + int64(len(k)+len(v))
	}
	return n
}
