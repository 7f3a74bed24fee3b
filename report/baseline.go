package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/internal/table"
)

// ErrInvalidBaseline marks a --baseline file that is not a JSON report.
var ErrInvalidBaseline = errors.New("invalid baseline")

// maxBaselineBytes bounds a --baseline file: a JSON report of 10,000
// nodes is tens of megabytes.
const maxBaselineBytes = 1 << 30

// ReadBaseline reads the summary of a JSON report written earlier
// (--baseline): the figures a delta is taken from.
func ReadBaseline(r io.Reader, name string) (*analyze.Summary, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxBaselineBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read baseline %s: %w", name, err)
	}
	if len(data) > maxBaselineBytes {
		return nil, fmt.Errorf("read baseline %s: %w: larger than %d MiB", name, ErrInvalidBaseline, maxBaselineBytes>>20)
	}
	var doc struct {
		SchemaVersion string          `json:"schema_version"`
		Summary       analyze.Summary `json:"summary"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("read baseline %s: %w: not a JSON report (%v)", name, ErrInvalidBaseline, table.Flatten(err.Error()))
	}
	if doc.SchemaVersion != analyze.ReportSchema {
		return nil, fmt.Errorf("read baseline %s: %w: schema_version %q, want %q (write it with seedance analyze --format json)", name, ErrInvalidBaseline, doc.SchemaVersion, analyze.ReportSchema)
	}
	return &doc.Summary, nil
}

// SetBaseline sets r.Delta to current − baseline for every summary field
// (docs/analysis.md); a null on either side has no delta.
func (r *Result) SetBaseline(base *analyze.Summary) {
	r.Delta = map[string]float64{}
	old := analyze.SummaryNumbers(*base)
	for name, a := range analyze.SummaryNumbers(r.Summary) {
		if b, ok := old[name]; ok {
			r.Delta[name] = analyze.Sig(a - b)
		}
	}
}
