package jsonscan

import (
	"encoding/json"
	"errors"
	"strconv"
)

// Typed reads: one value into a Go variable, accepting and refusing what
// encoding/json's Unmarshal does for that variable's type (null leaves it
// as it is; an integer type takes integer literals only), without its
// reflection. The profile's metadata is read through them.

// kindOf names what the value at the current position is, for an error.
func (s *Scanner) kindOf() string {
	switch c := s.Peek(); {
	case c == '"':
		return "a string"
	case c == '{':
		return "an object"
	case c == '[':
		return "a list"
	case c == 't' || c == 'f':
		return "true or false"
	case c == 'n':
		return "null"
	case c == '-' || c >= '0' && c <= '9':
		return "a number"
	case c == 0:
		return "the end of input"
	}
	return "an invalid character"
}

// mismatch is the error for a value of the wrong kind: a syntax error when
// the value is not JSON at all (so that both readers say the same), else
// "expected a number, found a string".
func (s *Scanner) mismatch(want string) error {
	found := s.kindOf()
	if found == "the end of input" {
		return s.EndErr()
	}
	if err := s.Skip(); err != nil {
		return err
	}
	return &TypeError{Want: want, Found: found}
}

// TypeError is a well-formed value of the wrong kind.
type TypeError struct{ Want, Found string }

func (e *TypeError) Error() string { return "expected " + e.Want + ", found " + e.Found }

// Open checks that the next value is a list ('[') or an object ('{'), as
// open says, without consuming it; a null is consumed (present is false),
// anything else is the error for a value of the wrong kind.
func (s *Scanner) Open(open byte) (present bool, err error) {
	switch s.Peek() {
	case open:
		return true, nil
	case 'n':
		return false, s.Literal("null")
	}
	if open == '[' {
		return false, s.mismatch("a list")
	}
	return false, s.mismatch("an object")
}

// IsNull consumes a null and says so; anything else is left in place.
func (s *Scanner) IsNull() (bool, error) {
	if s.Peek() != 'n' {
		return false, nil
	}
	return true, s.Literal("null")
}

// String reads a string (or null) into dst.
func (s *Scanner) String(dst *string) error {
	switch s.Peek() {
	case '"':
		v, err := s.Str()
		*dst = v
		return err
	case 'n':
		return s.Literal("null")
	}
	return s.mismatch("a string")
}

// CheckString checks that the value is a string (or null) as String
// would, without making it: for fields a reader drops.
func (s *Scanner) CheckString() error {
	switch s.Peek() {
	case '"':
		tok, err := s.Token()
		if err == nil && !Plain(tok[1:len(tok)-1]) {
			var v string
			if json.Unmarshal(tok, &v) != nil {
				return s.Errorf("invalid string")
			}
		}
		return err
	case 'n':
		return s.Literal("null")
	}
	return s.mismatch("a string")
}

// Bool reads true, false (or null) into dst.
func (s *Scanner) Bool(dst *bool) error {
	switch s.Peek() {
	case 't':
		*dst = true
		return s.Literal("true")
	case 'f':
		*dst = false
		return s.Literal("false")
	case 'n':
		return s.Literal("null")
	}
	return s.mismatch("true or false")
}

// Float reads a number (or null) into dst.
func (s *Scanner) Float(dst *float64) error {
	switch c := s.Peek(); {
	case c == 'n':
		return s.Literal("null")
	case c == '-' || c >= '0' && c <= '9':
		x, err := s.Number()
		if err == nil {
			*dst = x
		}
		return err
	}
	return s.mismatch("a number")
}

// integer reads an integer literal of a number of bits, signed or not.
func (s *Scanner) integer(signed bool, bitSize int) (int64, uint64, bool, error) {
	switch c := s.Peek(); {
	case c == 'n':
		return 0, 0, false, s.Literal("null")
	case c == '-' || c >= '0' && c <= '9':
	default:
		return 0, 0, false, s.mismatch("an integer")
	}
	tok, err := s.Token()
	if err != nil {
		return 0, 0, false, err
	}
	if !validJSONNumber(tok) {
		return 0, 0, false, s.Errorf("invalid number %q", tok)
	}
	if signed {
		v, err := strconv.ParseInt(string(tok), 10, bitSize)
		if err != nil {
			return 0, 0, false, &TypeError{Want: "an integer", Found: "the number " + string(tok)}
		}
		return v, 0, true, nil
	}
	v, err := strconv.ParseUint(string(tok), 10, bitSize)
	if err != nil {
		return 0, 0, false, &TypeError{Want: "an unsigned integer", Found: "the number " + string(tok)}
	}
	return 0, v, true, nil
}

// Int reads an integer (or null) into dst, as encoding/json reads an int:
// "1.0", "1e2" and out-of-range values are errors.
func (s *Scanner) Int(dst *int) error {
	v, _, ok, err := s.integer(true, strconv.IntSize)
	if ok {
		*dst = int(v)
	}
	return err
}

// Int64 reads an integer (or null) into dst.
func (s *Scanner) Int64(dst *int64) error {
	v, _, ok, err := s.integer(true, 64)
	if ok {
		*dst = v
	}
	return err
}

// Uint64 reads an unsigned integer (or null) into dst ("-0" is refused,
// as encoding/json refuses it).
func (s *Scanner) Uint64(dst *uint64) error {
	_, v, ok, err := s.integer(false, 64)
	if ok {
		*dst = v
	}
	return err
}

// StringMap reads an object of strings (or null, which leaves dst) into
// *dst, keys as written; a null value reads as "" and a repeated key keeps
// its last value, as encoding/json does.
func (s *Scanner) StringMap(dst *map[string]string) error {
	if present, err := s.Open('{'); !present || err != nil {
		return err
	}
	if *dst == nil {
		*dst = map[string]string{}
	}
	for i := 0; ; i++ {
		key, more, err := s.member(i, false)
		if !more || err != nil {
			return err
		}
		var v string
		if err := s.String(&v); err != nil {
			return err
		}
		(*dst)[key] = v
	}
}

// Offset is the input offset of the next byte.
func (s *Scanner) Offset() int64 { return s.base + int64(s.pos) }

// Shifted is err, when it is a *SyntaxError of a scanner over bytes that
// began at offset base of this input, with its offset in this input.
func Shifted(err error, base int64) error {
	var se *SyntaxError
	if errors.As(err, &se) {
		return &SyntaxError{off: base + se.off, msg: se.msg}
	}
	return err
}

// RawValue reads the next value as its bytes, found by a byte-level walk
// of its brackets and strings that checks nothing else: a caller that has
// read the same bytes before knows their worth, and one that has not parses
// them (New over the bytes). The slice is valid until the next read; a
// value longer than limit bytes is an error.
func (s *Scanner) RawValue(limit int) ([]byte, error) {
	raw, err := s.raw(limit, false)
	if err == errLong {
		return nil, s.Errorf("a value longer than %d KiB", limit>>10)
	}
	return raw, err
}

// RawValueUpTo is RawValue for a value of at most limit bytes: a longer
// one is left unread (ok false), for the caller to read otherwise.
func (s *Scanner) RawValueUpTo(limit int) (raw []byte, ok bool, err error) {
	raw, err = s.raw(limit, true)
	if err == errLong {
		return nil, false, nil
	}
	return raw, err == nil, err
}

// errLong is a raw walk past its limit.
var errLong = errors.New("jsonscan: a raw value past its limit")

// raw walks past the next value, its bytes kept (keep); past limit it
// stops with errLong, back at the value's start when rewind is set.
func (s *Scanner) raw(limit int, rewind bool) ([]byte, error) {
	c := s.Peek()
	if c == 0 {
		return nil, s.EndErr()
	}
	outer := s.keep()
	start := s.base + int64(s.pos)
	var err error
	if c == '[' || c == '{' || c == '"' {
		err = s.rawNested(start, limit)
	} else {
		err = s.rawScalar(start, limit)
	}
	if err == errLong && rewind {
		s.pos = int(start - s.base) // kept since keep
	}
	s.release(outer)
	if err != nil {
		return nil, err
	}
	return s.buf[int(start-s.base):s.pos], nil
}

// rawNested moves past a list or object by its brackets, strings (with
// their escapes) passed over, or past a string to its closing quote.
func (s *Scanner) rawNested(start int64, limit int) error {
	depth, inString := 0, false
	for {
		for s.pos < len(s.buf) {
			c := s.buf[s.pos]
			s.pos++
			switch {
			case inString && c == '\\':
				s.pos++
				continue
			case inString:
				inString = c != '"'
			case c == '"':
				inString = true
			case c == '[' || c == '{':
				if depth++; depth > MaxDepth {
					return s.Errorf("nesting deeper than %d levels", MaxDepth)
				}
			case c == ']' || c == '}':
				depth--
			}
			if depth == 0 && !inString {
				return s.rawEnd(start, limit)
			}
		}
		if more, err := s.rawMore(start, limit); !more || err != nil {
			if err == nil {
				err = s.EndErr()
			}
			return err
		}
	}
}

// rawScalar moves past a number or literal, to the next delimiter.
func (s *Scanner) rawScalar(start int64, limit int) error {
	for {
		for s.pos < len(s.buf) {
			switch s.buf[s.pos] {
			case ',', ']', '}', ':', ' ', '\n', '\r', '\t':
				return s.rawEnd(start, limit)
			}
			s.pos++
		}
		if more, err := s.rawMore(start, limit); err != nil {
			return err
		} else if !more { // a scalar at the end of input
			return s.rerr
		}
	}
}

// rawMore reads more input for a raw value, within its limit: more is
// false at the end of input.
func (s *Scanner) rawMore(start int64, limit int) (more bool, err error) {
	if err := s.rawEnd(start, limit); err != nil {
		return false, err
	}
	return s.fill(), nil
}

// rawEnd checks the length of the value a raw walk passed.
func (s *Scanner) rawEnd(start int64, limit int) error {
	if s.base+int64(s.pos)-start > int64(limit) {
		return errLong
	}
	return nil
}
