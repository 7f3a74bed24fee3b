package profile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/klauspost/compress/zstd"
	"github.com/seedance/seedance/internal/fsutil"
)

// Spill keeps encoded nodes in a temporary file (zstd-compressed: a
// fleet's day is gigabytes of JSON, and the file a fraction) until the profile's header
// is known: a source that reads a cluster node by node learns whether its
// read was complete, and what to note, only at the end. Memory stays at one
// node; the file holds the rest.
type Spill struct {
	f   *os.File
	zw  *zstd.Encoder // the file holds the nodes zstd-compressed (fastest level)
	zr  *zstd.Decoder // Reader's, closed by Close
	enc *Encoder
}

// spillWindow is the spill's zstd window: its encoder's history and its
// reader's are this size whatever the profile's, so that a day's spill
// costs the memory an hour's does (the default, 8 MiB, compresses this
// JSON no better). Its encoder's lower-memory mode keeps a history of the
// window and one block (1.1 MiB) instead of twice the window.
const spillWindow = 1 << 20

// spillPrefix names spill files: ".seedance-spill-PID-…", so that a later
// run can remove those of processes that were killed.
const spillPrefix = ".seedance-spill-"

// NewSpill creates the spill file in dir ("" for the system's temporary
// directory), first removing there the spills of runs that were killed.
func NewSpill(dir string) (*Spill, error) { return newSpill(dir, spillWindow) }

// newSpill is NewSpill with a zstd window of its own: one of many spills
// open at once (Cut) takes a smaller one.
func newSpill(dir string, window int) (*Spill, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	fsutil.RemoveStale(dir, spillPrefix)
	f, err := os.CreateTemp(dir, spillPrefix+strconv.Itoa(os.Getpid())+"-*.json.zst")
	if err != nil {
		return nil, fmt.Errorf("spill: %w", err)
	}
	zw, err := zstd.NewWriter(f, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithWindowSize(window), zstd.WithLowerEncoderMem(true))
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("spill: %w", err)
	}
	return &Spill{f: f, zw: zw, enc: &Encoder{w: bufio.NewWriterSize(zw, 1<<16)}}, nil
}

// Node encodes one node into the spill.
func (s *Spill) Node(n *Node) error {
	if s.enc == nil {
		return errors.New("spill: a node after the spill was sealed")
	}
	s.enc.Node(n)
	if s.enc.err != nil {
		return fmt.Errorf("spill: %w", s.enc.err)
	}
	return nil
}

// Reader returns the whole document: p's header (its Nodes are ignored),
// the spilled nodes, the end; the bytes Encode writes for the same profile.
// It is valid until Close, or the next Reader.
func (s *Spill) Reader(p *Profile) (io.Reader, error) {
	if s.zr != nil { // read before: the nodes are all written
		s.zr.Close()
	}
	if err := s.Seal(); err != nil {
		return nil, err
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("spill: %w", err)
	}
	zr, err := zstd.NewReader(s.f, zstdDecoderOptions...)
	if err != nil {
		return nil, fmt.Errorf("spill: %w", err)
	}
	s.zr = zr
	var head bytes.Buffer
	e := NewEncoder(&head, p)
	if err := e.w.Flush(); err != nil || e.err != nil {
		return nil, fmt.Errorf("encode profile: %v", e.err)
	}
	return io.MultiReader(&head, zr, strings.NewReader("]}\n")), nil
}

// Seal ends the spilled nodes (a spill takes no more), and frees the
// encoder's memory; Reader seals a spill not sealed yet.
func (s *Spill) Seal() error {
	if s.zw == nil {
		return nil
	}
	err := s.enc.w.Flush()
	if cerr := s.zw.Close(); err == nil {
		err = cerr
	}
	s.zw, s.enc = nil, nil
	if err != nil {
		return fmt.Errorf("spill: %w", err)
	}
	return nil
}

// Write writes the whole document (Reader) to w, compressed with c.
func (s *Spill) Write(w io.Writer, p *Profile, c Compression) error {
	r, err := s.Reader(p)
	if err != nil {
		return err
	}
	return compressed(w, c, func(w io.Writer) error {
		_, err := io.Copy(w, r)
		return err
	})
}

// WriteFile stores the whole document at path as WriteFile stores a
// profile: atomically, compressed as its name asks (.gz, .zst).
func (s *Spill) WriteFile(path string, p *Profile) error {
	return writeFile(path, func(w io.Writer, c Compression) error { return s.Write(w, p, c) })
}

// Close removes the spill file.
func (s *Spill) Close() error {
	if s.zr != nil {
		s.zr.Close()
	}
	if s.zw != nil {
		s.zw.Close()
	}
	s.f.Close()
	return os.Remove(s.f.Name())
}
