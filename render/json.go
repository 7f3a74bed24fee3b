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
	d := newIndenter(w)
	if err := r.WriteJSON(d); err != nil {
		return err
	}
	return d.Close()
}
