package report

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"

	"github.com/seedance/seedance/internal/exprguard"
	"github.com/seedance/seedance/internal/table"
)

// ErrGateFailed is returned when at least one CI gate did not pass.
var ErrGateFailed = fmt.Errorf("a CI gate failed")

// asMap turns a document into the generic JSON shape gates see, so that a
// gate names fields as the JSON report does (summary.idle_ratio). hasDelta
// is false when the document has no delta section (no --baseline); gates
// then see an empty one.
func asMap(doc *Result) (m map[string]any, hasDelta bool, err error) {
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, false, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, false, err
	}
	if _, hasDelta = m["delta"]; !hasDelta {
		m["delta"] = map[string]any{}
	}
	if delta, ok := m["delta"].(map[string]any); ok && hasDelta {
		// A figure null in the report or in the baseline has no delta: a
		// gate over it reads null, and fails with the reason.
		summary, _ := m["summary"].(map[string]any)
		for k, v := range summary {
			if _, isNum := v.(float64); (isNum || v == nil) && delta[k] == nil {
				delta[k] = nil
			}
		}
	}
	return m, hasDelta, nil
}

// indexBy gives gates env[section][name], the entries of
// env[section][list] by key(entry), so that a gate names one: a group of
// the attribution report by its levels' values joined by "|"
// (attribution.group['research'].efficiency >= 0.5), a fragmentation pool
// by its GPU model (fragmentation.pool['NVIDIA H100 80GB HBM3'].ratio <=
// 0.35). An entry that is not in the report makes the gate invalid, not
// passed.
func indexBy(env map[string]any, section, list, name string, key func(map[string]any) string) {
	sec, ok := env[section].(map[string]any)
	if !ok {
		return
	}
	entries, _ := sec[list].([]any)
	index := make(map[string]any, len(entries))
	for _, e := range entries {
		if em, ok := e.(map[string]any); ok {
			index[key(em)] = em
		}
	}
	sec[name] = index
}

// indexUnits gives gates env[name], the unit figures of the entries of
// env[list] (unit_groups, unit_models) by their keys joined by "|":
// unit_group['inference'].output_tokens.usd_per_million <= 0.40
// (docs/units.md).
func indexUnits(env map[string]any, list, name string) {
	entries, ok := env[list].([]any)
	if !ok {
		return
	}
	index := make(map[string]any, len(entries))
	for _, e := range entries {
		if em, ok := e.(map[string]any); ok {
			index[groupIndexKey(em)] = em["units"]
		}
	}
	env[name] = index
}

// groupIndexKey is an attribution group's levels joined by "|".
func groupIndexKey(g map[string]any) string {
	keys, _ := g["key"].([]any)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i], _ = k.(string)
	}
	return strings.Join(parts, "|")
}

// poolIndexKey is a fragmentation pool's GPU model.
func poolIndexKey(p map[string]any) string {
	model, _ := p["model"].(string)
	return model
}

// Gates evaluates each boolean expression (expr-lang) over the result's
// JSON document, as it is written, and returns the outcomes, with
// ErrGateFailed when any is false. A gate that does not compile or cannot
// be evaluated returns ErrInvalidGate.
func Gates(doc *Result, gates []string) ([]Gate, error) {
	if len(gates) == 0 {
		return nil, nil
	}
	env, hasDelta, err := asMap(doc)
	if err != nil {
		return nil, err
	}
	indexBy(env, "attribution", "groups", "group", groupIndexKey)
	indexBy(env, "fragmentation", "pools", "pool", poolIndexKey)
	indexUnits(env, "unit_groups", "unit_group")
	indexUnits(env, "unit_models", "unit_model")
	var results []Gate
	failed := false
	for _, g := range gates {
		res := Gate{Expr: g, Basis: idleBasis(g, env)}
		// The text's bounds first, once: every parse below relies on them.
		if err := exprguard.Check(g); err != nil {
			return results, fmt.Errorf("%w: %v", ErrInvalidGate, err)
		}
		if err := unknownFields(g, env); err != nil {
			return results, fmt.Errorf("%w (gate %q)", err, g)
		}
		left, hasLeft := leftValue(g, env)
		if hasLeft {
			res.Value = left
		}
		if path, isNull := nullField(g, env); isNull {
			// A null anywhere in the gate (==, !=, not, and, or,
			// arithmetic) fails it: it never passes on missing data.
			res.Error = path + " is null: not measured in this report"
			if hasLeft && left == nil {
				res.Error = "the value is null: not measured in this report"
			}
			failed = true
			results = append(results, res)
			continue
		}
		prog, err := exprguard.Compile(g, expr.Env(env), expr.AsBool())
		var out any
		if err == nil {
			out, err = prog.Run(context.Background(), env, exprguard.DefaultLimits)
		} else if !hasLeft || left != nil {
			return results, fmt.Errorf("%w %q: %v", ErrInvalidGate, exprguard.Excerpt(g, 0), err)
		}
		if errors.Is(err, exprguard.ErrBudget) {
			res.Error = err.Error()
			failed = true
			results = append(results, res)
			continue
		}
		if err != nil && hasLeft && left == nil {
			// The field exists but was not measured (null): the gate
			// fails, it never passes on missing data.
			res.Error = "the value is null: not measured in this report"
			failed = true
			results = append(results, res)
			continue
		}
		if err != nil {
			// A gate that cannot be evaluated is a mistake in the gate (a
			// field that does not exist), not a result.
			hint := ""
			if !hasDelta && strings.Contains(g, "delta.") {
				hint = " (delta needs --baseline)"
			}
			return results, fmt.Errorf("%w %q: %v%s", ErrInvalidGate, g, table.Flatten(err.Error()), hint)
		}
		res.Passed = out == true
		failed = failed || !res.Passed
		results = append(results, res)
	}
	if failed {
		return results, ErrGateFailed
	}
	return results, nil
}

// GateLine is a gate's outcome in one line: "FAIL: summary.idle_ratio <=
// 0.2 (was 0.534)".
func GateLine(g Gate) string {
	status := "PASS"
	if !g.Passed {
		status = "FAIL"
	}
	line := status + ": " + g.Expr
	switch {
	case g.Error != "":
		line += " (" + g.Error + ")"
	case g.Value != nil:
		line += fmt.Sprintf(" (was %v)", g.Value)
	}
	if g.Basis != "" {
		line += " [" + g.Basis + "]"
	}
	return line
}

// idleBasis says what a gate over the summary's idle figures rests on when
// that is less than every node ("0 of 1 nodes observed for a full idle
// window"); "" for other gates, or when every node was.
func idleBasis(g string, env map[string]any) string {
	if !strings.Contains(g, "summary.idle_") && !strings.Contains(g, "summary.projected_monthly_savings_usd") {
		return ""
	}
	s, _ := env["summary"].(map[string]any)
	full, _ := s["nodes_observed_full_window"].(float64)
	nodes, _ := s["nodes"].(float64)
	if full >= nodes {
		return ""
	}
	return fmt.Sprintf("%g of %g nodes observed for a full idle window", full, nodes)
}

// leftValue evaluates the left side of a gate that is a comparison
// ("summary.idle_ratio <= 0.2" → 0.534), for the message of a failed gate.
// ok is false when the gate is not a comparison or its left side cannot be
// evaluated.
func leftValue(g string, env map[string]any) (v any, ok bool) {
	tree, err := parser.Parse(g) // g passed exprguard.Check (Gates)
	if err != nil {
		return nil, false
	}
	b, isBin := tree.Node.(*ast.BinaryNode)
	if !isBin {
		return nil, false
	}
	switch b.Operator {
	case "<", "<=", ">", ">=", "==", "!=":
	default:
		return nil, false
	}
	if v, found := lookup(b.Left, env); found {
		return v, true
	}
	p, err := exprguard.Compile(b.Left.String(), expr.Env(env))
	if err == nil {
		v, err = p.Run(context.Background(), env, exprguard.DefaultLimits)
	}
	if err != nil || v == nil {
		// nil from a path that names no field is a mistake, not a null.
		return nil, false
	}
	return v, true
}

// lookup follows a field path (summary.avg_gpu_util_pct) through the JSON
// report; found is false when the path names no field.
func lookup(n ast.Node, env map[string]any) (v any, found bool) {
	switch n := n.(type) {
	case *ast.IdentifierNode:
		v, found = env[n.Value]
		return v, found
	case *ast.MemberNode:
		key, isStr := n.Property.(*ast.StringNode)
		if !isStr {
			return nil, false
		}
		parent, ok := lookup(n.Node, env)
		m, isMap := parent.(map[string]any)
		if !ok || !isMap {
			return nil, false
		}
		v, found = m[key.Value]
		return v, found
	}
	return nil, false
}

// ErrInvalidGate marks a gate expression that does not compile.
var ErrInvalidGate = fmt.Errorf("invalid gate")

// nullField is the first field path of the gate whose value in the report
// is null (a figure with no measurement behind it); ok is false when the
// gate reads none.
func nullField(g string, env map[string]any) (path string, ok bool) {
	tree, err := parser.Parse(g) // g passed exprguard.Check (Gates)
	if err != nil {
		return "", false
	}
	f := &nullFinder{env: env}
	ast.Walk(&tree.Node, f)
	return f.path, f.path != ""
}

// nullFinder visits a gate's nodes for a field path whose value is null.
type nullFinder struct {
	env  map[string]any
	path string
}

func (f *nullFinder) Visit(n *ast.Node) {
	if f.path != "" {
		return
	}
	switch (*n).(type) {
	case *ast.IdentifierNode, *ast.MemberNode:
		if v, found := lookup(*n, f.env); found && v == nil {
			f.path = (*n).String()
		}
	}
}
