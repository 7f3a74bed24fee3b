package profile

import (
	"fmt"
	"math"
	"slices"

	"github.com/seedance/seedance/internal/jsonscan"
)

// onceKeys is the keys of one object so far, to refuse one seen twice
// (encoding/json would keep the last, silently); held by value, it costs
// no allocation for objects of up to 16 keys.
type onceKeys struct {
	n    int
	k    [16]string
	more []string
}

func (o *onceKeys) add(key string) error {
	if slices.Contains(o.k[:o.n], key) || slices.Contains(o.more, key) {
		return invalidGPU{fmt.Sprintf("key %q appears twice in one object", short(key))}
	}
	if o.n < len(o.k) {
		o.k[o.n] = key
		o.n++
	} else {
		o.more = append(o.more, key)
	}
	return nil
}

// gpu reads one GPU object; its columns reuse bufs' memory.
func (s *Stream) gpu(g *GPU, bufs *Series) error {
	g.Index = -1
	return members(s.sc, func(key string) error {
		switch key {
		case "index":
			return s.gpuIndex(g)
		case "series":
			return s.series(&g.Series, bufs)
		}
		if known, err := s.metaReader().gpuMeta(g, key); known {
			return s.meta(key, err)
		}
		return s.sc.Skip()
	})
}

// members walks an object's members, refusing a key seen twice; field
// reads each one's value.
func members(sc *jsonscan.Scanner, field func(key string) error) error {
	var once onceKeys
	for i := 0; ; i++ {
		key, more, err := sc.Member(i)
		if !more || err != nil {
			return err
		}
		if err := once.add(key); err != nil {
			return err
		}
		if err := field(key); err != nil {
			return err
		}
	}
}

// gpuIndex reads a GPU's index.
func (s *Stream) gpuIndex(g *GPU) error {
	x, err := s.sc.Number()
	if err != nil {
		return err
	}
	if x != math.Trunc(x) || x < 0 || x > 1<<31 {
		return invalidGPU{fmt.Sprintf("index %v is not a GPU index", x)}
	}
	g.Index = int(x)
	return nil
}

// times reads a series' t. The GPUs of a node mostly share their sample
// times: a t written byte for byte as the last one read reuses its values
// (a copy, so that what a caller did with the last GPU's does not carry
// over) instead of reading them again.
func (s *Stream) times(out, bufs *Series) error {
	if s.sc.Same(s.lastT.raw) {
		bufs.T = append(bufs.T[:0], s.lastT.values...)
		out.T = bufs.T
		return nil
	}
	s.sc.Peek()
	start := s.sc.Offset()
	col, err := s.sc.Column(bufs.T, MaxSamplesPerGPU)
	if err != nil {
		return err
	}
	if col != nil {
		bufs.T = col
	}
	out.T = col
	if raw, ok := s.sc.Since(start); ok && col != nil {
		s.lastT.raw = append(s.lastT.raw[:0], raw...)
		s.lastT.values = append(s.lastT.values[:0], col...)
	}
	return nil
}

// series reads the columns of a series object.
func (s *Stream) series(out *Series, bufs *Series) error {
	return members(s.sc, func(key string) error {
		if key == "t" {
			return s.times(out, bufs)
		}
		m, ok := MetricByName(key)
		if !ok {
			return s.sc.Skip()
		}
		if s.tallied[m] {
			return s.tally(m)
		}
		col, err := s.sc.Column(*bufs.Col(m), MaxSamplesPerGPU)
		if err != nil {
			return err
		}
		if col != nil {
			*bufs.Col(m) = col
		}
		*out.Col(m) = col
		return nil
	})
}

// keepSeries is a copy of s to keep beside a node's GPUs read before it,
// its times shared with the last of them that samples at the same times
// (a node's GPUs mostly do: one array instead of eight). Nothing changes
// a GPU's times in place but Reframe, which moves each array once.
func keepSeries(s Series, before []GPU) Series {
	var t Values
	if len(before) > 0 && len(s.T) > 0 && slices.Equal(before[len(before)-1].Series.T, s.T) {
		t, s.T = before[len(before)-1].Series.T, nil
	}
	out := copySeries(s)
	if t != nil {
		out.T = t
	}
	return out
}

func copySeries(s Series) Series {
	var out Series
	if s.T != nil {
		out.T = append(Values{}, s.T...)
	}
	for m := Metric(0); m < NumMetrics; m++ {
		if c := *s.Col(m); c != nil {
			*out.Col(m) = append(Values{}, c...)
		}
	}
	return out
}

// tally reads metric m's column as a tally. A column written byte for
// byte as the last one of m, while the buffer still holds that one, has
// its tally, found by one memory compare (an idle GPU repeats the last
// one's zeros; a node's GPUs their clocks).
func (s *Stream) tally(m Metric) error {
	s.sc.Peek() // before Held: a refill moves the buffer's bytes
	last := &s.lastTally[m]
	if prev, ok := s.sc.Held(last.start, last.end); ok && last.tally.present && s.sc.Same(prev) {
		s.tallies[m] = last.tally
		return nil
	}
	start := s.sc.Offset()
	t, present, err := s.sc.TallyColumn(MaxSamplesPerGPU, metricLimit[m])
	s.tallies[m] = columnTally{Tally: t, present: present}
	if err == nil {
		*last = lastTally{start: start, end: s.sc.Offset(), tally: s.tallies[m]}
	}
	return err
}

// lastTally is where the last column of a metric read as a tally lies in
// the input, and its tally.
type lastTally struct {
	start, end int64
	tally      columnTally
}
