package profile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/seedance/seedance/internal/fsutil"
)

// ErrInvalid marks a profile that cannot be read: bad JSON, another major
// schema version, or data that breaks the format's rules.
var ErrInvalid = errors.New("invalid profile")

// Read reads and validates one whole profile into memory, through the
// same stream, scanner, limits and validation as every other reader, so
// that every command accepts the same documents. Gzip input is detected by
// its magic bytes. Prefer OpenStream where one GPU at a time will do.
func Read(r io.Reader) (*Profile, error) {
	s, err := OpenStream(r, "")
	if err != nil {
		return nil, err
	}
	return s.collect()
}

// collect walks the whole stream into a profile.
func (s *Stream) collect() (*Profile, error) {
	h := s.Profile()
	p := &h
	var gpus []GPU
	err := s.Walk(func(it Item) error {
		if it.GPU != nil {
			g := *it.GPU
			g.Series = keepSeries(g.Series, gpus)
			gpus = append(gpus, g)
			return nil
		}
		n := *it.End
		n.GPUs, gpus = gpus, nil
		p.Nodes = append(p.Nodes, n)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// ReadFile reads a profile from path; "-" reads standard input (stdin).
func ReadFile(path string, stdin io.Reader) (*Profile, error) {
	return ReadFileOnly(path, stdin, nil)
}

// ReadFileOnly is ReadFile keeping the values of the metrics keep holds
// only, and the compact form of each node's topology (nil: everything):
// the rest is checked as it is read, the columns are nil
// (Stream.ConvertOnly) and the topologies compact
// (Stream.DropTopologyDetail), what an analysis keeps. A reader that needs
// a few metrics of a wide profile holds a fraction of it.
func ReadFileOnly(path string, stdin io.Reader, keep *[NumMetrics]bool) (*Profile, error) {
	s, err := OpenFileOnly(path, stdin, keep)
	if err != nil {
		return nil, err
	}
	return s.collect() // its errors name the file; it closes the file
}

// OpenFileOnly opens path ("-": stdin) as a stream that keeps what
// ReadFileOnly keeps, its header read. The file is closed at the end of
// the stream's walk, or by Close.
func OpenFileOnly(path string, stdin io.Reader, keep *[NumMetrics]bool) (*Stream, error) {
	r := stdin
	closeFile := func() {}
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
		}
		r, closeFile = f, func() { f.Close() }
	}
	s, err := OpenStream(r, "")
	if err != nil {
		closeFile()
		return nil, fmt.Errorf("read profile %s: %w", path, err)
	}
	if keep != nil {
		s.ConvertOnly(*keep)
		s.DropTopologyDetail()
	}
	s.name = path
	stop := s.closer
	s.closer = func() {
		if stop != nil {
			stop()
		}
		closeFile()
	}
	return s, nil
}

// Collect reads the rest of the stream into a profile.
func (s *Stream) Collect() (*Profile, error) { return s.collect() }

// Write encodes p to w, compressed with c.
func Write(w io.Writer, p *Profile, c Compression) error {
	return compressed(w, c, func(w io.Writer) error { return Encode(w, p) })
}

// WriteFile stores p at path atomically (temporary file, fsync, rename),
// compressed as its name asks (CompressionOf: .gz, .zst). An existing file
// at path is replaced only when the whole profile has been written.
func WriteFile(path string, p *Profile) error {
	return writeFile(path, func(w io.Writer, c Compression) error { return Write(w, p, c) })
}

// writeFile writes a profile at path atomically with write, which is told
// how to compress.
func writeFile(path string, write func(w io.Writer, c Compression) error) error {
	return fsutil.WriteAtomic(path, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<16)
		if err := write(bw, CompressionOf(path)); err != nil {
			return fmt.Errorf("write profile %s: %w", path, err)
		}
		return bw.Flush()
	})
}
