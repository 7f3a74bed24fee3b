package jsonnear

import (
	"fmt"
	"strings"
	"testing"
)

// recorder keeps what Equal reports.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// TestEqual: figures within the tolerance are equal, beyond it not; a
// missing key, a short list, a changed string or a wrong type is a
// difference; a missing split rule is not.
func TestEqual(t *testing.T) {
	want := map[string]any{"a": 1e9, "b": []any{"x", 0.5}, "basis": "measured"}
	for name, c := range map[string]struct {
		got  any
		diff bool
	}{
		"same":            {map[string]any{"a": 1e9 + 50, "b": []any{"x", 0.5}}, false},
		"beyond":          {map[string]any{"a": 1e9 + 200, "b": []any{"x", 0.5}, "basis": "measured"}, true},
		"small absolute":  {map[string]any{"a": 1e9, "b": []any{"x", 0.5000002}, "basis": "measured"}, true},
		"short list":      {map[string]any{"a": 1e9, "b": []any{"x"}, "basis": "measured"}, true},
		"changed string":  {map[string]any{"a": 1e9, "b": []any{"y", 0.5}, "basis": "measured"}, true},
		"missing key":     {map[string]any{"b": []any{"x", 0.5}, "basis": "measured"}, true},
		"not a map":       {[]any{1.0}, true},
		"a string figure": {map[string]any{"a": "1e9", "b": []any{"x", 0.5}, "basis": "measured"}, true},
	} {
		r := &recorder{}
		Equal(r, "r", c.got, want)
		if (len(r.errs) > 0) != c.diff {
			t.Errorf("%s: differences %v, want some: %v", name, r.errs, c.diff)
		}
	}
	r := &recorder{}
	Equal(r, "r", []any{1.0, 2.0}, []any{1.0, 3.0})
	if len(r.errs) != 1 || !strings.HasPrefix(r.errs[0], "r[1] = 2, one analysis: 3") {
		t.Errorf("one difference, named by its path: %v", r.errs)
	}
}
