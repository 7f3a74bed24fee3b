package profile

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// Header is a profile without its nodes.
type Header struct {
	SchemaVersion string    `json:"schema_version"`
	Generator     Generator `json:"generator"`
	Source        string    `json:"source,omitempty"`
	StartedAt     time.Time `json:"started_at"`
	EndedAt       time.Time `json:"ended_at"`
	IntervalS     float64   `json:"interval_s"`
	Complete      bool      `json:"complete"`
}

// Item is one step of a streamed profile: a GPU of a node, or the end of a
// node (with its labels and workloads, and no GPUs).
type Item struct {
	Node string
	GPU  *GPU  // set for a GPU
	End  *Node // set at the end of a node
}

// Stream reads a profile one GPU at a time, so that a reader's memory does
// not grow with the number of nodes. The header is read first; seedance
// writes it before the nodes, and for a document that puts it after them the
// nodes are buffered until it is known.
type Stream struct {
	Header   Header
	name     string
	closer   io.Closer
	dec      *json.Decoder
	buffered []Node // nodes read before the header was complete
	atNodes  bool   // the decoder is positioned inside "nodes": [
}

// OpenStream starts reading a profile from r (gzip detected by magic bytes)
// and reads its header. name is used in error messages.
func OpenStream(r io.Reader, name string) (*Stream, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	s := &Stream{name: name}
	var in io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, s.errorf("gzip: %v", err)
		}
		s.closer = zr
		in = bufio.NewReaderSize(zr, 1<<20)
	}
	s.dec = json.NewDecoder(in)
	if err := s.readHeader(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Stream) errorf(format string, args ...any) error {
	return fmt.Errorf("read profile %s: %w: %s", s.name, ErrInvalid, fmt.Sprintf(format, args...))
}

func (s *Stream) jsonErr(err error) error {
	return s.errorf("%s", describeJSONError(err))
}

// readHeader reads top-level fields until "nodes" (when the header is then
// complete) or the end of the document.
func (s *Stream) readHeader() error {
	if err := s.expectDelim('{'); err != nil {
		return err
	}
	p := &Profile{}
	for s.dec.More() {
		key, err := s.key()
		if err != nil {
			return err
		}
		if key == "nodes" {
			if p.SchemaVersion != "" && !p.StartedAt.IsZero() && !p.EndedAt.IsZero() && p.IntervalS != 0 {
				s.setHeader(p)
				if err := s.checkHeader(p); err != nil {
					return err
				}
				tok, err := s.dec.Token()
				if err != nil {
					return s.jsonErr(err)
				}
				if tok == nil { // "nodes": null
					return nil
				}
				if d, ok := tok.(json.Delim); !ok || d != '[' {
					return s.errorf("nodes must be an array")
				}
				s.atNodes = true
				return nil
			}
			if err := s.dec.Decode(&s.buffered); err != nil {
				return s.jsonErr(err)
			}
			continue
		}
		if err := s.headerField(p, key); err != nil {
			return err
		}
	}
	s.setHeader(p)
	p.Nodes = s.buffered
	if err := Validate(p); err != nil {
		return fmt.Errorf("read profile %s: %w", s.name, err)
	}
	return nil
}

func (s *Stream) setHeader(p *Profile) {
	s.Header = Header{p.SchemaVersion, p.Generator, p.Source, p.StartedAt, p.EndedAt, p.IntervalS, p.Complete}
}

// checkHeader applies Validate's header rules.
func (s *Stream) checkHeader(p *Profile) error {
	h := *p
	h.Nodes = nil
	if err := Validate(&h); err != nil {
		return fmt.Errorf("read profile %s: %w", s.name, err)
	}
	return nil
}

func (s *Stream) headerField(p *Profile, key string) error {
	var dst any
	switch key {
	case "schema_version":
		dst = &p.SchemaVersion
	case "generator":
		dst = &p.Generator
	case "source":
		dst = &p.Source
	case "started_at":
		dst = &p.StartedAt
	case "ended_at":
		dst = &p.EndedAt
	case "interval_s":
		dst = &p.IntervalS
	case "complete":
		dst = &p.Complete
	default:
		dst = &json.RawMessage{} // unknown: skipped
	}
	if err := s.dec.Decode(dst); err != nil {
		return s.errorf("field %q: %s", key, describeJSONError(err))
	}
	return nil
}

// Walk calls fn for every GPU and at the end of every node, in document
// order. A GPU that breaks the format's rules stops the walk with an error
// wrapping ErrInvalid.
func (s *Stream) Walk(fn func(Item) error) error {
	defer s.close()
	if !s.atNodes {
		for ni := range s.buffered {
			n := &s.buffered[ni]
			for gi := range n.GPUs {
				if err := fn(Item{Node: n.Name, GPU: &n.GPUs[gi]}); err != nil {
					return err
				}
			}
			end := *n
			end.GPUs = nil
			if err := fn(Item{Node: n.Name, End: &end}); err != nil {
				return err
			}
		}
		return nil
	}
	for ni := 0; s.dec.More(); ni++ {
		if err := s.node(ni, fn); err != nil {
			return err
		}
	}
	if _, err := s.dec.Token(); err != nil { // ]
		return s.jsonErr(err)
	}
	return nil
}

func (s *Stream) node(ni int, fn func(Item) error) error {
	if err := s.expectDelim('{'); err != nil {
		return err
	}
	var n Node
	var pending []GPU // GPUs read before the node's name
	for s.dec.More() {
		key, err := s.key()
		if err != nil {
			return err
		}
		switch key {
		case "gpus":
			if err := s.gpus(&n, ni, &pending, fn); err != nil {
				return err
			}
		case "name":
			err = s.dec.Decode(&n.Name)
		case "labels":
			err = s.dec.Decode(&n.Labels)
		case "workloads":
			err = s.dec.Decode(&n.Workloads)
		default:
			err = s.dec.Decode(&json.RawMessage{})
		}
		if err != nil {
			return s.errorf("nodes[%d].%s: %s", ni, key, describeJSONError(err))
		}
	}
	if _, err := s.dec.Token(); err != nil { // }
		return s.jsonErr(err)
	}
	if n.Name == "" {
		return s.errorf("nodes[%d] has no name", ni)
	}
	for gi := range pending {
		if err := fn(Item{Node: n.Name, GPU: &pending[gi]}); err != nil {
			return err
		}
	}
	return fn(Item{Node: n.Name, End: &n})
}

func (s *Stream) gpus(n *Node, ni int, pending *[]GPU, fn func(Item) error) error {
	tok, err := s.dec.Token()
	if err != nil {
		return s.jsonErr(err)
	}
	if tok == nil {
		return nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return s.errorf("nodes[%d].gpus must be an array", ni)
	}
	for gi := 0; s.dec.More(); gi++ {
		var g GPU
		if err := s.dec.Decode(&g); err != nil {
			return s.errorf("nodes[%d].gpus[%d]: %s", ni, gi, describeJSONError(err))
		}
		if err := validateGPU(&g); err != nil {
			return s.errorf("node %q gpus[%d]: %v", n.Name, gi, err)
		}
		if n.Name == "" {
			*pending = append(*pending, g)
			continue
		}
		if err := fn(Item{Node: n.Name, GPU: &g}); err != nil {
			return err
		}
	}
	_, err = s.dec.Token() // ]
	if err != nil {
		return s.jsonErr(err)
	}
	return nil
}

func (s *Stream) key() (string, error) {
	tok, err := s.dec.Token()
	if err != nil {
		return "", s.jsonErr(err)
	}
	k, ok := tok.(string)
	if !ok {
		return "", s.errorf("unexpected %v", tok)
	}
	return k, nil
}

func (s *Stream) expectDelim(d json.Delim) error {
	tok, err := s.dec.Token()
	if err != nil {
		return s.jsonErr(err)
	}
	if got, ok := tok.(json.Delim); !ok || got != d {
		return s.errorf("expected %q, found %v", d, tok)
	}
	return nil
}

func (s *Stream) close() {
	if s.closer != nil {
		s.closer.Close()
	}
}
