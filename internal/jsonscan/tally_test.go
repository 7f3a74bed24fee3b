package jsonscan

import (
	"bytes"
	"io"
	"math"
	"strings"
	"testing"
)

// tallyMaxes are the ranges profiles use (percentages, MaxValue) and
// edges: below one, exactly a power of ten.
var tallyMaxes = []float64{100, 1e18, 1, 0.5, 1000, 99.5}

// checkTallyAgrees: TallyColumn on body says what Column and a range check
// over its values say: the same error (or none), presence, length, and
// first value outside [0, max], whole or in chunks.
func checkTallyAgrees(t *testing.T, body string, limit float64) {
	t.Helper()
	for _, chunk := range []int{0, 1, 7, 13} {
		reader := func() *Scanner {
			var r io.Reader = strings.NewReader(body + pad)
			if chunk > 0 {
				r = &chunkReader{r, chunk}
			}
			return New(r)
		}
		col, cerr := reader().Column(nil, 50)
		tally, present, terr := reader().TallyColumn(50, limit)
		if (cerr == nil) != (terr == nil) || (cerr != nil && cerr.Error() != terr.Error()) {
			t.Fatalf("%s (chunks of %d): Column error %v, TallyColumn error %v", body, chunk, cerr, terr)
		}
		if cerr != nil {
			continue
		}
		if present != (col != nil) || tally.N != len(col) {
			t.Fatalf("%s: tally present %v, %d elements; Column %v, %d", body, present, tally.N, col != nil, len(col))
		}
		bad, badV := -1, 0.0
		for i, x := range col {
			if x < 0 || x > limit {
				bad, badV = i, x
				break
			}
		}
		if tally.Bad != bad || (bad >= 0 && math.Float64bits(tally.BadValue) != math.Float64bits(badV)) {
			t.Fatalf("%s (max %v): tally's first value out of range [%d] %v, Column's [%d] %v", body, limit, tally.Bad, tally.BadValue, bad, badV)
		}
	}
}

func TestTallyAgreesWithColumn(t *testing.T) {
	var valid []string
	for _, c := range numberCases {
		for _, limit := range tallyMaxes {
			checkTallyAgrees(t, "["+c+"]", limit)
		}
		valid = append(valid, c)
	}
	bodies := []string{"null", "[]", "[ ]", "[1,]", "[,1]", "[1 2]", "[1,2", "nul", "{}", "[null,null]",
		"[99,100,100.0,100.5,101,-0,-1]", "[1e18,999999999999999999,1000000000000000000,1000000000000000001,1e19]",
		"[0.5,0.50,0.51,1,1.0,0.4999]", "[" + strings.Repeat("1,", 50) + "1]", "[" + strings.Repeat("7,", 49) + "7]",
		"[" + strings.Join(valid, ",") + "]"}
	for _, b := range bodies {
		for _, limit := range tallyMaxes {
			checkTallyAgrees(t, b, limit)
		}
	}
}

// TestTallySkimsCommonShapes: in-range numbers of the profile's shapes are
// skimmed, not converted (a change that converted everything would pass
// the test above), and 100 against a limit of 100 is converted.
func TestTallySkimsCommonShapes(t *testing.T) {
	for _, c := range []struct {
		body      string
		limit     float64
		converted int
	}{
		{"[0,42,12.5,99.99,0.001,77120667648,2286386753.1,null,7]", 1e18, 0},
		{"[5,99.9,100,100.0,101]", 100, 3},
	} {
		tl := newTally(c.limit)
		s := New(bytes.NewReader([]byte(c.body + pad)))
		s.fill()
		s.pos = 1
		if state := s.skimColumn(&tl, 100); state != colDone {
			t.Fatalf("%s: stopped at %d", c.body, state)
		}
		if tl.converted != c.converted {
			t.Errorf("%s: %d numbers converted, want %d", c.body, tl.converted, c.converted)
		}
	}
}

// FuzzTallyAgreesWithColumn: TallyColumn agrees with Column and a range
// check on any input, in any chunks.
func FuzzTallyAgreesWithColumn(f *testing.F) {
	for _, c := range numberCases {
		f.Add("["+c+"]", uint8(0))
	}
	f.Add("[1,2.5,null,-0,0.1,100,100.5]", uint8(0))
	f.Fuzz(func(t *testing.T, body string, m uint8) {
		checkTallyAgrees(t, body, tallyMaxes[int(m)%len(tallyMaxes)])
	})
}

// BenchmarkTally: the tally path over the same column as BenchmarkColumn.
func BenchmarkTally(b *testing.B) {
	data := benchColumn()
	b.SetBytes(int64(len(data)))
	for i := 0; i < b.N; i++ {
		s := New(bytes.NewReader(data))
		if _, _, err := s.TallyColumn(1<<20, 1e18); err != nil {
			b.Fatal(err)
		}
	}
}
