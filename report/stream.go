package report

import (
	"encoding"
	"encoding/json"
	"io"
	"reflect"
	"strings"
)

// WriteJSON writes the JSON report to w compact, byte for byte what
// json.Marshal writes of it, without holding it: a struct is written field
// by field and a list element by element, each element through
// json.Marshal. The report of 10,000 nodes is about 10 MB compact, which
// json.Marshal builds in a doubling buffer and then copies; here the most
// held at once is one node's, one move's or one suggestion's bytes.
func (r *Result) WriteJSON(w io.Writer) error { return stream(w, r.document()) }

// stream writes v to w as json.Marshal would, in pieces (streamer).
func stream(w io.Writer, v any) error {
	s := streamer{w: w}
	s.value(reflect.ValueOf(v))
	return s.err
}

// streamer writes a value as encoding/json does, in pieces; its first
// error stops it.
type streamer struct {
	w   io.Writer
	err error
}

// The punctuation streamer writes, made once (a literal passed to Write
// would be allocated at each element).
var openList, closeList, openObject, closeObject, comma = []byte{'['}, []byte{']'}, []byte{'{'}, []byte{'}'}, []byte{','}

func (s *streamer) raw(b []byte) {
	if s.err == nil {
		_, s.err = s.w.Write(b)
	}
}

// value goes down into the structs and lists encoding/json writes plainly
// (plainStruct) and hands everything else, and every list element, to
// json.Marshal.
func (s *streamer) value(v reflect.Value) {
	switch t := v.Type(); {
	case plainStruct(t):
		s.object(v)
	case t.Kind() == reflect.Pointer && !v.IsNil() && plainStruct(t.Elem()):
		s.object(v.Elem())
	case t.Kind() == reflect.Slice && !v.IsNil() && t.Elem().Kind() != reflect.Uint8 && !marshals(t):
		s.raw(openList)
		for i := 0; i < v.Len(); i++ {
			if i > 0 {
				s.raw(comma)
			}
			s.marshal(v.Index(i))
		}
		s.raw(closeList)
	default:
		s.marshal(v)
	}
}

// marshal writes v through json.Marshal. An addressable v goes by its
// address, as encoding/json would call a MarshalJSON with a pointer
// receiver on it.
func (s *streamer) marshal(v reflect.Value) {
	if s.err != nil {
		return
	}
	if v.CanAddr() {
		v = v.Addr()
	}
	b, err := json.Marshal(v.Interface())
	if err != nil {
		s.err = err
		return
	}
	s.raw(b)
}

func (s *streamer) object(v reflect.Value) {
	s.raw(openObject)
	first := true
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		name, opts, ok := jsonField(t.Field(i))
		if !ok {
			continue
		}
		f := v.Field(i)
		if opts == "omitempty" && isEmpty(f) {
			continue
		}
		if !first {
			s.raw(comma)
		}
		first = false
		s.raw([]byte(`"` + name + `":`))
		s.value(f)
	}
	s.raw(closeObject)
}

// jsonField is a field's JSON name and the options of its tag; ok is
// false for a field encoding/json leaves out (unexported, tagged "-").
func jsonField(f reflect.StructField) (name, opts string, ok bool) {
	tag := f.Tag.Get("json")
	if !f.IsExported() || tag == "-" {
		return "", "", false
	}
	name, opts, _ = strings.Cut(tag, ",")
	if name == "" {
		name = f.Name
	}
	return name, opts, true
}

// plainStruct reports whether encoding/json writes a value of type t as
// its fields in order under their names: a struct without a marshaling
// method, embedded fields, options other than omitempty, names that need
// escaping or a name twice. Anything else is left to json.Marshal whole.
func plainStruct(t reflect.Type) bool {
	if t.Kind() != reflect.Struct || marshals(t) {
		return false
	}
	seen := map[string]bool{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, opts, ok := jsonField(f)
		if f.Anonymous {
			return false
		}
		if !ok {
			continue
		}
		if (opts != "" && opts != "omitempty") || !plainName(name) || seen[name] {
			return false
		}
		seen[name] = true
	}
	return true
}

// plainName reports whether a JSON name needs no escaping: letters,
// digits and underscores only.
func plainName(name string) bool {
	for _, c := range name {
		switch {
		case c == '_', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		default:
			return false
		}
	}
	return name != ""
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// marshals reports whether t or *t has its own JSON or text form.
func marshals(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return t.Implements(jsonMarshaler) || t.Implements(textMarshaler) || p.Implements(jsonMarshaler) || p.Implements(textMarshaler)
}

// isEmpty is encoding/json's omitempty test.
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}
