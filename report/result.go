// Package report owns the combined report of a run: what the analysis
// computed (analyze.Report), the migration plan and the fragmentation
// report made from it (recommend), the policy rules' matches, the change
// from a baseline, and the CI gates evaluated over all of it. Its JSON
// document is docs/report-v1.schema.json; the renderers (render) write a
// Result in every format.
package report

import (
	"bytes"
	"slices"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/ledger/history"
	"github.com/seedance/seedance/recommend"
)

// Result is the combined report. The analysis' fields are promoted, so
// that r.Summary is the analysis' summary; the suggestions and warnings
// are the Result's own, the analysis' to start with (New), then what the
// later stages add: the plan's, the rules'. The analysis is never written
// to after it is made.
type Result struct {
	*analyze.Report
	// Suggestions and Warnings are the analysis', with what the later
	// stages add.
	Suggestions []analyze.Suggestion
	Warnings    []string
	// Migration is the plan made from the analysis (--report
	// migration|all), nil when none was asked for or none could be made.
	Migration *recommend.Plan
	// Fragmentation is the fragmentation report (--report
	// fragmentation|all).
	Fragmentation *recommend.Fragmentation
	// RuleMatches counts each policy rule's matches (docs/rules.md), by
	// rule name, every rule evaluated listed; nil without rules.
	RuleMatches map[string]int
	// Delta is current − baseline for every summary field (SetBaseline);
	// nil without a baseline.
	Delta map[string]float64
	// UnitsDelta is current − baseline for every unit figure, by unit and
	// field; it is written as the delta's "units".
	UnitsDelta map[string]map[string]*float64
	// Gates are the CI gates' outcomes (Gates).
	Gates []Gate
	// History is the ledger's month to date, when the run counted its data
	// into a ledger (--ledger) and writes HTML: its pictures of waste by
	// day. Not in the JSON report (the ledger's own report has it).
	History *history.Report
}

// New is the combined report of an analysis, before the later stages.
func New(r *analyze.Report) *Result {
	return &Result{Report: r, Suggestions: slices.Clone(r.Suggestions), Warnings: slices.Clone(r.Warnings)}
}

// Gate is one CI gate's outcome.
type Gate struct {
	Expr   string `json:"expr"`
	Passed bool   `json:"passed"`
	// Value is what the left side of a comparison evaluated to, so that a
	// failure says by how much (absent for other expressions).
	Value any    `json:"value,omitempty"`
	Error string `json:"error,omitempty"`
	// Basis says what an idle figure rests on when not every node was
	// observed for a full idle window.
	Basis string `json:"basis,omitempty"`
}

// document is the JSON report, its sections in the schema's order: the
// analysis', with the rules' matches and the delta before the nodes, the
// gates after the warnings, and the plan's sections last.
// TestDocumentHasEveryField keeps it in step with analyze.Report.
type document struct {
	SchemaVersion  string                          `json:"schema_version"`
	Window         analyze.Window                  `json:"window"`
	Params         analyze.ReportParams            `json:"params"`
	Inputs         []analyze.Input                 `json:"inputs"`
	Summary        analyze.Summary                 `json:"summary"`
	Timeline       analyze.Timeline                `json:"timeline"`
	Scaling        *analyze.Scaling                `json:"scaling,omitempty"`
	Attribution    *analyze.Attribution            `json:"attribution,omitempty"`
	Units          map[string]analyze.UnitFigures  `json:"units,omitempty"`
	UnitGroups     []analyze.UnitGroup             `json:"unit_groups,omitempty"`
	UnitModels     []analyze.UnitGroup             `json:"unit_models,omitempty"`
	UnitWorkloads  []analyze.UnitWorkload          `json:"unit_workloads,omitempty"`
	Queues         map[string]analyze.QueueFigures `json:"queues,omitempty"`
	Cohorts        map[string]analyze.QueueFigures `json:"cohorts,omitempty"`
	Hoarding       []analyze.Hoarding              `json:"hoarding,omitempty"`
	QuotaWhatIf    []analyze.QuotaChange           `json:"quota_what_if,omitempty"`
	StrandedMemory []analyze.StrandedGPU           `json:"stranded_memory,omitempty"`
	GPUFigures     []analyze.GPUReport             `json:"gpu_figures,omitempty"`
	RuleMatches    map[string]int                  `json:"rule_matches,omitempty"`
	Delta          any                             `json:"delta,omitempty"`
	Nodes          []analyze.NodeReport            `json:"nodes"`
	Suggestions    []analyze.Suggestion            `json:"suggestions"`
	Warnings       []string                        `json:"warnings,omitempty"`
	PendingUnknown string                          `json:"pending_unknown,omitempty"`
	Gates          []Gate                          `json:"gates,omitempty"`
	Migration      *recommend.Plan                 `json:"migration,omitempty"`
	Fragmentation  *recommend.Fragmentation        `json:"fragmentation,omitempty"`
}

// MarshalJSON writes the JSON report (WriteJSON, into one buffer).
func (r *Result) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	err := r.WriteJSON(&b)
	return b.Bytes(), err
}

// document is the report as the JSON document lays it out.
func (r *Result) document() document {
	a := r.Report
	return document{
		SchemaVersion: a.SchemaVersion, Window: a.Window, Params: a.Params, Inputs: a.Inputs, Summary: a.Summary,
		Timeline: a.Timeline, Scaling: a.Scaling, Attribution: a.Attribution, StrandedMemory: a.StrandedMemory,
		Units: a.Units, UnitGroups: a.UnitGroups, UnitModels: a.UnitModels, UnitWorkloads: a.UnitWorkloads,
		Queues: a.Queues, Cohorts: a.Cohorts, Hoarding: a.Hoarding, QuotaWhatIf: a.QuotaWhatIf,
		GPUFigures: a.GPUFigures, RuleMatches: r.RuleMatches, Delta: r.delta(), Nodes: a.Nodes, Suggestions: r.Suggestions,
		Warnings: r.Warnings, PendingUnknown: a.PendingUnknown, Gates: r.Gates, Migration: r.Migration, Fragmentation: r.Fragmentation,
	}
}

// Add adds a later stage's suggestions, or, when the stage failed, a
// warning that says what is missing and why ("no migration plan: …").
func (r *Result) Add(missing string, sugs []analyze.Suggestion, err error) {
	if err != nil {
		r.Warnings = append(r.Warnings, missing+": "+err.Error())
		return
	}
	r.Suggestions = append(r.Suggestions, sugs...)
}

// delta is the JSON report's delta: the summary's, with the unit
// figures' as "units"; nil without a baseline.
func (r *Result) delta() any {
	if r.Delta == nil {
		return nil
	}
	if r.UnitsDelta == nil {
		return r.Delta
	}
	out := make(map[string]any, len(r.Delta)+1)
	for k, v := range r.Delta {
		out[k] = v
	}
	out["units"] = r.UnitsDelta
	return out
}
