// Package policy evaluates policy rules over an analysis report
// (docs/rules.md): each rule names a condition over a node, a GPU, an
// attribution group or a pool, how long it must hold over the report's
// time line, and the suggestion its matches become. The built-in
// suggestions' conditions ship as default rules of the same names, which a
// user's rule can narrow, re-rank or turn off.
package policy

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/expr-lang/expr"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/internal/exprguard"
)

// Scopes a rule can be about.
const (
	OnNode  = "node"
	OnGPU   = "gpu"
	OnGroup = "group"
	OnPool  = "pool"
	OnQueue = "queue"
)

// Severities are the severities a rule may have, lowest first.
var Severities = []string{"info", "warning", "critical"}

// Rule is one rule as written in the config file's rules: list or a
// --rules file.
type Rule struct {
	Name     string  `mapstructure:"name" yaml:"name" json:"name"`
	Priority int     `mapstructure:"priority" yaml:"priority" json:"priority,omitempty"`
	On       string  `mapstructure:"on" yaml:"on" json:"on,omitempty"`
	When     string  `mapstructure:"when" yaml:"when" json:"when"`
	For      string  `mapstructure:"for" yaml:"for" json:"for,omitempty"`
	Severity string  `mapstructure:"severity" yaml:"severity" json:"severity,omitempty"`
	Suggest  Suggest `mapstructure:"suggest" yaml:"suggest" json:"suggest,omitempty"`
	// Enabled false turns a rule (a default one, say) off.
	Enabled *bool `mapstructure:"enabled" yaml:"enabled" json:"enabled,omitempty"`

	file string // where Load found it, for errors
	line int
}

// where says where a rule is: FILE:LINE when loaded from a file.
func (r Rule) where(i int, src string) string {
	if r.line > 0 {
		return fmt.Sprintf("%s:%d: rule %q", r.file, r.line, r.Name)
	}
	return fmt.Sprintf("rule %d (%q) in %s", i+1, r.Name, src)
}

// Suggest is what a match says: a text and an optional command, with
// {field} substitutions from the subject.
type Suggest struct {
	Text    string `mapstructure:"text" yaml:"text" json:"text,omitempty"`
	Command string `mapstructure:"command" yaml:"command" json:"command,omitempty"`
}

// Defaults are the built-in suggestions of one node or pool as rules: their
// names, scopes and severities. Their conditions are the analysis' own
// (the verdicts, docs/analysis.md; the fragmentation threshold), defined
// there once: a default rule has no when of its own. A user's rule of the
// same name may add a when (and for) that must hold too, re-rank it, or
// turn it off; seedance writes the text and command.
var Defaults = []Rule{
	{Name: "release-node", On: OnNode, Severity: "warning"},
	{Name: "schedule-node", On: OnNode, Severity: "info"},
	{Name: "rebind-pending", On: OnNode, Severity: "warning"},
	{Name: "fragmentation", On: OnPool, Severity: "warning"},
}

// builtin says whether a rule name is a built-in suggestion kind.
func builtin(name string) bool {
	return slices.ContainsFunc(Defaults, func(r Rule) bool { return r.Name == name })
}

// compiled is a rule ready to run.
type compiled struct {
	Rule
	prog    *exprguard.Program // nil for a built-in rule without a when
	forS    float64
	builtin bool
	off     bool // enabled: false
}

// Set is the rules in force: the defaults, with the user's rules replacing
// the defaults of their names, then the user's other rules.
type Set struct{ rules []compiled }

var validName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)

// placeholder is a {field} in a suggestion's text or command.
var placeholder = regexp.MustCompile(`\{([a-z_]+)\}`)

// Compile checks and compiles the user's rules over the defaults. where
// names their origin (a file, or the config file) for the errors, which
// say which rule (its position in the list and its name) and what is
// wrong, with the expression's line and column.
func Compile(user []Rule, where string) (*Set, error) {
	s := &Set{}
	seen := map[string]bool{}
	for i, r := range user {
		c, err := compile(r)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.where(i, where), err)
		}
		if seen[r.Name] {
			return nil, fmt.Errorf("%s: a second rule of that name", r.where(i, where))
		}
		seen[r.Name] = true
		s.rules = append(s.rules, c)
	}
	for _, d := range Defaults {
		if !seen[d.Name] {
			c, err := compile(d)
			if err != nil {
				return nil, fmt.Errorf("default rule %q: %w", d.Name, err)
			}
			s.rules = append(s.rules, c)
		}
	}
	return s, nil
}

func compile(r Rule) (compiled, error) {
	c := compiled{Rule: r, builtin: builtin(r.Name)}
	if !validName.MatchString(r.Name) {
		return c, fmt.Errorf("name must be 1–63 lowercase letters, digits, '.', '_' or '-', starting with a letter or digit")
	}
	if c.On == "" {
		c.On = OnNode
	}
	env, ok := envs[c.On]
	if !ok {
		return c, fmt.Errorf("on: %q is not a scope (choose node, gpu, group, pool or queue)", r.On)
	}
	if c.builtin {
		def := Defaults[slices.IndexFunc(Defaults, func(d Rule) bool { return d.Name == r.Name })]
		if c.On != def.On {
			return c, fmt.Errorf("on: the built-in %s rule is about a %s", r.Name, def.On)
		}
		if r.Suggest != (Suggest{}) {
			return c, fmt.Errorf("suggest: the built-in %s suggestion's text and command are seedance's (a rule of another name adds a suggestion of its own)", r.Name)
		}
	}
	if c.Severity == "" {
		c.Severity = "warning"
	}
	if !slices.Contains(Severities, c.Severity) {
		return c, fmt.Errorf("severity: %q (choose %s)", r.Severity, strings.Join(Severities, ", "))
	}
	if c.Enabled != nil && !*c.Enabled {
		c.off = true
		return c, nil // nothing else to check
	}
	if strings.TrimSpace(r.When) == "" {
		switch {
		case !c.builtin:
			return c, fmt.Errorf("when: an expression is required")
		case r.For != "":
			return c, fmt.Errorf("for: needs a when, the condition that must hold for that long")
		}
		return c, nil // the built-in suggestion's condition alone
	}
	if r.For != "" {
		d, err := time.ParseDuration(r.For)
		if err != nil || d < 0 {
			return c, fmt.Errorf("for: %q is not a duration (e.g. 30m)", r.For)
		}
		c.forS = d.Seconds()
	}
	prog, err := exprguard.Compile(r.When, expr.Env(env), expr.AsBool())
	if err != nil {
		return c, fmt.Errorf("when: %v", err)
	}
	c.prog = prog
	if !c.builtin && strings.TrimSpace(r.Suggest.Text) == "" {
		return c, fmt.Errorf("suggest.text: required")
	}
	if err := safeCommand(r.Suggest.Command); err != nil {
		return c, fmt.Errorf("suggest.command: %v", err)
	}
	for _, t := range []struct{ what, s string }{{"suggest.text", r.Suggest.Text}, {"suggest.command", r.Suggest.Command}} {
		for _, m := range placeholder.FindAllStringSubmatch(t.s, -1) {
			if _, ok := env[m[1]]; !ok && m[1] != "held" {
				return c, fmt.Errorf("%s: {%s} is not a field of a %s (docs/rules.md)", t.what, m[1], c.On)
			}
		}
	}
	return c, nil
}

// joinLines puts a multi-line message (expr's, with the expression and a
// caret under the position; yaml's list of errors) on one line.
func joinLines(s string) string {
	var parts []string
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "|"))
		if l != "" {
			parts = append(parts, strings.Join(strings.Fields(l), " "))
		}
	}
	return strings.Join(parts, " | ")
}

// envs are the fields of each scope, with values of their types, for
// compiling: a name that is not one is an error at load time.
var envs = map[string]map[string]any{
	OnNode: {
		"name": "", "gpus": 0.0, "models": []any{}, "pool": "", "verdict": "", "avg_gpu_util_pct": 0.0, "observed_s": 0.0, "idle_share": 0.0,
		"idle_now": false, "gpu_hours": 0.0, "idle_gpu_hours": 0.0, "idle_cost_usd": 0.0, "energy_kwh": 0.0, "price_usd_per_hour": 0.0,
		"pending_workloads": 0.0, "util_pct": 0.0, "idle": false,
	},
	OnGPU: {
		"node": "", "index": 0.0, "uuid": "", "model": "", "parent_uuid": "", "avg_gpu_util_pct": 0.0, "observed_s": 0.0, "idle_s": 0.0,
		"energy_kwh": 0.0, "mem_total_gib": 0.0, "idle_mem_gib": 0.0,
	},
	OnGroup: {
		"name": "", "key": []any{}, "workloads": 0.0, "held_gpu_hours": 0.0, "used_gpu_hours": 0.0, "idle_held_gpu_hours": 0.0,
		"waste_cost_usd": 0.0, "efficiency": 0.0,
	},
	OnPool: {
		"model": "", "nodes": 0.0, "gpus": 0.0, "free_gpus": 0.0, "stranded_gpus": 0.0, "ratio": 0.0, "above_threshold": false,
		"fgd_unusable_gpus": 0.0, "fgd_ratio": 0.0, "stranded_after_plan": 0.0,
	},
	OnQueue: queueEnv(),
}

// queueEnv is the queue scope's fields: its name and its figures', as
// queueSubjects makes them of analyze.QueueFigures (every number a
// float64; a null figure's a number when set), so that a figure added to
// the report is a field of the rules too.
func queueEnv() map[string]any {
	env := fields(analyze.QueueFigures{})
	for k, v := range env {
		if v == nil {
			env[k] = 0.0
		}
	}
	env["name"], env["kind"], env["cohort"] = "", "", "" // kind and cohort are omitted when empty
	return env
}

// Fields lists a scope's fields, sorted (for the docs' test).
func Fields(on string) []string {
	var out []string
	for k := range envs[on] {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
