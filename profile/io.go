package profile

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/seedance/seedance/internal/fsutil"
)

// ErrInvalid marks a profile that cannot be read: bad JSON, another major
// schema version, or data that breaks the format's rules.
var ErrInvalid = errors.New("invalid profile")

// Read decodes and validates one profile. Gzip input is detected by its magic
// bytes.
func Read(r io.Reader) (*Profile, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	var in io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%w: gzip: %v", ErrInvalid, err)
		}
		defer zr.Close()
		in = zr
	}
	var p Profile
	dec := json.NewDecoder(in)
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrInvalid, describeJSONError(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: JSON syntax error at byte %d: invalid data after top-level value", ErrInvalid, dec.InputOffset())
	}
	if err := Validate(&p); err != nil {
		return nil, err
	}
	return &p, nil
}

// ReadFile reads a profile from path; "-" reads standard input (stdin).
func ReadFile(path string, stdin io.Reader) (*Profile, error) {
	var r io.Reader
	if path == "-" {
		r = stdin
	} else {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
		}
		defer f.Close()
		r = f
	}
	p, err := Read(r)
	if err != nil {
		return nil, fmt.Errorf("read profile %s: %w", path, err)
	}
	return p, nil
}

func describeJSONError(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF):
		return "empty input"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "truncated JSON (unexpected end of input)"
	case errors.As(err, &syn):
		return fmt.Sprintf("JSON syntax error at byte %d: %v", syn.Offset, syn)
	case errors.As(err, &typ):
		return fmt.Sprintf("field %q: %v is not allowed there", typ.Field, typ.Value)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// Write encodes p to w, gzip-compressed when gz is set.
func Write(w io.Writer, p *Profile, gz bool) error {
	if !gz {
		return Encode(w, p)
	}
	zw := gzip.NewWriter(w)
	if err := Encode(zw, p); err != nil {
		return err
	}
	return zw.Close()
}

// WriteFile stores p at path atomically (temporary file, fsync, rename), gzip-
// compressed when path ends in ".gz". An existing file at path is replaced only
// when the whole profile has been written.
func WriteFile(path string, p *Profile) error {
	return fsutil.WriteAtomic(path, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<16)
		if err := Write(bw, p, strings.HasSuffix(path, ".gz")); err != nil {
			return fmt.Errorf("write profile %s: %w", path, err)
		}
		return bw.Flush()
	})
}
