package profile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// Encode writes p as compact JSON followed by a newline. It streams: the
// series, which are nearly all of a profile, go from their columns to w
// through one small reused buffer instead of a document-sized one, so a
// long run does not need twice its size in memory to be saved. The bytes are
// the same as encoding/json would write.
func Encode(w io.Writer, p *Profile) error {
	e := NewEncoder(w, p)
	for i := range p.Nodes {
		e.Node(&p.Nodes[i])
	}
	return e.Close()
}

// Encoder writes a profile node by node, for sources whose clusters are too
// large to hold in memory at once.
type Encoder struct {
	w     *bufio.Writer
	buf   []byte
	err   error
	nodes int
}

// NewEncoder writes p's header (its Nodes are ignored) and returns an
// Encoder for the nodes.
func NewEncoder(w io.Writer, p *Profile) *Encoder {
	e := &Encoder{w: bufio.NewWriterSize(w, 1<<16)}
	e.header(p)
	return e
}

// Node writes one node.
func (e *Encoder) Node(n *Node) {
	if e.nodes > 0 {
		e.raw(",")
	}
	e.nodes++
	e.node(n)
}

// Close ends the document and flushes it.
func (e *Encoder) Close() error {
	e.raw("]}\n")
	if e.err != nil {
		return fmt.Errorf("encode profile: %w", e.err)
	}
	return e.w.Flush()
}

func (e *Encoder) raw(s string) {
	if e.err == nil {
		_, e.err = e.w.WriteString(s)
	}
}

// prefix writes v's JSON without its last len(cut) bytes, which must be cut:
// the placeholder of a field that is streamed next.
func (e *Encoder) prefix(v any, cut string) {
	b := e.marshal(v)
	if b == nil {
		return
	}
	if !bytes.HasSuffix(b, []byte(cut)) {
		e.err = fmt.Errorf("internal: %T encodes without %s at its end", v, cut)
		return
	}
	_, e.err = e.w.Write(b[:len(b)-len(cut)])
}

// marshal encodes v, or records the error and returns nil.
func (e *Encoder) marshal(v any) []byte {
	if e.err != nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		e.err = err
		return nil
	}
	return b
}

// field writes ,"name":value.
func (e *Encoder) field(name string, v any) {
	b := e.marshal(v)
	if b == nil {
		return
	}
	e.raw(`,"` + name + `":`)
	if e.err == nil {
		_, e.err = e.w.Write(b)
	}
}

// The parts of a document that are not series are encoded by encoding/json
// from shallow copies whose streamed field is emptied; the placeholder it
// writes for that field is cut and the field streamed in its place.
func (e *Encoder) header(p *Profile) {
	h := *p
	h.Nodes = nil
	e.prefix(&h, "null}")
	e.raw("[")
}

func (e *Encoder) node(n *Node) {
	h := *n
	h.GPUs, h.Workloads, h.Topology = nil, nil, nil
	e.prefix(&h, "null}")
	e.raw("[")
	for i := range n.GPUs {
		if i > 0 {
			e.raw(",")
		}
		e.gpu(&n.GPUs[i])
	}
	e.raw("]")
	if len(n.Workloads) > 0 {
		e.field("workloads", n.Workloads)
	}
	if n.Topology != nil {
		e.field("topology", n.Topology)
	}
	e.raw("}")
}

func (e *Encoder) gpu(g *GPU) {
	h := *g
	h.Series, h.Unsupported, h.Errors, h.Usage = Series{}, nil, nil, nil
	e.prefix(&h, `{"t":null}}`)
	e.raw(`{"t":`)
	e.values(g.Series.T)
	for m := Metric(0); m < NumMetrics; m++ {
		if col := *g.Series.Col(m); len(col) > 0 {
			e.raw(`,"` + m.String() + `":`)
			e.values(col)
		}
	}
	e.raw("}")
	if len(g.Unsupported) > 0 {
		e.field("unsupported", g.Unsupported)
	}
	if len(g.Errors) > 0 {
		e.field("errors", g.Errors)
	}
	if len(g.Usage) > 0 {
		e.field("usage", g.Usage)
	}
	e.raw("}")
}

// values writes one column in chunks through the reused buffer.
func (e *Encoder) values(v Values) {
	if v == nil {
		e.raw("null")
		return
	}
	e.raw("[")
	const chunk = 4096
	for i := 0; i < len(v) && e.err == nil; i += chunk {
		end := min(i+chunk, len(v))
		b := e.buf[:0]
		for j := i; j < end; j++ {
			if j > 0 {
				b = append(b, ',')
			}
			b = appendNumber(b, v[j])
		}
		e.buf = b
		_, e.err = e.w.Write(b)
	}
	e.raw("]")
}
