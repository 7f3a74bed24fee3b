package render

import (
	"encoding/json"
	"io"
)

// JSON writes the report as indented JSON (docs/report-v1.schema.json).
func JSON(w io.Writer, r *Result, _ Options) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
