// Package jsonscan is a small JSON tokenizer for large documents of number
// columns: seedance's profiles and Prometheus's query answers. It reads
// straight from the input through a sliding buffer and parses numbers
// without encoding/json's reflection; values a caller does not care about
// are skipped, and small structured values are handed to encoding/json.
package jsonscan

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"unicode/utf8"
)

// Scanner is a small JSON tokenizer specialised for profiles: it reads
// straight from the input through a sliding buffer and parses number
// columns without encoding/json's reflection, so the analyzer is bound by
// bytes, not by allocations. Values it does not care about are skipped;
// small structured fields are handed to encoding/json as raw bytes.
type Scanner struct {
	r     io.Reader
	buf   []byte
	pos   int   // next byte to read in buf
	base  int64 // input offset of buf[0]
	mark  int   // when ≥ 0, buf[mark:] is kept by fill
	depth int   // arrays and objects open (MaxDepth)
	eof   bool
	rerr  error
	keys  map[string]keyForms // the keys met, by how they are written
	// recent caches keys by keySlot.
	recent [64]keyForms
}

// Limits on a document: a reader of untrusted input must not be made to
// recurse or buffer without bound.
const (
	// MaxDepth is the deepest nesting of arrays and objects.
	MaxDepth = 64
	// MaxStringBytes is the longest string.
	MaxStringBytes = 64 << 10
)

// Advance consumes the byte Peek returned.
func (s *Scanner) Advance() { s.pos++ }

// ReadErr is the error the input failed with, if it has.
func (s *Scanner) ReadErr() error { return s.rerr }

// maxNumberBytes is the longest number token (a float64 needs about 25).
const maxNumberBytes = 1024

// enter opens an array or object, within MaxDepth.
func (s *Scanner) enter() error {
	s.depth++
	if s.depth > MaxDepth {
		return s.Errorf("nesting deeper than %d levels", MaxDepth)
	}
	return nil
}

// New returns a Scanner reading r.
func New(r io.Reader) *Scanner {
	return &Scanner{r: r, buf: make([]byte, 0, 1<<20), mark: -1}
}

// NewBuffer returns a Scanner reading r into buf (its capacity; it grows
// as New's does): a caller that parses many small documents reuses one
// buffer (Buffer) instead of allocating one each.
func NewBuffer(r io.Reader, buf []byte) *Scanner {
	if cap(buf) == 0 {
		buf = make([]byte, 0, 4096)
	}
	return &Scanner{r: r, buf: buf[:0], mark: -1}
}

// Buffer is the scanner's buffer, to reuse once nothing read from it is
// in use.
func (s *Scanner) Buffer() []byte { return s.buf[:0] }

var errTruncated = errors.New("truncated JSON (unexpected end of input)")

// SyntaxError describes bad JSON at the current position.
type SyntaxError struct {
	off int64
	msg string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("JSON syntax error at byte %d: %s", e.off, e.msg)
}

// Errorf returns a *SyntaxError at the current position.
func (s *Scanner) Errorf(format string, args ...any) error {
	return &SyntaxError{off: s.base + int64(s.pos), msg: fmt.Sprintf(format, args...)}
}

// fill reads more input, keeping the marked bytes (or none before pos).
func (s *Scanner) fill() bool {
	if s.eof {
		return false
	}
	keep := s.pos
	if s.mark >= 0 {
		keep = s.mark
	}
	if keep > 0 {
		n := copy(s.buf, s.buf[keep:])
		s.buf = s.buf[:n]
		s.base += int64(keep)
		s.pos -= keep
		if s.mark >= 0 {
			s.mark -= keep
		}
	}
	if len(s.buf) == cap(s.buf) {
		nb := make([]byte, len(s.buf), 2*cap(s.buf))
		copy(nb, s.buf)
		s.buf = nb
	}
	n, err := s.r.Read(s.buf[len(s.buf):cap(s.buf)])
	s.buf = s.buf[:len(s.buf)+n]
	if err != nil {
		s.eof = true
		if err != io.EOF {
			s.rerr = err
		}
	}
	return n > 0 || !s.eof
}

// Peek returns the next non-space byte without consuming it; 0 at the end.
func (s *Scanner) Peek() byte {
	for {
		for s.pos < len(s.buf) {
			switch c := s.buf[s.pos]; c {
			case ' ', '\n', '\r', '\t':
				s.pos++
			default:
				return c
			}
		}
		if !s.fill() {
			return 0
		}
	}
}

// EndErr is the error for input that ends where a value should follow: the
// read error when reading failed, else "truncated JSON".
func (s *Scanner) EndErr() error {
	if s.rerr != nil {
		return s.rerr
	}
	return errTruncated
}

// Expect consumes the next non-space byte, which must be c.
func (s *Scanner) Expect(c byte) error {
	got := s.Peek()
	if got == 0 {
		return s.EndErr()
	}
	if got != c {
		return s.Errorf("expected %q, found %q", c, got)
	}
	s.pos++
	return nil
}

// Literal consumes the literal word (true, false, null).
func (s *Scanner) Literal(word string) error {
	for i := 0; i < len(word); i++ {
		if s.pos >= len(s.buf) && !s.fill() {
			return s.EndErr()
		}
		if s.buf[s.pos] != word[i] {
			return s.Errorf("invalid literal, expected %q", word)
		}
		s.pos++
	}
	return nil
}

// Token reads the bytes of a string (with its quotes) or a number, kept
// contiguous in the buffer; the slice is valid until the next read. Marks
// nest: a token inside a value that decode is keeping leaves that mark alone.
func (s *Scanner) Token() ([]byte, error) {
	c := s.Peek()
	if c == 0 {
		return nil, s.EndErr()
	}
	outer := s.keep()
	tok, err := s.token(c, s.base+int64(s.pos))
	s.release(outer)
	return tok, err
}

// keep marks the buffer at the next value, so that fill keeps its bytes,
// unless an outer mark already does; it returns the outer mark for
// release.
func (s *Scanner) keep() (outer int) {
	outer = s.mark
	if outer < 0 {
		s.mark = s.pos
	}
	return outer
}

// release drops keep's mark (none when an outer one was there).
func (s *Scanner) release(outer int) {
	if outer < 0 {
		s.mark = -1
	}
}

// token is Token's body: startAbs is the token's input offset (the buffer
// moves under it as fill keeps the marked bytes).
func (s *Scanner) token(c byte, startAbs int64) ([]byte, error) {
	if c == '"' {
		s.pos++
		for {
			for s.pos < len(s.buf) {
				switch s.buf[s.pos] {
				case '\\':
					s.pos += 2
					continue
				case '"':
					s.pos++
					start := int(startAbs - s.base)
					if s.pos-start > MaxStringBytes+2 {
						return nil, s.Errorf("a string longer than %d KiB", MaxStringBytes>>10)
					}
					return s.buf[start:s.pos], nil
				}
				s.pos++
			}
			if s.pos-int(startAbs-s.base) > MaxStringBytes {
				return nil, s.Errorf("a string longer than %d KiB", MaxStringBytes>>10)
			}
			if !s.fill() {
				return nil, s.EndErr()
			}
		}
	}
	for {
		for s.pos < len(s.buf) && IsNumberByte(s.buf[s.pos]) {
			s.pos++
		}
		if s.pos-int(startAbs-s.base) > maxNumberBytes {
			return nil, s.Errorf("a number longer than %d bytes", maxNumberBytes)
		}
		if s.pos < len(s.buf) || !s.fill() {
			break
		}
	}
	start := int(startAbs - s.base)
	if s.pos == start {
		return nil, s.Errorf("invalid character %q looking for beginning of value", c)
	}
	return s.buf[start:s.pos], nil
}

// stringToken reads a string's token, its quotes included.
func (s *Scanner) stringToken() ([]byte, error) {
	if c := s.Peek(); c != '"' {
		if c == 0 {
			return nil, s.EndErr()
		}
		return nil, s.Errorf("expected a string, found %q", c)
	}
	return s.Token()
}

// Str reads a string.
func (s *Scanner) Str() (string, error) {
	tok, err := s.stringToken()
	if err != nil {
		return "", err
	}
	if !Plain(tok[1 : len(tok)-1]) {
		var out string
		if err := json.Unmarshal(tok, &out); err != nil {
			return "", s.Errorf("invalid string")
		}
		return out, nil
	}
	return string(tok[1 : len(tok)-1]), nil
}

// Plain says whether a string's bytes (between its quotes) are its value:
// no escape, no control byte, valid UTF-8 (encoding/json replaces what is
// not with U+FFFD).
func Plain(raw []byte) bool {
	ascii := true
	for _, b := range raw {
		if b == '\\' || b < 0x20 {
			return false
		}
		ascii = ascii && b < 0x80
	}
	return ascii || utf8.Valid(raw)
}

// Number reads a number, or null as NaN.
func (s *Scanner) Number() (float64, error) {
	switch c := s.Peek(); {
	case c == 'n':
		return math.NaN(), s.Literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		if x, ok := s.fastNumber(); ok {
			return x, nil
		}
	case c == 0:
		return 0, s.EndErr()
	default:
		return 0, s.Errorf("invalid character %q in a number column", c)
	}
	tok, err := s.Token()
	if err != nil {
		return 0, err
	}
	x, err := ParseNumber(tok)
	if err != nil || !validJSONNumber(tok) {
		return 0, s.Errorf("invalid number %q", tok)
	}
	return x, nil
}

// validJSONNumber checks the JSON number grammar (strconv is laxer: it takes
// "1_000", "+1", "Inf", ".5"): -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func validJSONNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return false
		}
		i = j
	}
	return i == len(b)
}

// digits is the index past the decimal digits of b from i.
func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// ParseNumber parses a JSON number; small integers (most columns hold
// integers: utilization, bytes, clocks) without strconv's general path.
func ParseNumber(s []byte) (float64, error) {
	if len(s) > 0 && len(s) < 16 {
		n, neg, k := int64(0), false, 0
		if s[0] == '-' {
			neg, k = true, 1
		}
		ok := k < len(s)
		for ; k < len(s); k++ {
			c := s[k]
			if c < '0' || c > '9' {
				ok = false
				break
			}
			n = n*10 + int64(c-'0')
		}
		if ok {
			if neg {
				return -float64(n), nil // -0 too, as strconv reads it
			}
			return float64(n), nil
		}
	}
	return strconv.ParseFloat(string(s), 64)
}

// IsNumberByte tells whether c can be part of a JSON number.
func IsNumberByte(c byte) bool {
	return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}
