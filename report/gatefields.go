package report

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"
)

// fieldChecker collects the first field path of a gate that names no field
// of the report (summary.idel_ratio), with the nearest known names.
type fieldChecker struct {
	env map[string]any
	err error
}

func (c *fieldChecker) Visit(n *ast.Node) {
	if c.err != nil {
		return
	}
	m, ok := (*n).(*ast.MemberNode)
	if !ok {
		return
	}
	c.err = checkPath(m, c.env)
}

// unknownFields returns an error naming the first field path in the gate
// that the report does not have, and the nearest names it does have; nil
// when every path resolves (or the gate does not parse, which the compiler
// reports). delta.* paths resolve against the summary's numbers when the
// report has no baseline, so that the gate gets its "needs --baseline"
// hint instead.
func unknownFields(g string, env map[string]any) error {
	tree, err := parser.Parse(g) // g passed exprguard.Check (Gates)
	if err != nil {
		return nil
	}
	c := &fieldChecker{env: env}
	ast.Walk(&tree.Node, c)
	return c.err
}

// checkPath resolves a member path whose properties are all strings
// (a.b['c'].d) from the report's root; a missing key under a map is an
// error. Paths through anything else (a function's result, an index
// expression) are left to the evaluator.
func checkPath(m *ast.MemberNode, env map[string]any) error {
	var keys []string
	var n ast.Node = m
	for {
		switch x := n.(type) {
		case *ast.MemberNode:
			s, ok := x.Property.(*ast.StringNode)
			if !ok {
				return nil
			}
			keys = append(keys, s.Value)
			n = x.Node
			continue
		case *ast.IdentifierNode:
			keys = append(keys, x.Value)
		default:
			return nil
		}
		break
	}
	slices.Reverse(keys)
	var cur any = env
	for i, k := range keys {
		mp, ok := cur.(map[string]any)
		if !ok {
			return nil // a list, a number: the evaluator says what is wrong
		}
		v, found := mp[k]
		if !found {
			return unknownField(strings.Join(keys[:i], "."), k, mp, keys[0] == "delta")
		}
		cur = v
	}
	return nil
}

// unknownField is the error for key missing under parent.
func unknownField(parent, key string, siblings map[string]any, delta bool) error {
	if delta && len(siblings) == 0 {
		return nil // no --baseline: the evaluator's error gets the hint
	}
	names := make([]string, 0, len(siblings))
	for k := range siblings {
		names = append(names, k)
	}
	near := nearest(key, names, 3)
	what := "no field"
	switch parent {
	case "attribution.group":
		what = "no attribution group"
	case "fragmentation.pool":
		what = "no fragmentation pool"
	}
	if parent == "" {
		parent = "the report"
	}
	msg := fmt.Sprintf("%s %q in %s", what, key, parent)
	if len(near) > 0 {
		msg += "; nearest: " + strings.Join(near, ", ")
	}
	return fmt.Errorf("%w: %s", ErrInvalidGate, msg)
}

// nearest returns up to k of names closest to s by edit distance, nearest
// first, keeping those within half of s's length.
func nearest(s string, names []string, k int) []string {
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	for _, n := range names {
		if d := editDistance(strings.ToLower(s), strings.ToLower(n)); d <= max(2, len(s)/2) {
			cs = append(cs, cand{n, d})
		}
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].d != cs[j].d {
			return cs[i].d < cs[j].d
		}
		return cs[i].name < cs[j].name
	})
	out := []string{}
	for i := 0; i < len(cs) && i < k; i++ {
		out = append(out, cs[i].name)
	}
	return out
}

// editDistance is the Levenshtein distance of a and b (bytes; the names
// are short: a gate is at most a line).
func editDistance(a, b string) int {
	if len(a) > 256 || len(b) > 256 {
		return max(len(a), len(b))
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
