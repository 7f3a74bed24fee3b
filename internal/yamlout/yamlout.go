// Package yamlout writes a JSON document as YAML in block style, keeping
// its keys in the JSON's order: seedance's reports, plans and settings for
// people who read kubectl's -o yaml.
package yamlout

import (
	"encoding/json"
	"fmt"
	"io"

	"gopkg.in/yaml.v3"
)

// Write encodes v as JSON, then writes that document as YAML.
func Write(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return FromJSON(w, b)
}

// FromJSON writes a JSON document as YAML. JSON is YAML, so the document
// is parsed as YAML into nodes, which keep the order of its keys, and
// written back in block style; strings that look like other YAML types
// stay quoted.
func FromJSON(w io.Writer, doc []byte) error {
	var n yaml.Node
	if err := yaml.Unmarshal(doc, &n); err != nil {
		return fmt.Errorf("yaml: %w", err)
	}
	block(&n)
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(&n); err != nil {
		return fmt.Errorf("yaml: %w", err)
	}
	return enc.Close()
}

// block turns the flow style JSON parses into block style, but for empty
// collections ([] and {}), which block style cannot write.
func block(n *yaml.Node) {
	if len(n.Content) > 0 {
		n.Style &^= yaml.FlowStyle
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		n.Style = 0 // plain where YAML reads it back as the same string, quoted where not
	}
	for _, c := range n.Content {
		block(c)
	}
}
