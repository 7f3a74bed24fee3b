package act

import (
	"strings"
	"testing"
)

// TestDiscoveryMerge: a kind one group serves with /scale scales, whatever
// other groups serve without it, in either order; two groups that scale it
// make it ambiguous (notice only), and a third does not undo that; one
// served without /scale says so.
func TestDiscoveryMerge(t *testing.T) {
	with := func(g string) (scaleKind, bool, string) {
		return scaleKind{prefix: "/apis/" + g + "/v1", resource: "rollouts"}, true, g + "/v1"
	}
	without := func(g string) (scaleKind, bool, string) {
		return scaleKind{prefix: "/apis/" + g + "/v1", resource: "rollouts"}, false, g + "/v1"
	}
	type add func(string) (scaleKind, bool, string)
	cases := []struct {
		adds   []add
		groups []string
		prefix string // of a kind that scales
		why    string // else the start of why not
	}{
		{[]add{with}, []string{"a.io"}, "/apis/a.io/v1", ""},
		{[]add{without}, []string{"a.io"}, "", "the API server serves a.io/v1 rollouts without a /scale"},
		{[]add{without, with}, []string{"a.io", "b.io"}, "/apis/b.io/v1", ""},
		{[]add{with, without}, []string{"a.io", "b.io"}, "/apis/a.io/v1", ""},
		{[]add{with, with}, []string{"a.io", "b.io"}, "", "several API groups serve the kind with /scale (a.io/v1, b.io/v1)"},
		{[]add{with, with, without}, []string{"a.io", "b.io", "c.io"}, "", "several API groups"},
		{[]add{with, with, with}, []string{"a.io", "b.io", "c.io"}, "", "several API groups"},
	}
	for i, c := range cases {
		var got scaleKind
		for k, f := range c.adds {
			r, scales, gv := f(c.groups[k])
			got = merge(got, r, scales, gv)
		}
		if c.why == "" && (got.why != "" || got.prefix != c.prefix) || c.why != "" && !strings.HasPrefix(got.why, c.why) {
			t.Errorf("case %d: %+v", i, got)
		}
	}
}
