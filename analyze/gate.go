package analyze

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/expr-lang/expr"
)

// ErrGateFailed is returned when at least one CI gate did not pass.
var ErrGateFailed = fmt.Errorf("a CI gate failed")

// asMap turns the report into the generic JSON shape gates see, so that a
// gate names fields as the JSON report does (summary.idle_ratio).
func asMap(r *Report) (map[string]any, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	if _, ok := m["delta"]; !ok {
		m["delta"] = map[string]any{}
	}
	return m, nil
}

// EvalGates evaluates each boolean expression (expr-lang) over the JSON
// report, records the results in r.Gates, and returns ErrGateFailed when any
// is false. A gate that does not compile or cannot be evaluated returns
// ErrInvalidGate.
func EvalGates(r *Report, gates []string) error {
	if len(gates) == 0 {
		return nil
	}
	env, err := asMap(r)
	if err != nil {
		return err
	}
	failed := false
	for _, g := range gates {
		prog, err := expr.Compile(g, expr.Env(env), expr.AsBool())
		if err != nil {
			return fmt.Errorf("%w %q: %v", ErrInvalidGate, g, oneLine(err.Error()))
		}
		res := GateResult{Expr: g}
		out, err := expr.Run(prog, env)
		if err != nil {
			// A gate that cannot be evaluated is a mistake in the gate (a
			// field that does not exist), not a result.
			hint := ""
			if r.Delta == nil && strings.Contains(g, "delta.") {
				hint = " (delta needs --baseline)"
			}
			return fmt.Errorf("%w %q: %v%s", ErrInvalidGate, g, oneLine(err.Error()), hint)
		}
		res.Passed = out == true
		failed = failed || !res.Passed
		r.Gates = append(r.Gates, res)
	}
	if failed {
		return ErrGateFailed
	}
	return nil
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
	cur, old := reflect.ValueOf(r.Summary), reflect.ValueOf(base.Summary)
	t := cur.Type()
	for i := 0; i < t.NumField(); i++ {
		name := jsonName(t.Field(i))
		a, b := toFloat(cur.Field(i)), toFloat(old.Field(i))
		r.Delta[name] = sig(a - b)
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

func toFloat(v reflect.Value) float64 {
	switch v.Kind() {
	case reflect.Int, reflect.Int64:
		return float64(v.Int())
	case reflect.Float64:
		return v.Float()
	}
	return 0
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
