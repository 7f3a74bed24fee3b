package jsonscan

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// DescribeError says in one line what encoding/json's error means, in
// JSON terms ("expected a string at uuid, found a number").
func DescribeError(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF):
		return "empty input"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "truncated JSON (unexpected end of input)"
	case errors.As(err, &syn):
		return fmt.Sprintf("JSON syntax error at byte %d: %v", syn.Offset, syn)
	case errors.As(err, &typ):
		where := ""
		if typ.Field != "" {
			where = " at " + typ.Field
		}
		return fmt.Sprintf("expected %s%s, found %s", kindName(typ.Type), where, article(typ.Value))
	case strings.Contains(err.Error(), "Time.UnmarshalJSON") || strings.HasPrefix(err.Error(), "parsing time"):
		return `expected an RFC 3339 time such as "2026-01-05T09:00:00Z"`
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// kindName says what a Go type is in JSON terms.
func kindName(t reflect.Type) string {
	if t == nil {
		return "another value"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64, reflect.Uint64, reflect.Float64, reflect.Int32, reflect.Uint32:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct, reflect.Pointer:
		return "an object"
	}
	return "a " + t.String()
}

// article puts "a" or "an" before encoding/json's name of a value kind.
func article(v string) string {
	if v != "" && strings.ContainsRune("aeiou", rune(v[0])) {
		return "an " + v
	}
	return "a " + v
}
