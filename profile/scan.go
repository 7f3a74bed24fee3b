package profile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// scanner is a small JSON tokenizer specialised for profiles: it reads
// straight from the input through a sliding buffer and parses number
// columns without encoding/json's reflection, so the analyzer is bound by
// bytes, not by allocations. Values it does not care about are skipped;
// small structured fields are handed to encoding/json as raw bytes.
type scanner struct {
	r     io.Reader
	buf   []byte
	pos   int   // next byte to read in buf
	base  int64 // input offset of buf[0]
	mark  int   // when ≥ 0, buf[mark:] is kept by fill
	depth int   // arrays and objects open (MaxDepth)
	eof   bool
	rerr  error
}

// maxNumberBytes is the longest number token (a float64 needs about 25).
const maxNumberBytes = 1024

// enter opens an array or object, within MaxDepth.
func (s *scanner) enter() error {
	s.depth++
	if s.depth > MaxDepth {
		return s.errorf("nesting deeper than %d levels", MaxDepth)
	}
	return nil
}

func newScanner(r io.Reader) *scanner {
	return &scanner{r: r, buf: make([]byte, 0, 1<<20), mark: -1}
}

var errTruncated = errors.New("truncated JSON (unexpected end of input)")

// syntaxError describes bad JSON at the current position.
type syntaxError struct {
	off int64
	msg string
}

func (e *syntaxError) Error() string {
	return fmt.Sprintf("JSON syntax error at byte %d: %s", e.off, e.msg)
}

func (s *scanner) errorf(format string, args ...any) error {
	return &syntaxError{off: s.base + int64(s.pos), msg: fmt.Sprintf(format, args...)}
}

// fill reads more input, keeping the marked bytes (or none before pos).
func (s *scanner) fill() bool {
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

// peek returns the next non-space byte without consuming it; 0 at the end.
func (s *scanner) peek() byte {
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

func (s *scanner) endErr() error {
	if s.rerr != nil {
		return s.rerr
	}
	return errTruncated
}

// expect consumes the next non-space byte, which must be c.
func (s *scanner) expect(c byte) error {
	got := s.peek()
	if got == 0 {
		return s.endErr()
	}
	if got != c {
		return s.errorf("expected %q, found %q", c, got)
	}
	s.pos++
	return nil
}

// literal consumes the literal word (true, false, null).
func (s *scanner) literal(word string) error {
	for i := 0; i < len(word); i++ {
		if s.pos >= len(s.buf) && !s.fill() {
			return s.endErr()
		}
		if s.buf[s.pos] != word[i] {
			return s.errorf("invalid literal, expected %q", word)
		}
		s.pos++
	}
	return nil
}

// token reads the bytes of a string (with its quotes) or a number, kept
// contiguous in the buffer; the slice is valid until the next read. Marks
// nest: a token inside a value that decode is keeping leaves that mark alone.
func (s *scanner) token() ([]byte, error) {
	c := s.peek()
	if c == 0 {
		return nil, s.endErr()
	}
	outer := s.mark
	startAbs := s.base + int64(s.pos)
	if outer < 0 {
		s.mark = s.pos
		defer func() { s.mark = -1 }()
	}
	start := func() int { return int(startAbs - s.base) }
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
					if s.pos-start() > MaxStringBytes+2 {
						return nil, s.errorf("a string longer than %d KiB", MaxStringBytes>>10)
					}
					return s.buf[start():s.pos], nil
				}
				s.pos++
			}
			if s.pos-start() > MaxStringBytes {
				return nil, s.errorf("a string longer than %d KiB", MaxStringBytes>>10)
			}
			if !s.fill() {
				return nil, s.endErr()
			}
		}
	}
	for {
		for s.pos < len(s.buf) && isNumberByte(s.buf[s.pos]) {
			s.pos++
		}
		if s.pos-start() > maxNumberBytes {
			return nil, s.errorf("a number longer than %d bytes", maxNumberBytes)
		}
		if s.pos < len(s.buf) || !s.fill() {
			break
		}
	}
	if s.pos == start() {
		return nil, s.errorf("invalid character %q looking for beginning of value", c)
	}
	return s.buf[start():s.pos], nil
}

// str reads a string.
func (s *scanner) str() (string, error) {
	if c := s.peek(); c != '"' {
		if c == 0 {
			return "", s.endErr()
		}
		return "", s.errorf("expected a string, found %q", c)
	}
	tok, err := s.token()
	if err != nil {
		return "", err
	}
	for _, b := range tok[1 : len(tok)-1] {
		if b == '\\' || b < 0x20 {
			var out string
			if err := json.Unmarshal(tok, &out); err != nil {
				return "", s.errorf("invalid string")
			}
			return out, nil
		}
	}
	return string(tok[1 : len(tok)-1]), nil
}

// number reads a number, or null as NaN.
func (s *scanner) number() (float64, error) {
	switch c := s.peek(); {
	case c == 'n':
		return Null, s.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
	case c == 0:
		return 0, s.endErr()
	default:
		return 0, s.errorf("invalid character %q in a number column", c)
	}
	tok, err := s.token()
	if err != nil {
		return 0, err
	}
	x, err := parseNumber(tok)
	if err != nil || !validJSONNumber(tok) {
		return 0, s.errorf("invalid number %q", tok)
	}
	return x, nil
}

// validJSONNumber checks the JSON number grammar (strconv is laxer: it takes
// "1_000", "+1", "Inf", ".5").
func validJSONNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i >= len(b) {
		return false
	}
	if b[i] == '0' {
		i++
	} else if b[i] >= '1' && b[i] <= '9' {
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	} else {
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	return i == len(b)
}

// column reads an array of numbers and nulls into dst (reusing its space).
func (s *scanner) column(dst Values) (Values, error) {
	if s.peek() == 'n' {
		return nil, s.literal("null")
	}
	if err := s.expect('['); err != nil {
		return nil, err
	}
	dst = dst[:0]
	if dst == nil {
		dst = make(Values, 0, 64)
	}
	if s.peek() == ']' {
		s.pos++
		return dst, nil
	}
	for {
		x, err := s.number()
		if err != nil {
			return nil, err
		}
		if len(dst) == MaxSamplesPerGPU {
			return nil, s.errorf("a series longer than %d samples", MaxSamplesPerGPU)
		}
		dst = append(dst, x)
		if done, err := s.next(']'); err != nil {
			return nil, err
		} else if done {
			return dst, nil
		}
	}
}

// object calls field for each key of an object; field must consume the value.
// Keys are passed in ASCII lower case: encoding/json matches field names
// case-insensitively, and both of seedance's readers must accept the same
// documents.
func (s *scanner) object(field func(key string) error) error {
	if err := s.expect('{'); err != nil {
		return err
	}
	if err := s.enter(); err != nil {
		return err
	}
	defer func() { s.depth-- }()
	if s.peek() == '}' {
		s.pos++
		return nil
	}
	for {
		key, err := s.str()
		if err != nil {
			return err
		}
		key = asciiLower(key)
		if err := s.expect(':'); err != nil {
			return err
		}
		if err := field(key); err != nil {
			return err
		}
		if done, err := s.next('}'); done || err != nil {
			return err
		}
	}
}

// next consumes the ',' between two members of an object or array, or its
// closing byte (done is then true).
func (s *scanner) next(closing byte) (done bool, err error) {
	switch c := s.peek(); c {
	case ',':
		s.pos++
		return false, nil
	case closing:
		s.pos++
		return true, nil
	case 0:
		return true, s.endErr()
	default:
		return true, s.errorf("expected ',' or %q, found %q", closing, c)
	}
}

// array calls elem for each element of an array (or nothing for null).
func (s *scanner) array(elem func(i int) error) error {
	if s.peek() == 'n' {
		return s.literal("null")
	}
	if err := s.expect('['); err != nil {
		return err
	}
	if err := s.enter(); err != nil {
		return err
	}
	defer func() { s.depth-- }()
	if s.peek() == ']' {
		s.pos++
		return nil
	}
	for i := 0; ; i++ {
		if err := elem(i); err != nil {
			return err
		}
		if done, err := s.next(']'); done || err != nil {
			return err
		}
	}
}

// skip consumes any value without keeping it.
func (s *scanner) skip() error {
	switch c := s.peek(); c {
	case '{':
		return s.object(func(string) error { return s.skip() })
	case '[':
		return s.array(func(int) error { return s.skip() })
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	case '"':
		_, err := s.str()
		return err
	case 0:
		return s.endErr()
	default:
		_, err := s.number()
		return err
	}
}

// decode reads one value into v with encoding/json (for small fields).
func (s *scanner) decode(v any) error {
	if s.peek() == 0 {
		return s.endErr()
	}
	s.mark = s.pos
	err := s.skip()
	raw := s.buf[s.mark:s.pos]
	s.mark = -1
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return errors.New(describeJSONError(err))
	}
	return nil
}

// end checks that nothing but space follows the document.
func (s *scanner) end() error {
	// peek's 0 is the end of input, or a NUL byte that is still there.
	if c := s.peek(); c != 0 || s.pos < len(s.buf) {
		return s.errorf("invalid character %q after top-level value", c)
	}
	return s.rerr
}

// asciiLower lowers ASCII letters, without allocating when there are none.
func asciiLower(k string) string {
	for i := 0; i < len(k); i++ {
		if c := k[i]; c >= 'A' && c <= 'Z' {
			b := []byte(k)
			for j := i; j < len(b); j++ {
				if b[j] >= 'A' && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return k
}
