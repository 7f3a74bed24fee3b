package ledger

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/seedance/seedance/analyze"
)

// maxBaselineBytes bounds a baseline report read whole.
const maxBaselineBytes = 1 << 30

// ReadBaseline reads a baseline to compare a window with (Query.Baseline)
// from a report's JSON: a ledger report's (all four figures), or an
// analyze report's (the idle cost and ratio; it has no jobs, so energy per
// job and training utilization are null).
func ReadBaseline(r io.Reader) (*Report, error) {
	var doc struct {
		SchemaVersion string  `json:"schema_version"`
		Window        Window  `json:"window"`
		Summary       Summary `json:"summary"`
		Jobs          *Jobs   `json:"jobs"`
	}
	lr := &io.LimitedReader{R: r, N: maxBaselineBytes + 1}
	if err := json.NewDecoder(lr).Decode(&doc); err != nil {
		if lr.N <= 0 {
			return nil, fmt.Errorf("more than %d MiB: not a report", maxBaselineBytes>>20)
		}
		var se *json.SyntaxError
		if errors.As(err, &se) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("not a JSON report (-f json): %v", err)
		}
		return nil, fmt.Errorf("not a report: %v", err)
	}
	switch doc.SchemaVersion {
	case ReportSchema, analyze.ReportSchema:
	default:
		return nil, fmt.Errorf("schema %q is neither a ledger report's (%s) nor analyze's (%s)", doc.SchemaVersion, ReportSchema, analyze.ReportSchema)
	}
	return &Report{SchemaVersion: doc.SchemaVersion, Window: doc.Window, Summary: doc.Summary, Jobs: doc.Jobs}, nil
}
