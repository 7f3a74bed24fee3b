package jsonscan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"
)

// numberCases are the edges of the fused path: signs, leading zeros,
// exponents, 17- to 20-digit decimals, 2^53 and its neighbours, the last
// exact power of ten, and what is not a number at all.
var numberCases = []string{
	"0", "-0", "0.0", "-0.0", "7", "-7", "12.5", "99.99", "100", "0.1", "0.3", "-1.5",
	"9007199254740992", "9007199254740993", "9007199254740991.5", "18446744073709551615",
	"18446744073709551616", "123456789012345678901234567890",
	"0.12345678901234567", "1.2345678901234567", "12345678901234567.8", "3.141592653589793",
	"0.0000000000000000000001", "0.00000000000000000000001", "1.0000000000000000000001",
	"1e3", "1E3", "1e+3", "1e-3", "-2.5e-7", "1e400", "-1e400", "1e-400", "4.9e-324", "2.2250738585072014e-308",
	"01", "-01", "00", "1.", ".5", "-", "+1", "--1", "1.2.3", "1-2", "1e", "1e+", "0x10", "1_000", "Inf", "NaN",
	"null", "nul", "true", "\"1\"", "1 ", " 1", "1,", "",
}

// pad follows a column so that its last number is not the buffer's end,
// where the fused path would always give up.
var pad = strings.Repeat(" ", 64)

// decodeColumn reads "[" + body + "]" as a column, handed over in chunks
// of the given size (0: whole), so that the numbers straddle refills.
func decodeColumn(body string, chunk int) ([]float64, error) {
	var r io.Reader = strings.NewReader("[" + body + "]" + pad)
	if chunk > 0 {
		r = &chunkReader{r, chunk}
	}
	s := New(r)
	col, err := s.Column(nil, 1<<20)
	if err == nil {
		err = s.End()
	}
	return col, err
}

// checkAgrees compares the scanner's column with encoding/json's on body.
func checkAgrees(t *testing.T, body string) {
	var want []*float64
	werr := json.Unmarshal([]byte("["+body+"]"), &want)
	for _, chunk := range []int{0, 1, 7, 13} {
		got, err := decodeColumn(body, chunk)
		if err != nil && werr == nil && overLong(body) && strings.Contains(err.Error(), fmt.Sprintf("a number longer than %d bytes", maxNumberBytes)) {
			continue // the scanner's bound, which encoding/json does not have
		}
		if (err != nil) != (werr != nil) {
			t.Fatalf("[%s] (in chunks of %d): scanner error %v, encoding/json error %v", body, chunk, err, werr)
		}
		if err != nil {
			continue
		}
		if len(got) != len(want) {
			t.Fatalf("[%s]: %d values, encoding/json %d", body, len(got), len(want))
		}
		for i, w := range want {
			if w == nil {
				if !math.IsNaN(got[i]) {
					t.Fatalf("[%s][%d]: %v, want null", body, i, got[i])
				}
			} else if math.Float64bits(got[i]) != math.Float64bits(*w) {
				t.Fatalf("[%s][%d]: %v (%#x), encoding/json %v (%#x)", body, i, got[i], math.Float64bits(got[i]), *w, math.Float64bits(*w))
			}
		}
	}
}

// overLong says whether body holds a run of number characters longer
// than the scanner takes (maxNumberBytes).
func overLong(body string) bool {
	run := 0
	for _, c := range body {
		if strings.ContainsRune("0123456789.eE+-", c) {
			if run++; run > maxNumberBytes {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

// TestNumberTooLong: a number past the scanner's bound is refused with
// one clear error where encoding/json reads it (the fuzzer's find, a
// 1.000006… of 1,400 digits), and the differential check allows that.
func TestNumberTooLong(t *testing.T) {
	long := "1.00000" + strings.Repeat("6", 1400)
	if _, err := decodeColumn(long, 0); err == nil || !strings.Contains(err.Error(), "a number longer than 1024 bytes") {
		t.Fatalf("%v", err)
	}
	checkAgrees(t, long)
	checkAgrees(t, "1, "+long+", 2")
}

// TestNumberCases: every edge case alone, and all of them in one column.
func TestNumberCases(t *testing.T) {
	var valid []string
	for _, c := range numberCases {
		checkAgrees(t, c)
		if json.Valid([]byte("[" + c + "]")) {
			valid = append(valid, c)
		}
	}
	checkAgrees(t, strings.Join(valid, ","))
	checkAgrees(t, strings.Join(valid, " ,\n"))
}

// TestNumberFastPathTaken: the profile's common shapes take the fused path
// (a change that made every number fall back would pass the tests above).
func TestNumberFastPathTaken(t *testing.T) {
	for _, c := range []string{"0", "-0", "42", "12.5", "-3.25", "0.001", "9007199254740992", "1.234567890123456"} {
		s := New(bytes.NewReader([]byte(c + "," + pad)))
		s.fill()
		if _, ok := s.fastNumber(); !ok {
			t.Errorf("%q fell back to the general path", c)
		}
	}
}

// FuzzNumberDifferential: the scanner reads a column of numbers exactly as
// encoding/json does (the same values to the bit, the same inputs refused),
// whether the number sits wholly in the buffer or straddles a refill.
func FuzzNumberDifferential(f *testing.F) {
	for _, c := range numberCases {
		f.Add(c)
	}
	f.Add("1,2.5,null,-0,0.1")
	f.Fuzz(func(t *testing.T, body string) {
		checkAgrees(t, body)
	})
}

// chunkReader hands its input over n bytes at a time.
type chunkReader struct {
	r io.Reader
	n int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(p) > c.n {
		p = p[:c.n]
	}
	return c.r.Read(p)
}

// TestRawValue: the bytes of one value, whatever it holds, in any chunks;
// an unbalanced or overlong value is an error.
func TestRawValue(t *testing.T) {
	for in, want := range map[string]string{
		`[1,[2,{"a":"]\"}x"}]] ,`: `[1,[2,{"a":"]\"}x"}]]`,
		`"str\"ing",`:             `"str\"ing"`,
		`123,`:                    `123`,
		`-1.5e3]`:                 `-1.5e3`,
		`null}`:                   `null`,
		` true `:                  `true`,
		`{}`:                      `{}`,
		`[}`:                      `[}`, // the brackets balance in number: the caller's parse refuses it
		`7`:                       `7`,
	} {
		for _, chunk := range []int{0, 1, 3} {
			var r io.Reader = strings.NewReader(in)
			if chunk > 0 {
				r = &chunkReader{r, chunk}
			}
			got, err := New(r).RawValue(1 << 10)
			if err != nil || string(got) != want {
				t.Errorf("%q in chunks of %d: %q, %v; want %q", in, chunk, got, err, want)
			}
		}
	}
	for _, in := range []string{`[1,2`, `"abc`, `{"a":[`, ``} {
		if got, err := New(strings.NewReader(in)).RawValue(1 << 10); err == nil {
			t.Errorf("%q: %q, no error", in, got)
		}
	}
	if _, err := New(strings.NewReader("[" + strings.Repeat("1,", 1000) + "1]")).RawValue(1 << 10); err == nil || !strings.Contains(err.Error(), "longer than 1 KiB") {
		t.Errorf("an overlong value: %v", err)
	}
}

// TestRawValueUpTo: a value within the limit is its bytes, as RawValue's;
// a longer one is left unread, in any chunks and from inside an object,
// and reads whole after.
func TestRawValueUpTo(t *testing.T) {
	long := "[" + strings.Repeat(`"ab",`, 300) + `"ab"]`
	for _, chunk := range []int{0, 1, 7, 4096} {
		var r io.Reader = strings.NewReader(`{"short":[1,2],"long":` + long + `}`)
		if chunk > 0 {
			r = &chunkReader{r, chunk}
		}
		s := NewBuffer(r, make([]byte, 0, 16))
		var short, back []byte
		var skipped bool
		err := s.Object(func(key string) error {
			raw, ok, err := s.RawValueUpTo(1 << 10)
			switch {
			case err != nil:
				return err
			case key == "short" && ok:
				short = append(short, raw...)
				return nil
			case key == "long" && !ok:
				skipped = true
				back, err = s.RawValue(1 << 20)
				back = append([]byte(nil), back...)
				return err
			}
			return fmt.Errorf("%s: ok %v", key, ok)
		})
		if err != nil || string(short) != "[1,2]" || !skipped || string(back) != long {
			t.Errorf("chunks of %d: %v; short %q, long skipped %v and read back as %.40q", chunk, err, short, skipped, back)
		}
	}
	if _, ok, err := New(strings.NewReader(`[1,2`)).RawValueUpTo(1 << 10); ok || err == nil {
		t.Errorf("an unbalanced value: ok %v, %v", ok, err)
	}
}

// TestSame: a value whose bytes are the known ones, whole in the buffer,
// is passed; any other (one that differs, ends early or goes on) is left
// where it was, to be read as usual, and so is one the buffer does not
// hold yet (chunks of 1 and 5 bytes).
func TestSame(t *testing.T) {
	known := []byte(`[{"link":0,"up":true},{"link":1,"up":true}]`)
	for _, c := range []struct {
		in   string
		same bool   // when the buffer holds the whole input
		next string // the next value RawValue reads; "" for an error
	}{
		{` [{"link":0,"up":true},{"link":1,"up":true}] 7`, true, "7"},
		{`[{"link":0,"up":true},{"link":1,"up":false}]`, false, `[{"link":0,"up":true},{"link":1,"up":false}]`},
		{`[{"link":0,"up":true},{"link":1,"up":true},{"link":2}]`, false, `[{"link":0,"up":true},{"link":1,"up":true},{"link":2}]`},
		{`[{"link":0,"up":true}`, false, ""},
		{``, false, ""},
	} {
		for _, chunk := range []int{0, 1, 5} {
			var r io.Reader = strings.NewReader(c.in)
			if chunk > 0 {
				r = &chunkReader{r, chunk}
			}
			s := NewBuffer(r, make([]byte, 0, 4096))
			same := s.Same(known)
			if same != (c.same && chunk == 0) {
				t.Errorf("%q in chunks of %d: same %v", c.in, chunk, same)
			}
			next, err := s.RawValue(1 << 10)
			want := c.next
			if c.same && !same {
				want = strings.TrimSpace(strings.TrimSuffix(c.in, " 7"))
			}
			if (want == "") != (err != nil) || string(next) != want {
				t.Errorf("%q in chunks of %d: then read %q, %v; want %q", c.in, chunk, next, err, want)
			}
		}
	}
}
