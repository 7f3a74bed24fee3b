package profile

import (
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"slices"

	"github.com/klauspost/compress/s2"
)

// The carried form: a profile as the ledger keeps its carried samples
// between updates (docs/ledger.md, Schema), not an interchange format. It
// holds what the JSON form holds, for a fifth of the CPU to write and read
// (issue #56): the metadata in gob, every column (a GPU's series and
// usage, a counter's times and readings) as raw little-endian float64s,
// the whole compressed by zstd at its fastest level. A GPU samples at the
// times of the GPU before it on its node, and a counter reads at the
// times of the one before it in its workload, as Read shares them.

// carriedMagic begins the carried form; a JSON profile (plain or
// compressed) never does.
var carriedMagic = []byte("seedance-carried\x01")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// IsCarried says whether b is in the carried form.
func IsCarried(b []byte) bool { return bytes.HasPrefix(b, carriedMagic) }

// Column tags: a column is nil, the times of the one before it, or n
// values (tag n+2).
const (
	tagNil = iota
	tagSame
	tagValues
)

// columnKind says what a column holds: readings, or times that may share
// the times before them (a GPU's, after the first of its node; a
// counter's, after the first of its workload), or that share nothing.
type columnKind int

const (
	readings columnKind = iota
	firstTimes
	moreTimes
)

// MarshalCarried is p in the carried form, without its nodes' topology.
func MarshalCarried(p *Profile) ([]byte, error) {
	m := withoutColumns(p)
	var meta bytes.Buffer
	if err := gob.NewEncoder(&meta).Encode(m); err != nil {
		return nil, fmt.Errorf("carried samples: %v", err)
	}
	var z zeros
	z.walk(m)
	size := 2*binary.MaxVarintLen64 + meta.Len() + len(z.bits)
	_ = eachColumn(p, func(c *Values, _ columnKind) error {
		size += binary.MaxVarintLen64 + 8*len(*c)
		return nil
	})
	b := binary.AppendUvarint(make([]byte, 0, size), uint64(meta.Len()))
	b = append(b, meta.Bytes()...)
	b = append(binary.AppendUvarint(b, uint64(len(z.bits))), z.bits...)
	var prev Values
	_ = eachColumn(p, func(c *Values, kind columnKind) error {
		b, prev = appendColumn(b, *c, kind, prev)
		return nil
	})
	head := len(carriedMagic) + 4
	out := make([]byte, head, head+s2.MaxEncodedLen(len(b)))
	copy(out, carriedMagic)
	binary.LittleEndian.PutUint32(out[len(carriedMagic):], crc32.Checksum(b, castagnoli))
	return out[:head+len(s2.Encode(out[head:cap(out)], b))], nil // encoded in place
}

// appendColumn appends c's tag and values to b; times equal to prev (the
// times before them) that may share them are tagged as the same. It
// returns the times the next column may share.
func appendColumn(b []byte, c Values, kind columnKind, prev Values) ([]byte, Values) {
	switch {
	case c == nil:
		return binary.AppendUvarint(b, tagNil), prevAfter(kind, nil, prev)
	case kind == moreTimes && prev != nil && slices.Equal(c, prev):
		return binary.AppendUvarint(b, tagSame), prev
	}
	b = binary.AppendUvarint(b, uint64(len(c))+tagValues)
	for _, x := range c {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	return b, prevAfter(kind, c, prev)
}

// prevAfter is the times a column after c may share: c's, when c is of
// times.
func prevAfter(kind columnKind, c, prev Values) Values {
	if kind == readings {
		return prev
	}
	return c
}

// UnmarshalCarried reads what MarshalCarried wrote, with a profile's
// checks (Validate).
func UnmarshalCarried(b []byte) (*Profile, error) {
	if !IsCarried(b) {
		return nil, errors.New("carried samples: not in the carried form")
	}
	b = b[len(carriedMagic):]
	if len(b) < 4 {
		return nil, errors.New("carried samples: cut short")
	}
	raw, err := s2.Decode(nil, b[4:])
	if err != nil {
		return nil, fmt.Errorf("carried samples: %v", err)
	}
	if crc32.Checksum(raw, castagnoli) != binary.LittleEndian.Uint32(b) {
		return nil, errors.New("carried samples: damaged (their checksum differs)")
	}
	meta, raw, err := section(raw)
	if err != nil {
		return nil, err
	}
	p := new(Profile)
	if err := gob.NewDecoder(bytes.NewReader(meta)).Decode(p); err != nil {
		return nil, fmt.Errorf("carried samples: %v", err)
	}
	z := zeros{reading: true}
	if z.bits, raw, err = section(raw); err != nil {
		return nil, err
	}
	if z.walk(p); z.i > 8*len(z.bits) {
		return nil, errors.New("carried samples: cut short")
	}
	r := columnReader{b: raw}
	if err := eachColumn(p, r.read); err != nil {
		return nil, err
	}
	if len(r.b) != 0 {
		return nil, errors.New("carried samples: bytes after the last column")
	}
	if err := Validate(p); err != nil {
		return nil, fmt.Errorf("carried samples: %v", err)
	}
	return p, nil
}

// section is the bytes of length n that b begins with (n a uvarint), and
// the rest.
func section(b []byte) ([]byte, []byte, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return nil, nil, errors.New("carried samples: cut short")
	}
	return b[k : k+int(n)], b[k+int(n):], nil
}

// columnReader reads columns from b, in the order they were written.
type columnReader struct {
	b    []byte
	prev Values // the last times read, for tagSame
}

func (r *columnReader) read(c *Values, kind columnKind) error {
	tag, k := binary.Uvarint(r.b)
	if k <= 0 {
		return errors.New("carried samples: cut short")
	}
	r.b = r.b[k:]
	switch {
	case tag == tagNil:
		*c = nil
	case tag == tagSame:
		if kind != moreTimes || r.prev == nil {
			return errors.New("carried samples: a column shares times it may not")
		}
		*c = r.prev
	case tag-tagValues > uint64(len(r.b)/8):
		return errors.New("carried samples: cut short")
	default:
		*c = make(Values, tag-tagValues)
		for i := range *c {
			(*c)[i] = math.Float64frombits(binary.LittleEndian.Uint64(r.b[8*i:]))
		}
		r.b = r.b[8*len(*c):]
	}
	r.prev = prevAfter(kind, *c, r.prev)
	return nil
}

// eachColumn visits p's columns in a fixed order: per node, each GPU's
// times, its metrics' columns and its usage, then each workload's
// counters, times before readings; then the unscheduled workloads'
// counters.
func eachColumn(p *Profile, visit func(c *Values, kind columnKind) error) error {
	for i := range p.Nodes {
		n := &p.Nodes[i]
		if err := gpuColumns(n.GPUs, visit); err != nil {
			return err
		}
		if err := workColumns(n.Workloads, visit); err != nil {
			return err
		}
	}
	return workColumns(p.Unscheduled, visit)
}

// gpuColumns visits the GPUs' columns, the first GPU's times not shared
// with what came before it.
func gpuColumns(gs []GPU, visit func(c *Values, kind columnKind) error) error {
	for gi := range gs {
		g := &gs[gi]
		if err := visit(&g.Series.T, timesKind(gi)); err != nil {
			return err
		}
		for m := Metric(0); m < NumMetrics; m++ {
			if err := visit(g.Series.Col(m), readings); err != nil {
				return err
			}
		}
		for ui := range g.Usage {
			if err := visit(&g.Usage[ui].UtilPct, readings); err != nil {
				return err
			}
		}
	}
	return nil
}

// workColumns visits the workloads' counters, each workload's first
// counter's times not shared with what came before it.
func workColumns(ws []Workload, visit func(c *Values, kind columnKind) error) error {
	for wi := range ws {
		for ci := range ws[wi].Work {
			c := &ws[wi].Work[ci]
			if err := visit(&c.T, timesKind(ci)); err != nil {
				return err
			}
			if err := visit(&c.V, readings); err != nil {
				return err
			}
		}
	}
	return nil
}

// timesKind is the kind of the i-th times of a node or workload.
func timesKind(i int) columnKind {
	if i == 0 {
		return firstTimes
	}
	return moreTimes
}

// withoutColumns is a copy of p with no column and no topology, sharing
// the rest: its metadata.
func withoutColumns(p *Profile) *Profile {
	m := *p
	m.Nodes = slices.Clone(p.Nodes)
	for i := range m.Nodes {
		n := &m.Nodes[i]
		n.Topology = nil
		n.GPUs = slices.Clone(n.GPUs)
		for gi := range n.GPUs {
			g := &n.GPUs[gi]
			g.Series = Series{}
			g.Usage = slices.Clone(g.Usage)
			for ui := range g.Usage {
				g.Usage[ui].UtilPct = nil
			}
		}
		n.Workloads = workloadsWithoutColumns(n.Workloads)
	}
	m.Unscheduled = workloadsWithoutColumns(p.Unscheduled)
	return &m
}

func workloadsWithoutColumns(ws []Workload) []Workload {
	ws = slices.Clone(ws)
	for wi := range ws {
		ws[wi].Work = slices.Clone(ws[wi].Work)
		for ci := range ws[wi].Work {
			ws[wi].Work[ci].T, ws[wi].Work[ci].V = nil, nil
		}
	}
	return ws
}
