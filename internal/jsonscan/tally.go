package jsonscan

// A tally is a column read for its checks only: a reader that never looks
// at a column's values still refuses what Column refuses (the grammar, the
// length) and must know whether a value lies outside the column's range.
// Numbers that are surely inside it are checked for their grammar and
// counted, not converted; anything else is converted as Column converts
// it, so that the two agree on every input (FuzzTallyAgreesWithColumn).

// Tally is what TallyColumn keeps of a column of numbers and nulls.
type Tally struct {
	N int // elements, nulls included
	// Bad is the index of the first value outside [0, max] (nulls are
	// inside), -1 when there is none; BadValue is that value.
	Bad      int
	BadValue float64
	max      float64
	// intDigits is how many integer digits a number may have and still
	// surely be below max: 10^intDigits ≤ max.
	intDigits int
	converted int // numbers the skim left to the fused path
}

func newTally(limit float64) Tally {
	t := Tally{Bad: -1, max: limit}
	for p := 10.0; p <= limit && t.intDigits < 18; p *= 10 {
		t.intDigits++
	}
	return t
}

// put counts a converted value.
func (t *Tally) put(x float64) {
	if t.Bad < 0 && (x < 0 || x > t.max) {
		t.Bad, t.BadValue = t.N, x
	}
	t.N++
}

// TallyColumn reads an array of numbers and nulls, as Column reads it, but
// keeps only its Tally against the range [0, limit]. present is false for
// a null column (Column's nil).
func (s *Scanner) TallyColumn(maxLen int, limit float64) (t Tally, present bool, err error) {
	k := colSink{tally: newTally(limit), tallying: true}
	null, err := s.readColumn(&k, maxLen)
	return k.tally, !null, err
}

// skimClass is each byte's class for skimColumn: 0 a digit, 1 the point,
// 2 anything else.
var skimClass = func() (c [256]uint8) {
	for i := range c {
		c[i] = 2
	}
	for d := '0'; d <= '9'; d++ {
		c[d] = 0
	}
	c['.'] = 1
	return c
}()

// skimColumn is column for a tally: it reads the elements from one after
// the '[' or a ',' for as long as the buffer holds them and they take the
// skim or the fused path, and says where it stopped.
//
// The skim takes a number wholly in the buffer with no sign or exponent,
// at most t.intDigits integer digits and at most 24 bytes (the fused
// path's reach): such a number is valid JSON and inside [0,
// 10^intDigits), and is counted, not converted. Its loop branches on one
// thing, the number's end: the points and the integer digits are counted
// without a branch and checked after it. Anything else is read from the
// same byte by the fused path, as null, or (stopping here) by the general
// path.
func (s *Scanner) skimColumn(t *Tally, maxLen int) int {
	b, i := s.buf, s.pos
	for t.N < maxLen && i < len(b) {
		start := i
		var dots, ints, pastDot uint8
		for ; i < len(b); i++ {
			k := skimClass[b[i]]
			if k == 2 {
				break
			}
			dots += k
			pastDot |= k
			ints += 1 - pastDot
		}
		if i >= len(b) || i-start > 24 || dots > 1 || ints == 0 || int(ints) > t.intDigits || b[i-1] == '.' ||
			(ints > 1 && b[start] == '0') || IsNumberByte(b[i]) {
			if x, j, ok := parseFast(b, start); ok {
				i = j
				t.put(x)
				t.converted++
			} else if len(b)-start >= 8 && string(b[start:start+4]) == "null" {
				i = start + 4
				t.N++
			} else {
				i = start
				break
			}
		} else {
			t.N++
		}
		switch b[i] { // i < len(b): both paths saw the byte after the number
		case ',':
			i++
			continue
		case ']':
			s.pos = i + 1
			return colDone
		}
		s.pos = i
		return atSeparator
	}
	s.pos = i
	return atElement
}

// Same consumes the next value when its bytes are raw (a whole value read
// before, at the caller's word) and says so: the caller then reuses what
// it made of them. It looks only at what the buffer holds.
func (s *Scanner) Same(raw []byte) bool {
	if len(raw) == 0 || s.Peek() != raw[0] || len(s.buf)-s.pos < len(raw) {
		return false
	}
	if string(s.buf[s.pos:s.pos+len(raw)]) != string(raw) {
		return false
	}
	s.pos += len(raw)
	return true
}

// Held is the input from offset start to offset end, when the buffer
// still holds it. The slice is valid until the next read.
func (s *Scanner) Held(start, end int64) ([]byte, bool) {
	if start < s.base || end > s.base+int64(len(s.buf)) || start > end {
		return nil, false
	}
	return s.buf[start-s.base : end-s.base], true
}

// Since is the input from offset at to the current position, when the
// buffer still holds it.
func (s *Scanner) Since(at int64) ([]byte, bool) {
	if at < s.base {
		return nil, false
	}
	return s.buf[at-s.base : s.pos], true
}
