package profile

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/seedance/seedance/internal/jsonscan"
)

// Values is one column of a series. NaN stands for JSON null. It has its own JSON
// codec because encoding/json cannot put null into a []float64 and a []*float64
// costs a pointer per sample.
type Values []float64

// MarshalJSON writes the column as a JSON array, NaN as null.
func (v Values) MarshalJSON() ([]byte, error) {
	if v == nil {
		return []byte("null"), nil
	}
	b := make([]byte, 0, 2+len(v)*6)
	return v.appendJSON(b)
}

func (v Values) appendJSON(b []byte) ([]byte, error) {
	b = append(b, '[')
	for i, x := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendNumber(b, x)
	}
	return append(b, ']'), nil
}

// appendNumber formats x the way encoding/json does, with null for NaN and
// infinities (which JSON cannot hold).
func appendNumber(b []byte, x float64) []byte {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return append(b, "null"...)
	}
	if x == math.Trunc(x) && math.Abs(x) < 1e15 {
		return strconv.AppendInt(b, int64(x), 10)
	}
	abs := math.Abs(x)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	return strconv.AppendFloat(b, x, format, -1, 64)
}

var errValues = errors.New("series column must be an array of numbers or nulls")

// UnmarshalJSON parses a JSON array of numbers and nulls. encoding/json has
// already checked that data is well-formed JSON.
func (v *Values) UnmarshalJSON(data []byte) error {
	i := skipSpace(data, 0)
	if i+4 <= len(data) && string(data[i:i+4]) == "null" {
		*v = nil
		return nil
	}
	if i >= len(data) || data[i] != '[' {
		return errValues
	}
	out := (*v)[:0]
	if out == nil {
		out = make(Values, 0, len(data)/4)
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		*v = out
		return nil
	}
	for {
		i = skipSpace(data, i)
		if i >= len(data) {
			return errValues
		}
		if data[i] == 'n' {
			if i+4 > len(data) || string(data[i:i+4]) != "null" {
				return errValues
			}
			out = append(out, Null)
			i += 4
		} else {
			j := i
			for j < len(data) && jsonscan.IsNumberByte(data[j]) {
				j++
			}
			if j == i {
				return fmt.Errorf("%w: unexpected %q", errValues, data[i])
			}
			x, err := jsonscan.ParseNumber(data[i:j])
			if err != nil {
				return fmt.Errorf("%w: %s", errValues, data[i:j])
			}
			out = append(out, x)
			i = j
		}
		i = skipSpace(data, i)
		if i >= len(data) {
			return errValues
		}
		switch data[i] {
		case ',':
			i++
		case ']':
			*v = out
			return nil
		default:
			return fmt.Errorf("%w: unexpected %q", errValues, data[i])
		}
	}
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\n' || data[i] == '\r' || data[i] == '\t') {
		i++
	}
	return i
}
