package profile

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
)

// Pieces is one profile cut by time into pieces kept on disk, each in a
// spill of its own: a reader that counts a long profile window by window
// holds one piece at a time, never the whole. Piece i holds every GPU's
// samples at or after bounds[i] and at or before bounds[i+1] (a sample on
// a bound is in both pieces), times still relative to the profile's
// start; every node, GPU and workload of the profile is in every piece,
// with no samples where it has none there; the header is the profile's.
// So Join over the pieces of a window's bounds gives what Join over the
// whole profile does, for any [from, to] within them, without keepLast.
type Pieces struct {
	header Profile
	bounds []float64 // Unix ms
	spills []*Spill
	last   float64 // the latest sample's time, Unix ms
}

// Cut reads the stream s to its end, cutting it at bounds (ascending, at
// least two) into pieces spilled in dir ("" for the system's temporary
// directory). Memory holds one node of the stream, and each piece's
// spill encoder (about 0.4 MiB: a zstd window of pieceWindow) until the
// stream's end. s is closed.
func Cut(s *Stream, bounds []time.Time, dir string) (*Pieces, error) {
	if len(bounds) < 2 {
		return nil, errors.New("cut a profile: fewer than two bounds")
	}
	p := &Pieces{header: s.Profile(), last: math.Inf(-1)}
	for _, b := range bounds {
		p.bounds = append(p.bounds, float64(b.UnixMilli()))
	}
	for range bounds[1:] {
		sp, err := newSpill(dir, pieceWindow)
		if err != nil {
			s.close()
			return nil, errors.Join(err, p.Close())
		}
		p.spills = append(p.spills, sp)
	}
	if err := p.fill(s); err != nil {
		return nil, errors.Join(err, p.Close())
	}
	for _, sp := range p.spills {
		if err := sp.Seal(); err != nil {
			return nil, errors.Join(err, p.Close())
		}
	}
	return p, nil
}

// pieceWindow is a piece's zstd window: many are open at once.
const pieceWindow = 256 << 10

// fill walks s, spilling each node's part of every piece at its end.
func (p *Pieces) fill(s *Stream) error {
	base := float64(p.header.StartedAt.UnixMilli())
	parts := make([][]GPU, len(p.spills))
	return s.Walk(func(it Item) error {
		if it.GPU != nil {
			if t := it.GPU.Series.T; len(t) > 0 {
				p.last = max(p.last, base+math.Round(t[len(t)-1]*1000))
			}
			for i := range parts {
				parts[i] = append(parts[i], cutGPU(it.GPU, base, p.bounds[i], p.bounds[i+1]))
			}
			return nil
		}
		for i, sp := range p.spills {
			n := *it.End
			n.GPUs, parts[i] = parts[i], nil
			n.Workloads = pieceWork(it.End.Workloads, base, p.bounds[i], p.bounds[i+1])
			if err := sp.Node(&n); err != nil {
				return err
			}
		}
		return nil
	})
}

// pieceWork is the workloads with their counters' readings inside
// [from, to] (Unix ms; base is the profile's start) and the one before
// (a baseline), as a Join of the piece would keep them: a long profile's
// counters are not copied into every piece.
func pieceWork(ws []Workload, base, from, to float64) []Workload {
	out := slices.Clone(ws)
	for i := range out {
		if out[i].Work != nil {
			out[i].Work = joinWork(nil, out[i].Work, base, [2]float64{from, to}, base)
		}
	}
	return out
}

// Len is the number of pieces.
func (p *Pieces) Len() int { return len(p.spills) }

// Last is the time of the profile's latest sample; ok false when it has
// none.
func (p *Pieces) Last() (t time.Time, ok bool) {
	if math.IsInf(p.last, -1) {
		return time.Time{}, false
	}
	return time.UnixMilli(int64(p.last)).UTC(), true
}

// Piece reads piece i whole; it can be read once.
func (p *Pieces) Piece(i int) (*Profile, error) {
	if i < 0 || i >= len(p.spills) || p.spills[i] == nil {
		return nil, fmt.Errorf("cut a profile: no piece %d", i)
	}
	sp := p.spills[i]
	defer func() { sp.Close(); p.spills[i] = nil }()
	r, err := sp.Reader(&p.header)
	if err != nil {
		return nil, err
	}
	out, err := Read(r)
	if err != nil {
		return nil, fmt.Errorf("cut a profile: piece %d: %w", i, err)
	}
	return out, nil
}

// Close removes the pieces not read.
func (p *Pieces) Close() error {
	var errs []error
	for i, sp := range p.spills {
		if sp != nil {
			errs = append(errs, sp.Close())
			p.spills[i] = nil
		}
	}
	return errors.Join(errs...)
}

// cutGPU is a copy of g with its samples at or after from and at or
// before to (Unix ms; base is the profile's start) and their usage; the
// errors are left out, as Join leaves them.
func cutGPU(g *GPU, base, from, to float64) GPU {
	lo, hi := within(g.Series.T, base, from, to)
	out := *g
	out.Errors = nil
	out.Series = Series{T: append(Values{}, g.Series.T[lo:hi]...)}
	for m := Metric(0); m < NumMetrics; m++ {
		if c := *g.Series.Col(m); c != nil {
			*out.Series.Col(m) = append(Values{}, part(c, lo, hi)...)
		}
	}
	out.Usage = nil
	for _, u := range g.Usage {
		out.Usage = append(out.Usage, Usage{Workload: u.Workload, UtilPct: append(Values{}, part(u.UtilPct, lo, hi)...)})
	}
	return out
}

// Profile is the stream's header as a profile with no nodes.
func (s *Stream) Profile() Profile {
	h := s.Header
	return Profile{SchemaVersion: h.SchemaVersion, Generator: h.Generator, Source: h.Source, Cluster: h.Cluster, StartedAt: h.StartedAt,
		EndedAt: h.EndedAt, IntervalS: h.IntervalS, ContextS: h.ContextS, Complete: h.Complete, Notes: h.Notes,
		PendingUnknown: h.PendingUnknown, Unscheduled: h.Unscheduled, Queues: h.Queues, Nodes: []Node{}}
}

// Trim is p ending at to, if sooner: the samples after it dropped, the
// workloads' tenure cut at it (those with none left dropped, unless
// pending), as if p had ended there; its start and the context samples
// before it are kept.
func Trim(p *Profile, to time.Time) *Profile {
	if !to.Before(p.EndedAt) {
		return p
	}
	out := *p
	out.EndedAt, out.Nodes = to, make([]Node, len(p.Nodes))
	base, toMS := float64(p.StartedAt.UnixMilli()), float64(to.UnixMilli())
	for i := range p.Nodes {
		n := p.Nodes[i]
		n.GPUs, n.Workloads = make([]GPU, len(n.GPUs)), nil
		for gi := range p.Nodes[i].GPUs {
			n.GPUs[gi] = cutGPU(&p.Nodes[i].GPUs[gi], base, math.Inf(-1), toMS)
		}
		joinWorkloads(&n, p.Nodes[i].Workloads, base, p.EndedAt.Sub(p.StartedAt).Seconds(), [2]float64{math.Inf(-1), toMS}, base)
		out.Nodes[i] = n
	}
	return &out
}
