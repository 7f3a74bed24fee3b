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

// Baseline is what a delta is taken from: a JSON report's summary, and
// its unit figures (docs/units.md), by unit and field (null: nil).
type Baseline struct {
	Summary analyze.Summary
	Units   map[string]map[string]*float64
}

// ReadBaseline reads the summary and the unit figures of a JSON report
// written earlier (--baseline): the figures a delta is taken from.
func ReadBaseline(r io.Reader, name string) (*Baseline, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxBaselineBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read baseline %s: %w", name, err)
	}
	if len(data) > maxBaselineBytes {
		return nil, fmt.Errorf("read baseline %s: %w: larger than %d MiB", name, ErrInvalidBaseline, maxBaselineBytes>>20)
	}
	var doc struct {
		SchemaVersion string                         `json:"schema_version"`
		Summary       analyze.Summary                `json:"summary"`
		Units         map[string]map[string]*float64 `json:"units"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("read baseline %s: %w: not a JSON report (%v)", name, ErrInvalidBaseline, table.Flatten(err.Error()))
	}
	if doc.SchemaVersion != analyze.ReportSchema {
		return nil, fmt.Errorf("read baseline %s: %w: schema_version %q, want %q (write it with seedance analyze --format json)", name, ErrInvalidBaseline, doc.SchemaVersion, analyze.ReportSchema)
	}
	return &Baseline{Summary: doc.Summary, Units: doc.Units}, nil
}

// SetBaseline sets r.Delta to current − baseline for every summary field
// (docs/analysis.md), a null on either side having no delta, and
// r.UnitsDelta for every unit figure, null where either side is
// (docs/units.md).
func (r *Result) SetBaseline(base *Baseline) {
	r.setUnitsDelta(base.Units)
	r.Delta = map[string]float64{}
	old := analyze.SummaryNumbers(base.Summary)
	for name, a := range analyze.SummaryNumbers(r.Summary) {
		if b, ok := old[name]; ok {
			r.Delta[name] = analyze.Sig(a - b)
		}
	}
}

// setUnitsDelta sets r.UnitsDelta: for each unit of the report, each of
// its numbers less the baseline's, null where either is null or the
// baseline has no such unit (a gate over it fails, as over any null).
func (r *Result) setUnitsDelta(base map[string]map[string]*float64) {
	if len(r.Units) == 0 {
		return
	}
	r.UnitsDelta = map[string]map[string]*float64{}
	for unit, f := range r.Units {
		b, err := json.Marshal(f)
		if err != nil {
			continue
		}
		var cur map[string]*float64
		if json.Unmarshal(b, &cur) != nil {
			continue
		}
		d := map[string]*float64{}
		for field, v := range cur {
			d[field] = nil
			if old := base[unit][field]; v != nil && old != nil {
				x := analyze.Sig(*v - *old)
				d[field] = &x
			}
		}
		r.UnitsDelta[unit] = d
	}
}
