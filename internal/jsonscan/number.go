package jsonscan

import "math"

// The fused number path: a column's numbers are scanned, checked against
// the JSON grammar and converted in one pass over their bytes, straight from
// the buffer. It takes what profiles are made of
// (integers and decimals of up to 19 digits, no exponent) and gives up on
// anything else, which the general path (Token, validJSONNumber, strconv)
// then reads from the same position: the two agree on every input
// (FuzzNumberDifferential).

// pow10 holds the powers of ten that a float64 represents exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// fastNumber converts the number at s.pos when it lies wholly in the
// buffer, has no exponent and its digits fit in 53 bits with at most 22
// after the point. Then the result is the correctly rounded float64 (an
// exact integer divided by an exact power of ten rounds once, as IEEE 754
// division does: Clinger's fast path), what strconv.ParseFloat gives.
// ok is false, and nothing consumed, for anything else.
func (s *Scanner) fastNumber() (float64, bool) {
	x, j, ok := parseFast(s.buf, s.pos)
	if ok {
		s.pos = j
	}
	return x, ok
}

// parseFast is fastNumber on b from i: the value and the index past it.
// One loop over the digits of both parts both checks and converts them.
func parseFast(b []byte, i int) (float64, int, bool) {
	if len(b)-i < 2 {
		return 0, 0, false
	}
	neg := b[i] == '-'
	if neg {
		i++
	}
	var m uint64
	start := i
	switch c := b[i]; {
	case c == '0':
		i++
	case c-'1' <= 8:
		for ; i < len(b); i++ {
			d := b[i] - '0'
			if d > 9 {
				break
			}
			m = m*10 + uint64(d)
		}
	default:
		return 0, 0, false
	}
	nd, frac := i-start, 0
	if i < len(b) && b[i] == '.' {
		i++
		fs := i
		for ; i < len(b); i++ {
			d := b[i] - '0'
			if d > 9 {
				break
			}
			m = m*10 + uint64(d)
		}
		frac = i - fs
		if frac == 0 {
			return 0, 0, false
		}
		nd += frac
	}
	// The number must end at a byte no number has: an exponent, a second
	// point or sign, or a digit after a leading zero go the general way;
	// past 19 digits m has overflowed.
	if i >= len(b) || IsNumberByte(b[i]) || nd > 19 || m > 1<<53 || frac > 22 {
		return 0, 0, false
	}
	x := float64(int64(m)) // m ≤ 2^53: one signed conversion
	if frac > 0 {
		x /= pow10[frac]
	}
	if neg {
		x = -x
	}
	return x, i, true
}

// Where column stopped.
const (
	atElement   = iota // at an element it could not read
	atSeparator        // after an element, at what follows it
	colDone            // after the ']'
)

// nan is a JSON null in a column.
var nan = math.NaN()

// column reads the elements of a column, from one after its '[' or a ',',
// into dst for as long as they take the fused path and the buffer holds
// them, and says where it stopped.
func (s *Scanner) column(dst []float64, maxLen int) ([]float64, int) {
	b, i := s.buf, s.pos
	for len(dst) < maxLen {
		x, j, ok := parseFast(b, i)
		switch {
		case ok:
			i = j
		case len(b)-i >= 8 && string(b[i:i+4]) == "null":
			x, i = nan, i+4
		default:
			s.pos = i
			return dst, atElement
		}
		dst = append(dst, x)
		switch b[i] { // i < len(b): parseFast saw the byte after the number
		case ',':
			i++
			continue
		case ']':
			s.pos = i + 1
			return dst, colDone
		}
		s.pos = i
		return dst, atSeparator
	}
	s.pos = i
	return dst, atElement
}
