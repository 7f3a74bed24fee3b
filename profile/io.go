package profile

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"

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
	h := s.Header
	p := &Profile{SchemaVersion: h.SchemaVersion, Generator: h.Generator, Source: h.Source, StartedAt: h.StartedAt,
		EndedAt: h.EndedAt, IntervalS: h.IntervalS, Complete: h.Complete, Notes: h.Notes, Nodes: []Node{}}
	var gpus []GPU
	err = s.Walk(func(it Item) error {
		if it.GPU != nil {
			g := *it.GPU
			g.Series = copySeries(g.Series)
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
		where := ""
		if typ.Field != "" {
			where = " at " + typ.Field
		}
		return fmt.Sprintf("expected %s%s, found %s", kindName(typ.Type), where, article(typ.Value))
	case strings.Contains(err.Error(), "Time.UnmarshalJSON") || strings.HasPrefix(err.Error(), "parsing time"):
		return `expected an RFC 3339 time such as "2026-01-05T09:00:00Z"`
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// kindName says what a Go type is in JSON terms.
func kindName(t reflect.Type) string {
	if t == nil {
		return "another value"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64, reflect.Uint64, reflect.Float64, reflect.Int32, reflect.Uint32:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct, reflect.Pointer:
		return "an object"
	}
	return "a " + t.String()
}

// article puts "a" or "an" before encoding/json's name of a value kind.
func article(v string) string {
	if v != "" && strings.ContainsRune("aeiou", rune(v[0])) {
		return "an " + v
	}
	return "a " + v
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
