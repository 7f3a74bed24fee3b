package render

import (
	"encoding/json"
	"io"

	"github.com/seedance/seedance/analyze"
)

// JSON writes the report as indented JSON (docs/report-v1.schema.json).
func JSON(w io.Writer, r *analyze.Report, _ Options) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
