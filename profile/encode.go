package profile

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// Encode writes p as compact JSON followed by a newline. It streams: the
// series, which are nearly all of a profile, go from their columns to w
// through one small reused buffer instead of a document-sized one, so a
// long run does not need twice its size in memory to be saved. The bytes are
// the same as encoding/json would write.
func Encode(w io.Writer, p *Profile) error {
	e := &encoder{w: bufio.NewWriterSize(w, 1<<16)}
	e.header(p)
	for i := range p.Nodes {
		if i > 0 {
			e.raw(",")
		}
		e.node(&p.Nodes[i])
	}
	e.raw("]}\n")
	if e.err != nil {
		return fmt.Errorf("encode profile: %w", e.err)
	}
	return e.w.Flush()
}

type encoder struct {
	w   *bufio.Writer
	buf []byte
	err error
}

func (e *encoder) raw(s string) {
	if e.err == nil {
		_, e.err = e.w.WriteString(s)
	}
}

// open writes v's JSON object without its closing brace, so that more
// fields can follow.
func (e *encoder) open(v any) {
	if e.err != nil {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		e.err = err
		return
	}
	_, e.err = e.w.Write(b[:len(b)-1])
}

// field writes ,"name":value.
func (e *encoder) field(name string, v any) {
	if e.err != nil {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		e.err = err
		return
	}
	e.raw(`,"` + name + `":`)
	if e.err == nil {
		_, e.err = e.w.Write(b)
	}
}

func (e *encoder) header(p *Profile) {
	e.open(struct {
		SchemaVersion string    `json:"schema_version"`
		Generator     Generator `json:"generator"`
		Source        string    `json:"source,omitempty"`
		StartedAt     time.Time `json:"started_at"`
		EndedAt       time.Time `json:"ended_at"`
		IntervalS     float64   `json:"interval_s"`
		Complete      bool      `json:"complete"`
	}{p.SchemaVersion, p.Generator, p.Source, p.StartedAt, p.EndedAt, p.IntervalS, p.Complete})
	e.raw(`,"nodes":[`)
}

func (e *encoder) node(n *Node) {
	e.open(struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels,omitempty"`
	}{n.Name, n.Labels})
	if n.GPUs == nil {
		e.raw(`,"gpus":null`)
	} else {
		e.raw(`,"gpus":[`)
		for i := range n.GPUs {
			if i > 0 {
				e.raw(",")
			}
			e.gpu(&n.GPUs[i])
		}
		e.raw("]")
	}
	if len(n.Workloads) > 0 {
		e.field("workloads", n.Workloads)
	}
	e.raw("}")
}

func (e *encoder) gpu(g *GPU) {
	e.open(struct {
		Index            int    `json:"index"`
		UUID             string `json:"uuid"`
		Model            string `json:"model,omitempty"`
		MemoryTotalBytes uint64 `json:"memory_total_bytes,omitempty"`
		PCIBusID         string `json:"pci_bus_id,omitempty"`
		NUMANode         *int   `json:"numa_node,omitempty"`
		MIG              *MIG   `json:"mig"`
	}{g.Index, g.UUID, g.Model, g.MemoryTotalBytes, g.PCIBusID, g.NUMANode, g.MIG})
	e.raw(`,"series":{"t":`)
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
	e.raw("}")
}

// values writes one column in chunks through the reused buffer.
func (e *encoder) values(v Values) {
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
