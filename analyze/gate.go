package analyze

import (
	"encoding/json"
	"fmt"
	"io"
	"reflect"

	"github.com/expr-lang/expr"

	"github.com/seedance/seedance/profile"
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
// is false or cannot be evaluated. A gate that does not compile is a usage
// error (ErrInvalidGate).
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
		switch {
		case err != nil:
			res.Error = oneLine(err.Error())
		case out == true:
			res.Passed = true
		}
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

// ReadBaseline reads a JSON report written earlier (--baseline).
func ReadBaseline(r io.Reader, name string) (*Report, error) {
	var b Report
	dec := json.NewDecoder(r)
	if err := dec.Decode(&b); err != nil {
		return nil, fmt.Errorf("read baseline %s: %w: not a JSON report (%v)", name, profile.ErrInvalid, oneLine(err.Error()))
	}
	if b.SchemaVersion != ReportSchema {
		return nil, fmt.Errorf("read baseline %s: %w: schema_version %q, want %q (write it with seedance analyze --format json)", name, profile.ErrInvalid, b.SchemaVersion, ReportSchema)
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
