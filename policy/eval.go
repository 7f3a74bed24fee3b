package policy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/seedance/seedance/internal/exprguard"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/internal/shell"
	"github.com/seedance/seedance/recommend"
	"github.com/seedance/seedance/report"
)

// Input is what the rules are evaluated over.
type Input struct {
	// Result is the report the rules read and add to: its suggestions,
	// warnings and RuleMatches.
	Result  *report.Result
	Dialect string // of commands: kubectl, slurm or none
	// Limits bound each evaluation of a condition, Total all of them in
	// one Apply (0: DefaultTotal); a rule over either is reported and not
	// evaluated again in that run.
	Limits exprguard.Limits
	Total  time.Duration
}

// DefaultTotal bounds the evaluation of all rules in one run.
const DefaultTotal = 30 * time.Second

// budget is one Apply's: the limits of an evaluation, the run's deadline,
// and the rules that went over theirs.
type budget struct {
	ctx      context.Context
	limits   exprguard.Limits
	total    time.Duration
	deadline time.Time
	over     map[string]string
	errs     map[string]string
}

// subject is one node, GPU, group or pool, with its fields; a node has a
// time line of slices, over which `for` is measured. Without one, a
// condition that holds holds for span.
type subject struct {
	id, node string // node: the node a command acts on, "" for none
	env      map[string]any
	mk       func() map[string]any // makes env when it is nil
	slices   []slice
	span     float64
}

type slice struct {
	length float64
	util   any // float64, or nil where the node had no sample
	idle   bool
}

// NeedsGPUFigures says whether a rule is about GPUs, so that the analysis
// keeps each GPU's figures (analyze.Params.GPUFigures).
func (s *Set) NeedsGPUFigures() bool {
	return slices.ContainsFunc(s.rules, func(c compiled) bool { return c.On == OnGPU && !c.off })
}

// Apply evaluates the rules over the report. A built-in suggestion whose
// rule does not hold for its node (or pool), or is turned off, is dropped;
// the others take their rule's severity and priority. Every other rule's
// matches are added as suggestions of kind rule:<name>, the highest
// priority first. Result.RuleMatches counts each rule's matches.
//
// Each evaluation is bounded by in.Limits and all of them by in.Total
// (docs/rules.md, Budgets); the end of ctx stops them and is returned.
func (s *Set) Apply(ctx context.Context, in Input) error {
	r, matches := in.Result.Report, map[string]int{}
	in.Result.RuleMatches = matches
	subjects := map[string][]subject{OnNode: nodeSubjects(r), OnGPU: gpuSubjects(r), OnGroup: groupSubjects(r), OnPool: poolSubjects(in.Result.Fragmentation, r.Window.CoveredS),
		OnQueue: queueSubjects(r)}
	byName := map[string]*compiled{}
	for i := range s.rules {
		byName[s.rules[i].Name] = &s.rules[i]
		matches[s.rules[i].Name] = 0
	}
	if in.Limits == (exprguard.Limits{}) {
		in.Limits = exprguard.DefaultLimits
	}
	if in.Total <= 0 {
		in.Total = DefaultTotal
	}
	b := &budget{ctx: ctx, limits: in.Limits, total: in.Total, deadline: time.Now().Add(in.Total), over: map[string]string{}, errs: map[string]string{}}
	res := in.Result
	kept := res.Suggestions[:0]
	for _, sg := range res.Suggestions {
		c := byName[sg.Kind]
		if c == nil || !c.builtin {
			kept = append(kept, sg)
			continue
		}
		if c.off {
			continue
		}
		subj, ok := findSubject(subjects[c.On], sg)
		subj = subj.ready()
		if ok && c.prog != nil {
			_, holds := c.match(subj, b)
			if err := ctx.Err(); err != nil {
				return err
			}
			if !holds {
				continue
			}
		}
		sg.Severity, sg.Priority = c.Severity, c.Priority
		matches[c.Name]++
		kept = append(kept, sg)
	}
	res.Suggestions = kept
	var added []analyze.Suggestion
	matchedGPUs := map[string]bool{}
	for _, c := range s.ordered() {
		for _, subj := range subjects[c.On] {
			subj = subj.ready()
			held, ok := c.match(subj, b)
			if err := ctx.Err(); err != nil {
				return err
			}
			if !ok {
				continue
			}
			matches[c.Name]++
			if c.On == OnGPU {
				matchedGPUs[subj.id] = true
			}
			added = append(added, c.suggestion(subj, held, in.Dialect))
		}
	}
	res.Suggestions = append(res.Suggestions, added...)
	keepMatchedGPUs(res, matchedGPUs)
	for _, n := range slices.Sorted(maps.Keys(b.over)) {
		res.Warnings = append(res.Warnings, fmt.Sprintf("rule %s: %s; it was not evaluated further in this run (docs/rules.md, Budgets)", n, b.over[n]))
	}
	for _, n := range slices.Sorted(maps.Keys(b.errs)) {
		res.Warnings = append(res.Warnings, fmt.Sprintf("rule %s: %s (a figure that was not measured is nil: write x != nil && x < 40, or (x ?? 0) < 40)", n, b.errs[n]))
	}
	return nil
}

// ordered is the user's own rules that are on, the highest priority first
// (ties in the order written).
func (s *Set) ordered() []*compiled {
	var out []*compiled
	for i := range s.rules {
		if c := &s.rules[i]; !c.builtin && !c.off {
			out = append(out, c)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Priority > out[j].Priority })
	return out
}

// findSubject is a built-in suggestion's node, or for a fragmentation
// suggestion the pool with a stranded GPU on its node.
func findSubject(subjects []subject, sg analyze.Suggestion) (subject, bool) {
	for _, s := range subjects {
		if s.id == sg.Node {
			return s, true
		}
		if stranded, ok := s.env["stranded_on"].([]string); ok && slices.Contains(stranded, sg.Node) {
			return s, true
		}
	}
	return subject{}, false
}

// match evaluates the rule on a subject: over its time line, the longest
// run of consecutive slices where the condition holds must last at least
// `for` (and be more than nothing); without a time line, a condition that
// holds lasts the subject's span. It returns that longest run. An
// evaluation error (a null figure compared) counts as not holding, and the
// rule's first one is kept for a warning.
func (c *compiled) match(s subject, bu *budget) (float64, bool) {
	eval := func(env map[string]any) bool {
		if _, over := bu.over[c.Name]; over || bu.ctx.Err() != nil {
			return false
		}
		l := bu.limits
		if left := time.Until(bu.deadline); left < l.Time {
			l.Time = max(left, 0)
		}
		v, err := c.prog.Run(bu.ctx, env, l)
		switch {
		case err == nil:
		case errors.Is(err, exprguard.ErrBudget):
			bu.over[c.Name] = fmt.Sprintf("%s: %v", s.id, err)
			if time.Now().After(bu.deadline) {
				bu.over[c.Name] = fmt.Sprintf("%s: over the run's budget (all rules together ran longer than %s)", s.id, bu.total)
			}
			return false
		case bu.ctx.Err() != nil:
			return false
		default:
			if _, seen := bu.errs[c.Name]; !seen {
				bu.errs[c.Name] = fmt.Sprintf("%s: %s", s.id, joinLines(err.Error()))
			}
			return false
		}
		b, _ := v.(bool)
		return b
	}
	best := 0.0
	if s.slices == nil {
		if eval(s.env) {
			best = s.span
		}
	} else {
		run := 0.0
		for _, sl := range s.slices {
			s.env["util_pct"], s.env["idle"] = sl.util, sl.idle
			if eval(s.env) {
				run += sl.length
				best = math.Max(best, run)
			} else {
				run = 0
			}
		}
	}
	return best, best > 0 && best >= c.forS-1e-6
}

// suggestion is a match of a user's rule.
func (c *compiled) suggestion(s subject, held float64, dialect string) analyze.Suggestion {
	text := expand(c.Suggest.Text, s.env, held, false)
	sg := analyze.Suggestion{Kind: "rule:" + c.Name, Node: s.node, Severity: c.Severity, Priority: c.Priority}
	unsafe := notInert(c.Suggest.Command, s.env, held)
	switch {
	case c.Suggest.Command == "" || dialect == recommend.DialectNone:
	case s.node != "" && !shell.ValidNodeName(dialect, s.node):
		text += fmt.Sprintf(" (no command: %q is not a valid %s node name)", s.node, dialect)
	case unsafe != "":
		text += " (no command: " + unsafe + ")"
	default:
		sg.Command = expand(c.Suggest.Command, s.env, held, true)
	}
	sg.Text = text
	return sg
}

// expand replaces each {field} by the subject's value, shell-quoted in a
// command; {held} is how long the condition held.
func expand(tmpl string, env map[string]any, held float64, quote bool) string {
	return placeholder.ReplaceAllStringFunc(tmpl, func(m string) string {
		v := fieldText(m[1:len(m)-1], env, held)
		if quote {
			return shell.Quote(v)
		}
		return v
	})
}

// notInert names the first {field} of a command template whose value is
// not inert text (shell.Inert), or is "". Quoting holds for one parse, and
// no list of the tools that parse their arguments again (python -c,
// flock -c, script -c…) is whole: a value that could run or split gets no
// command at all (docs/rules.md, Commands).
func notInert(tmpl string, env map[string]any, held float64) string {
	for _, m := range placeholder.FindAllString(tmpl, -1) {
		if v := fieldText(m[1:len(m)-1], env, held); !shell.Inert(v) {
			return fmt.Sprintf("the value of %s, %q, is not plain text (letters, digits, @%%_+=:,./-) that a command can carry through every parse", m, v)
		}
	}
	return ""
}

// fieldText is a {field}'s value as text: {held} is how long the
// condition held.
func fieldText(name string, env map[string]any, held float64) string {
	if name == "held" {
		return analyze.FormatDuration(time.Duration(held * float64(time.Second)))
	}
	return valueText(env[name])
}

func valueText(v any) string {
	switch x := v.(type) {
	case nil:
		return "n/a"
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case string:
		return x
	case []any:
		parts := make([]string, len(x))
		for i, p := range x {
			parts[i] = valueText(p)
		}
		return strings.Join(parts, ",")
	}
	return fmt.Sprint(v)
}

// fields is a value's JSON object as the rules see it.
func fields(v any, drop ...string) map[string]any {
	b, _ := json.Marshal(v)
	var m map[string]any
	_ = json.Unmarshal(b, &m) // a report struct: always an object
	for _, d := range drop {
		delete(m, d)
	}
	return m
}

// nodeSubjects are the report's nodes, each with its time line: the
// report's slices of the window, with the node's mean utilization in each
// and whether the slice lies inside one of its idle intervals.
func nodeSubjects(r *analyze.Report) []subject {
	var out []subject
	b := r.Timeline.BucketS
	for _, n := range r.Nodes {
		s := subject{id: n.Name, node: n.Name, env: fields(n, "util_timeline", "gpu_util_timelines", "idle_intervals"), span: n.ObservedS}
		for k, u := range n.UtilSparkline {
			lo := float64(k) * b
			hi := math.Min(lo+b, r.Window.DurationS)
			if hi <= lo {
				break
			}
			sl := slice{length: hi - lo}
			if u != nil {
				sl.util = *u
			}
			inside := 0.0
			for _, iv := range n.IdleIntervals {
				inside += math.Max(0, math.Min(hi, iv.EndS)-math.Max(lo, iv.StartS))
			}
			sl.idle = inside >= sl.length-1e-6
			s.slices = append(s.slices, sl)
		}
		out = append(out, s)
	}
	return out
}

// gpuSubjects are the report's GPUs. A fleet has tens of thousands: each
// one's fields are made when a rule reads them and dropped after
// (subject.ready), not held all at once.
func gpuSubjects(r *analyze.Report) []subject {
	var out []subject
	for i := range r.GPUFigures {
		g := &r.GPUFigures[i]
		out = append(out, subject{id: gpuID(g), node: g.Node, span: g.ObservedS, mk: func() map[string]any { return fields(g) }})
	}
	return out
}

func gpuID(g *analyze.GPUReport) string { return g.Node + "/" + strconv.Itoa(g.Index) }

// ready is the subject with its fields made.
func (s subject) ready() subject {
	if s.env == nil && s.mk != nil {
		s.env = s.mk()
	}
	return s
}

// keepMatchedGPUs leaves in the report the figures of the GPUs a rule
// matched: the others were read by the rules, and say nothing more.
func keepMatchedGPUs(res *report.Result, matched map[string]bool) {
	var kept []analyze.GPUReport // a new slice: the subjects point into the old one
	for i := range res.GPUFigures {
		if matched[gpuID(&res.GPUFigures[i])] {
			kept = append(kept, res.GPUFigures[i])
		}
	}
	res.GPUFigures = kept
}

func groupSubjects(r *analyze.Report) []subject {
	if r.Attribution == nil {
		return nil
	}
	var out []subject
	for _, g := range r.Attribution.Groups {
		env := fields(g)
		name := strings.Join(g.Key, "|")
		env["name"] = name
		out = append(out, subject{id: name, env: env, span: r.Window.CoveredS})
	}
	return out
}

// queueSubjects are the report's queues (--report queues or all).
func queueSubjects(r *analyze.Report) []subject {
	var out []subject
	for _, name := range slices.Sorted(maps.Keys(r.Queues)) {
		env := fields(r.Queues[name])
		env["name"] = name
		out = append(out, subject{id: name, env: env, span: r.Window.CoveredS})
	}
	return out
}

func poolSubjects(f *recommend.Fragmentation, span float64) []subject {
	if f == nil {
		return nil
	}
	var out []subject
	for _, p := range f.Pools {
		env := fields(p, "shapes", "stranded_on", "free_per_node", "after_plan")
		env["stranded_after_plan"] = nil
		if p.AfterPlan != nil {
			env["stranded_after_plan"] = float64(p.AfterPlan.StrandedGPUs)
		}
		var on []string
		for _, s := range p.StrandedOn {
			on = append(on, s.Node)
		}
		env["stranded_on"] = on // for finding the pool of a suggestion; not a documented field
		out = append(out, subject{id: p.Model, env: env, span: span})
	}
	return out
}
