package render

import (
	"io"

	"github.com/seedance/seedance/report"

	"github.com/seedance/seedance/internal/yamlout"
)

// YAML writes the JSON report as YAML, keys in the same order.
func YAML(w io.Writer, r *report.Result, _ Options) error { return yamlout.Write(w, r) }

// JSON writes the report as indented JSON (docs/report-v1.schema.json).
func JSON(w io.Writer, r *report.Result, _ Options) error {
	b, err := r.MarshalJSON() // compact, HTML escaped: what json.Marshal would copy
	if err != nil {
		return err
	}
	return writeIndented(w, b)
}
