package jsonscan

import (
	"encoding/json"
	"errors"
)

// Object calls field for each key of an object; field must consume the value.
// Keys are passed in ASCII lower case: encoding/json matches field names
// case-insensitively, and both of seedance's readers must accept the same
// documents.
func (s *Scanner) Object(field func(key string) error) error {
	for i := 0; ; i++ {
		key, more, err := s.Member(i)
		if !more || err != nil {
			return err
		}
		if err := field(key); err != nil {
			return err
		}
	}
}

// Member steps through an object without a callback: with i == 0 it
// opens the object, after that it consumes the ',' before the next
// member. It returns the next key (in ASCII lower case, as Object passes
// it) with the scanner at its value, or more == false after the '}'.
func (s *Scanner) Member(i int) (key string, more bool, err error) {
	return s.member(i, true)
}

// member is Member, its keys lowered or as written.
func (s *Scanner) member(i int, lower bool) (key string, more bool, err error) {
	if i == 0 {
		if err := s.Expect('{'); err != nil {
			return "", false, err
		}
		if err := s.enter(); err != nil {
			return "", false, err
		}
		if s.Peek() == '}' {
			s.pos++
			s.depth--
			return "", false, nil
		}
	} else if done, err := s.Next('}'); done || err != nil {
		if err == nil {
			s.depth--
		}
		return "", false, err
	}
	if lower {
		key, err = s.key()
	} else {
		key, err = s.Str()
	}
	if err != nil {
		return "", false, err
	}
	return key, true, s.Expect(':')
}

// maxKeys bounds the keys a scanner shares (a document's keys are few; a
// hostile one's are not).
const maxKeys = 4096

// key reads an object's key in ASCII lower case; a key met before is the
// same string, not a new one.
func (s *Scanner) key() (string, error) {
	tok, err := s.stringToken()
	if err != nil {
		return "", err
	}
	raw := tok[1 : len(tok)-1]
	slot := &s.recent[keySlot(raw)]
	if slot.raw == string(raw) {
		return slot.lower, nil
	}
	if k, ok := s.keys[string(raw)]; ok {
		*slot = k // the map's strings: taking the slot allocates nothing
		return k.lower, nil
	}
	var k string
	if Plain(raw) {
		k = string(raw)
	} else if err := json.Unmarshal(tok, &k); err != nil {
		return "", s.Errorf("invalid string")
	}
	lower := asciiLower(k)
	if Plain(raw) && len(s.keys) < maxKeys {
		if s.keys == nil {
			s.keys = map[string]keyForms{}
		}
		*slot = keyForms{raw: k, lower: lower}
		s.keys[k] = *slot
	}
	return lower, nil
}

// keyForms is a key as written and in lower case.
type keyForms struct{ raw, lower string }

// keySlot is where a key sits in Scanner.recent: a key costs a comparison
// there, and the map's hashing only when another key took its slot.
func keySlot(raw []byte) int {
	if len(raw) == 0 {
		return 0
	}
	return (len(raw)*7 + int(raw[0])*3 + int(raw[len(raw)-1])) & (len(Scanner{}.recent) - 1)
}

// Next consumes the ',' between two members of an object or array, or its
// closing byte (done is then true).
func (s *Scanner) Next(closing byte) (done bool, err error) {
	switch c := s.Peek(); c {
	case ',':
		s.pos++
		return false, nil
	case closing:
		s.pos++
		return true, nil
	case 0:
		return true, s.EndErr()
	default:
		return true, s.Errorf("expected ',' or %q, found %q", closing, c)
	}
}

// Array calls elem for each element of an array (or nothing for null).
func (s *Scanner) Array(elem func(i int) error) error {
	if s.Peek() == 'n' {
		return s.Literal("null")
	}
	if err := s.Expect('['); err != nil {
		return err
	}
	if err := s.enter(); err != nil {
		return err
	}
	defer func() { s.depth-- }()
	if s.Peek() == ']' {
		s.pos++
		return nil
	}
	for i := 0; ; i++ {
		if err := elem(i); err != nil {
			return err
		}
		if done, err := s.Next(']'); done || err != nil {
			return err
		}
	}
}

// Skip consumes any value without keeping it.
func (s *Scanner) Skip() error {
	switch c := s.Peek(); c {
	case '{':
		return s.Object(func(string) error { return s.Skip() })
	case '[':
		return s.Array(func(int) error { return s.Skip() })
	case 't':
		return s.Literal("true")
	case 'f':
		return s.Literal("false")
	case 'n':
		return s.Literal("null")
	case '"':
		_, err := s.Str()
		return err
	case 0:
		return s.EndErr()
	default:
		_, err := s.Number()
		return err
	}
}

// Decode reads one value into v with encoding/json (for small fields).
func (s *Scanner) Decode(v any) error {
	if s.Peek() == 0 {
		return s.EndErr()
	}
	s.mark = s.pos
	err := s.Skip()
	raw := s.buf[s.mark:s.pos]
	s.mark = -1
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return errors.New(DescribeError(err))
	}
	return nil
}

// End checks that nothing but space follows the document.
func (s *Scanner) End() error {
	// peek's 0 is the end of input, or a NUL byte that is still there.
	if c := s.Peek(); c != 0 || s.pos < len(s.buf) {
		return s.Errorf("invalid character %q after top-level value", c)
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
