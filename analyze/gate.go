package analyze

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"

	"github.com/seedance/seedance/internal/exprguard"
)

// ErrGateFailed is returned when at least one CI gate did not pass.
var ErrGateFailed = fmt.Errorf("a CI gate failed")

// asMap turns a document into the generic JSON shape gates see, so that a
// gate names fields as the JSON report does (summary.idle_ratio). hasDelta
// is false when the document has no delta section (no --baseline); gates
// then see an empty one.
func asMap(doc any) (m map[string]any, hasDelta bool, err error) {
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

// EvalGates evaluates each gate over the report's JSON and records the
// results in r.Gates. See Gates.
func EvalGates(r *Report, gates []string) error {
	res, err := Gates(r, gates)
	r.Gates = append(r.Gates, res...)
	return err
}

// Gates evaluates each boolean expression (expr-lang) over doc's JSON (a
// report, or a report with the sections later stages add, such as the
// migration plan) and returns the results, with ErrGateFailed when any is
// false. A gate that does not compile or cannot be evaluated returns
// ErrInvalidGate.
func Gates(doc any, gates []string) ([]GateResult, error) {
	if len(gates) == 0 {
		return nil, nil
	}
	env, hasDelta, err := asMap(doc)
	if err != nil {
		return nil, err
	}
	indexBy(env, "attribution", "groups", "group", groupIndexKey)
	indexBy(env, "fragmentation", "pools", "pool", poolIndexKey)
	var results []GateResult
	failed := false
	for _, g := range gates {
		res := GateResult{Expr: g, Basis: idleBasis(g, env)}
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
			return results, fmt.Errorf("%w %q: %v%s", ErrInvalidGate, g, oneLine(err.Error()), hint)
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
func GateLine(g GateResult) string {
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

// ErrInvalidBaseline marks a --baseline file that is not a JSON report.
var ErrInvalidBaseline = errors.New("invalid baseline")

// ReadBaseline reads a JSON report written earlier (--baseline).
func ReadBaseline(r io.Reader, name string) (*Report, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read baseline %s: %w", name, err)
	}
	var head struct {
		SchemaVersion string `json:"schema_version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("read baseline %s: %w: not a JSON report (%v)", name, ErrInvalidBaseline, oneLine(err.Error()))
	}
	if head.SchemaVersion != ReportSchema {
		return nil, fmt.Errorf("read baseline %s: %w: schema_version %q, want %q (write it with seedance analyze --format json)", name, ErrInvalidBaseline, head.SchemaVersion, ReportSchema)
	}
	var b Report
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("read baseline %s: %w: %v", name, ErrInvalidBaseline, oneLine(err.Error()))
	}
	return &b, nil
}

// ApplyBaseline sets r.Delta to current − baseline for every summary field.
func ApplyBaseline(r, base *Report) {
	r.Delta = map[string]float64{}
	old := SummaryNumbers(base.Summary)
	for name, a := range SummaryNumbers(r.Summary) {
		if b, ok := old[name]; ok { // a null on either side has no delta
			r.Delta[name] = sig(a - b)
		}
	}
}

func jsonName(f reflect.StructField) string {
	tag := f.Tag.Get("json")
	for i := 0; i < len(tag); i++ {
		if tag[i] == ',' {
			return tag[:i]
		}
	}
	return tag
}

// SummaryNumbers maps the summary's numeric fields, by their JSON names, to
// their values; a null field is absent.
func SummaryNumbers(s Summary) map[string]float64 {
	out := map[string]float64{}
	v := reflect.ValueOf(s)
	for i := 0; i < v.NumField(); i++ {
		if x, ok := toFloat(v.Field(i)); ok {
			out[jsonName(v.Type().Field(i))] = x
		}
	}
	return out
}

// toFloat reads a numeric summary field; ok is false for a null or a
// field that is not a number.
func toFloat(v reflect.Value) (float64, bool) {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return 0, false
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Int, reflect.Int64:
		return float64(v.Int()), true
	case reflect.Float64:
		return v.Float(), true
	}
	return 0, false
}

func oneLine(s string) string {
	out := make([]byte, 0, len(s))
	space := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\n' || c == '\t' || c == ' ' || c == '\r' {
			space = true
			continue
		}
		if space && len(out) > 0 {
			out = append(out, ' ')
		}
		space = false
		out = append(out, c)
	}
	return string(out)
}
