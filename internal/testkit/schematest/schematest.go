// Package schematest validates documents against the JSON Schemas in docs/
// in tests, so that every profile and report seedance writes is checked
// against the schema users read.
package schematest

import (
	"bytes"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

var (
	mu       sync.Mutex
	compiled = map[string]*jsonschema.Schema{}
)

// DocsDir is the repository's docs/ directory.
func DocsDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "docs")
}

// Validate checks doc against docs/<schema> and fails the test if it does
// not conform.
func Validate(t testing.TB, schema string, doc []byte) {
	t.Helper()
	mu.Lock()
	s, ok := compiled[schema]
	if !ok {
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		var err error
		s, err = c.Compile(filepath.Join(DocsDir(), schema))
		if err != nil {
			mu.Unlock()
			t.Fatalf("compile %s: %v", schema, err)
		}
		compiled[schema] = s
	}
	mu.Unlock()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatalf("parse document: %v", err)
	}
	if err := s.Validate(inst); err != nil {
		t.Fatalf("document does not conform to %s: %v", schema, err)
	}
}
