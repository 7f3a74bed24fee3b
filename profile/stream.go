package profile

import (
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/seedance/seedance/internal/jsonscan"
)

// Header is a profile without its nodes.
type Header struct {
	SchemaVersion string
	Generator     Generator
	Source        string
	StartedAt     time.Time
	EndedAt       time.Time
	IntervalS     float64
	Complete      bool
	Notes         []string
	// PendingUnknown is Profile.PendingUnknown.
	PendingUnknown string
	// Unscheduled is Profile.Unscheduled.
	Unscheduled []Workload
	// Cluster is Profile.Cluster.
	Cluster string
	// ContextS is Profile.ContextS.
	ContextS float64
	// Queues is Profile.Queues.
	Queues []Queue
}

// Item is one step of a streamed profile: a GPU of a node, or the end of a
// node (with its labels and workloads, and no GPUs).
type Item struct {
	Node string
	GPU  *GPU  // set for a GPU
	End  *Node // set at the end of a node
}

// Stream reads a profile one GPU at a time, so that a reader's memory does
// not grow with the number of nodes or the length of the run beyond one
// GPU's series. The header is read first; seedance writes it before the
// nodes, and for a document that puts it after them the nodes are buffered
// until it is known.
type Stream struct {
	Header   Header
	name     string
	closer   func() // stops the input's decompression
	sc       *jsonscan.Scanner
	buffered []Node          // nodes read before the header was complete
	atNodes  bool            // the scanner is inside "nodes": [
	bufs     Series          // column buffers reused from GPU to GPU
	names    map[string]bool // node names seen, each allowed once
	compact  bool            // DropTopologyDetail
	gpuBuf   GPU             // the GPU being read, reused
	checked  *checkedLists   // DropTopologyDetail's
	// tallied are the metrics ConvertOnly leaves unconverted, and tallies
	// what the GPU being read has of them.
	tallied [NumMetrics]bool
	tallies tallies
	// lastTally is each tallied metric's last column (Stream.tally).
	lastTally [NumMetrics]lastTally
	// lastT is the last series.t read whole from the buffer: its bytes and
	// its values (times).
	lastT struct {
		raw    []byte
		values Values
	}
}

// Name is the name the stream was opened with (for messages).
func (s *Stream) Name() string { return s.name }

// OpenStream starts reading a profile from r (gzip detected by magic bytes)
// and reads its header. name is used in error messages.
func OpenStream(r io.Reader, name string) (*Stream, error) {
	s := &Stream{name: name, names: map[string]bool{}}
	in, done, err := openInput(r)
	s.closer = done
	if err != nil {
		return nil, s.wrap(err)
	}
	s.sc = jsonscan.New(in)
	if err := s.readHeader(); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// wrap makes err a one-line "read profile NAME: invalid profile: …" error.
func (s *Stream) wrap(err error) error {
	if s.name == "" { // Read: the caller names the input
		if errors.Is(err, ErrInvalid) {
			return err
		}
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if errors.Is(err, ErrInvalid) {
		return fmt.Errorf("read profile %s: %w", s.name, err)
	}
	return fmt.Errorf("read profile %s: %w: %v", s.name, ErrInvalid, err)
}

// meta names key in a metadata reader's error, unless it is a syntax
// error (which gives its offset): "uuid: expected a string, found a number".
func (s *Stream) meta(key string, err error) error {
	var se *jsonscan.SyntaxError
	if err == nil || errors.As(err, &se) {
		return err
	}
	return fmt.Errorf("%s: %w", key, err)
}

// nodeMeta is meta for a node's field: "node \"n1\" topology: …".
func (s *Stream) nodeMeta(node, key string, err error) error {
	if err == nil {
		return nil
	}
	return s.meta("node "+strconv.Quote(short(node))+" "+key, err)
}

func (s *Stream) metaReader() metaReader {
	return metaReader{sc: s.sc, detail: !s.compact, checked: s.checked}
}

// DropTopologyDetail makes the nodes read from here on keep only the
// compact form of their topology (hwtopo.Topology.Compact: no per-link
// detail, UUIDs, bus ids or MIG layouts), still checking what is dropped.
// A reader that keeps nothing else saves most of a wide profile's
// metadata work.
func (s *Stream) DropTopologyDetail() {
	s.compact = true
	s.checked = &checkedLists{seed: maphash.MakeSeed(), seen: map[uint64]bool{}, matrix: map[string][][]string{}, nvlinkBW: map[string][][]float64{}}
}

// ConvertOnly makes the GPUs read from here on carry only the columns of
// the metrics keep holds (and series.t): every other column is checked as
// it would be (its grammar, its length, its range) but not converted, and
// is nil in the GPU handed out. A reader that declares what it reads saves
// the conversion of the rest.
func (s *Stream) ConvertOnly(keep [NumMetrics]bool) {
	for m := range s.tallied {
		s.tallied[m] = !keep[m]
	}
}

// Walk calls fn for every GPU and at the end of every node, in document
// order. The GPU passed to fn, and its series, are only valid during the
// call: the next GPU reuses their memory. A GPU that breaks the format's
// rules stops the walk with an error wrapping ErrInvalid.
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
	// fn's own errors pass through unchanged; the stream's are described.
	call := func(it Item) error {
		if err := fn(it); err != nil {
			return callerError{err}
		}
		return nil
	}
	err := s.nodes(call)
	if err == nil {
		err = s.rest()
	}
	var ce callerError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ce):
		return ce.err
	}
	return s.wrap(err)
}

// callerError carries an error returned by Walk's callback.
type callerError struct{ err error }

func (e callerError) Error() string { return e.err.Error() }

// invalidGPU is a GPU that breaks the format's rules.
type invalidGPU struct{ msg string }

func (e invalidGPU) Error() string { return e.msg }

// nodes reads the rest of the nodes array, calling fn as it goes.
func (s *Stream) nodes(fn func(Item) error) error {
	if s.sc.Peek() == ']' {
		s.sc.Advance()
		return nil
	}
	for ni := 0; ; ni++ {
		if err := s.node(ni, fn); err != nil {
			return err
		}
		if done, err := s.sc.Next(']'); done || err != nil {
			return err
		}
	}
}

// rest reads the top-level fields after "nodes" (ignored) and the end.
func (s *Stream) rest() error {
	for {
		switch s.sc.Peek() {
		case ',':
			s.sc.Advance()
			if _, err := s.sc.Str(); err != nil {
				return err
			}
			if err := s.sc.Expect(':'); err != nil {
				return err
			}
			if err := s.sc.Skip(); err != nil {
				return err
			}
		case '}':
			s.sc.Advance()
			return s.sc.End()
		case 0:
			return s.sc.EndErr()
		default:
			return s.sc.Errorf("expected ',' or '}' after nodes")
		}
	}
}

// node reads one node, calling fn for each GPU and at the end.
func (s *Stream) node(ni int, fn func(Item) error) error {
	var n Node
	var pending []GPU // GPUs read before the node's name
	uuids, indexes := map[string]bool{}, map[int]bool{}
	err := members(s.sc, func(key string) error {
		switch key {
		case "name":
			if err := s.sc.String(&n.Name); err != nil {
				return s.meta("nodes["+strconv.Itoa(ni)+"].name", err)
			}
			return nil
		case "labels":
			return s.nodeMeta(n.Name, key, s.sc.StringMap(&n.Labels))
		case "workloads":
			return s.nodeMeta(n.Name, key, s.metaReader().workloads(&n.Workloads))
		case "topology":
			return s.nodeMeta(n.Name, key, s.metaReader().topology(&n.Topology))
		case "gpus":
			return s.sc.Array(func(gi int) error {
				g := &s.gpuBuf // handed to fn, valid during the call
				*g = GPU{}
				s.tallies = tallies{}
				if err := s.gpu(g, &s.bufs); err != nil {
					var se *jsonscan.SyntaxError
					if errors.As(err, &se) {
						return err
					}
					return fmt.Errorf("node %q gpus[%d] %w", short(n.Name), gi, err)
				}
				if err := checkGPUEntry(g, gi, uuids, &s.tallies); err != nil {
					return invalidGPU{fmt.Sprintf("node %q gpus[%d]: %v", short(n.Name), gi, err)}
				}
				if err := s.window().check(g, indexes); err != nil {
					return invalidGPU{fmt.Sprintf("node %q gpus[%d]: %v", short(n.Name), gi, err)}
				}
				if n.Name == "" {
					g.Series = copySeries(g.Series)
					pending = append(pending, *g)
					return nil
				}
				return fn(Item{Node: n.Name, GPU: g})
			})
		}
		return s.sc.Skip()
	})
	if err != nil {
		return err
	}
	if err := checkNodeName(n.Name, ni, s.names); err != nil {
		return invalidGPU{err.Error()}
	}
	span := math.Inf(1) // buffered before the header: Validate checks the tenure
	if s.atNodes {
		span = s.Header.EndedAt.Sub(s.Header.StartedAt).Seconds()
	}
	if err := validateNode(&n, span); err != nil {
		return invalidGPU{fmt.Sprintf("node %q: %v", short(n.Name), err)}
	}
	for gi := range pending {
		if err := fn(Item{Node: n.Name, GPU: &pending[gi]}); err != nil {
			return err
		}
	}
	return fn(Item{Node: n.Name, End: &n})
}

// nodeFull reads a whole node into memory (the header-after-nodes case).
func (s *Stream) nodeFull(ni int) (Node, error) {
	var out Node
	err := s.node(ni, func(it Item) error {
		if it.End != nil {
			gpus := out.GPUs
			out = *it.End
			out.GPUs = gpus
			return nil
		}
		g := *it.GPU
		g.Series = keepSeries(g.Series, out.GPUs)
		out.GPUs = append(out.GPUs, g)
		return nil
	})
	return out, err
}

func (s *Stream) close() {
	if s.closer != nil {
		s.closer()
		s.closer = nil
	}
}

// Close stops reading the stream and closes what it reads; a stream
// walked to its end is closed already.
func (s *Stream) Close() { s.close() }

// StreamOf streams a profile already in memory, as OpenStream would stream
// its encoding, without encoding it: it is validated whole first. The
// stream hands out p's own GPUs, which the walk's callback must not change.
func StreamOf(p *Profile, name string) (*Stream, error) {
	s := &Stream{name: name, closer: func() {}, buffered: p.Nodes}
	s.setHeader(p)
	if err := Validate(p); err != nil {
		return nil, s.wrap(err)
	}
	return s, nil
}

// window is the profile's window, once the header is read (before it,
// an infinite one: Validate checks the buffered nodes).
func (s *Stream) window() window {
	if !s.atNodes {
		return window{math.Inf(1), 0}
	}
	return window{s.Header.EndedAt.Sub(s.Header.StartedAt).Seconds(), s.Header.ContextS}
}
