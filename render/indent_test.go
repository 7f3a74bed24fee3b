package render

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteIndentedIsJSONIndent: the streaming indenter writes what
// json.Encoder with SetIndent writes, byte for byte, on every JSON report
// in testdata and on the edge cases (empty containers, escapes, nesting).
func TestWriteIndentedIsJSONIndent(t *testing.T) {
	docs := []string{`{}`, `[]`, `{"a":[],"b":{},"c":[{}],"d":"x\"}]{[,:\\","e":[1,2,[3]],"f":null}`, `"s"`, `1`, `[{"k":{"l":[]}}]`}
	files, _ := filepath.Glob("testdata/*.json")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
	}
	for _, d := range docs {
		var v any
		if err := json.Unmarshal([]byte(d), &v); err != nil {
			continue
		}
		compact, _ := json.Marshal(v)
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "  ")
		if err := enc.Encode(json.RawMessage(compact)); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := writeIndented(&got, compact); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%.60s…: indented otherwise:\n%.300s\nwant\n%.300s", d, got.String(), want.String())
		}
	}
	if len(files) == 0 {
		t.Log("no JSON in testdata: only the edge cases were compared")
	}
}

// FuzzWriteIndented: any JSON value, compacted, indents as json.Indent does.
func FuzzWriteIndented(f *testing.F) {
	f.Add([]byte(`{"a":[1,{"b":"c\\"d"}],"e":{}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var compact bytes.Buffer
		if json.Compact(&compact, data) != nil {
			return
		}
		var want bytes.Buffer
		if json.Indent(&want, compact.Bytes(), "", "  ") != nil {
			return
		}
		want.WriteByte('\n')
		var got bytes.Buffer
		if err := writeIndented(&got, compact.Bytes()); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("%q: %q, want %q", compact.Bytes(), got.Bytes(), want.Bytes())
		}
		// The same bytes in pieces of 1, 2 and 3 bytes: a string, an escape
		// or an empty list split between two writes indents the same.
		for n := 1; n <= 3; n++ {
			got.Reset()
			d := newIndenter(&got)
			for src := compact.Bytes(); len(src) > 0; src = src[min(n, len(src)):] {
				if _, err := d.Write(src[:min(n, len(src))]); err != nil {
					t.Fatal(err)
				}
			}
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Fatalf("%q in %d-byte pieces: %q, want %q", compact.Bytes(), n, got.Bytes(), want.Bytes())
			}
		}
	})
}

// writeIndented writes compact JSON to w indented (indenter).
func writeIndented(w io.Writer, src []byte) error {
	d := newIndenter(w)
	if _, err := d.Write(src); err != nil {
		return err
	}
	return d.Close()
}
