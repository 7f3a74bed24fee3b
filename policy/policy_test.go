package policy

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/recommend"
	"github.com/seedance/seedance/report"
)

func f(v float64) *float64 { return &v }

// report is ten one-minute slices of two nodes: a, busy except a 4-minute
// dip to 5 % (minutes 2–5, an idle interval), and b at 5 % throughout (idle
// now) with a null in the last slice.
func sample() *report.Result {
	tl := func(vs ...float64) []*float64 {
		out := make([]*float64, len(vs))
		for i, v := range vs {
			if v >= 0 {
				out[i] = f(v)
			}
		}
		return out
	}
	return report.New(&analyze.Report{
		Window:   analyze.Window{DurationS: 600, CoveredS: 600},
		Timeline: analyze.Timeline{BucketS: 60},
		Nodes: []analyze.NodeReport{
			{Name: "a", GPUs: 8, Pool: "rack-1", Verdict: "busy", ObservedS: 600, AvgGPUUtilPct: f(70), PriceUSDPerHour: 40,
				UtilSparkline: tl(90, 90, 5, 5, 5, 5, 90, 90, 90, 90), IdleIntervals: []analyze.Interval{{StartS: 120, EndS: 360}}},
			{Name: "b;rm -rf", GPUs: 8, Verdict: "idle", IdleNow: true, ObservedS: 600, AvgGPUUtilPct: nil, PriceUSDPerHour: 8,
				UtilSparkline: tl(5, 5, 5, 5, 5, 5, 5, 5, 5, -1), IdleIntervals: []analyze.Interval{{StartS: 0, EndS: 600}}},
		},
		Suggestions: []analyze.Suggestion{
			{Kind: "release-node", Node: "b;rm -rf", Text: "release b"},
			{Kind: "migrate", Node: "a", Text: "move"},
		},
	})
}

func mustCompile(t *testing.T, rules ...Rule) *Set {
	t.Helper()
	s, err := Compile(rules, "test")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestForOverTheTimeLine: a condition must hold for `for` consecutive
// time: a's dip lasts 4 minutes (it matches for 3m, not for 5m); b's low
// utilization lasts 9 minutes (its last slice has no sample).
func TestForOverTheTimeLine(t *testing.T) {
	for _, tt := range []struct {
		forS string
		want []string
	}{
		{"3m", []string{"a held 4m", "b;rm -rf held 9m"}},
		{"5m", []string{"b;rm -rf held 9m"}},
		{"9m", []string{"b;rm -rf held 9m"}},
		{"9m1s", nil},
		{"", []string{"a held 4m", "b;rm -rf held 9m"}},
	} {
		r := sample()
		if err := mustCompile(t, Rule{Name: "low", When: "util_pct < 10", For: tt.forS, Suggest: Suggest{Text: "{name} held {held}"}}).Apply(context.Background(), Input{Result: r, Dialect: "kubectl"}); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range r.Suggestions {
			if s.Kind == "rule:low" {
				got = append(got, s.Text)
			}
		}
		if strings.Join(got, "|") != strings.Join(tt.want, "|") || r.RuleMatches["low"] != len(tt.want) {
			t.Errorf("for %q: %q (%d matches), want %q", tt.forS, got, r.RuleMatches["low"], tt.want)
		}
	}
	// idle: the slice lies inside an idle interval.
	r := sample()
	if err := mustCompile(t, Rule{Name: "idle", When: "idle", For: "4m", Suggest: Suggest{Text: "{name}"}}).Apply(context.Background(), Input{Result: r}); err != nil {
		t.Fatal(err)
	}
	if r.RuleMatches["idle"] != 2 {
		t.Errorf("idle for 4m: %d matches", r.RuleMatches["idle"])
	}
}

// TestBuiltinRules: a user's rule of a built-in kind narrows its
// suggestions or turns them off, and gives them its severity and priority;
// other suggestions are untouched.
func TestBuiltinRules(t *testing.T) {
	r := sample()
	if err := mustCompile(t).Apply(context.Background(), Input{Result: r}); err != nil {
		t.Fatal(err)
	}
	if len(r.Suggestions) != 2 || r.Suggestions[0].Severity != "warning" || r.RuleMatches["release-node"] != 1 {
		t.Fatalf("defaults: %+v %v", r.Suggestions, r.RuleMatches)
	}
	r = sample()
	if err := mustCompile(t, Rule{Name: "release-node", When: "price_usd_per_hour > 10"}).Apply(context.Background(), Input{Result: r}); err != nil {
		t.Fatal(err)
	}
	if len(r.Suggestions) != 1 || r.Suggestions[0].Kind != "migrate" {
		t.Errorf("narrowed: %+v", r.Suggestions)
	}
	off := false
	r = sample()
	if err := mustCompile(t, Rule{Name: "release-node", Enabled: &off}).Apply(context.Background(), Input{Result: r}); err != nil {
		t.Fatal(err)
	}
	if len(r.Suggestions) != 1 || r.RuleMatches["release-node"] != 0 {
		t.Errorf("off: %+v", r.Suggestions)
	}
	r = sample()
	if err := mustCompile(t, Rule{Name: "release-node", When: "idle_now", For: "9m", Severity: "critical", Priority: 7}).Apply(context.Background(), Input{Result: r}); err != nil {
		t.Fatal(err)
	}
	if len(r.Suggestions) != 2 || r.Suggestions[0].Severity != "critical" || r.Suggestions[0].Priority != 7 {
		t.Errorf("re-ranked: %+v", r.Suggestions)
	}
	for pool, want := range map[string]int{"": 1, "rack-1": 0} { // by pool (#31: NodeReport.pool); b has none
		r = sample()
		if err := mustCompile(t, Rule{Name: "release-node", When: `pool == "` + pool + `"`}).Apply(context.Background(), Input{Result: r}); err != nil {
			t.Fatal(err)
		}
		if r.RuleMatches["release-node"] != want {
			t.Errorf("pool %q: %d matches, want %d", pool, r.RuleMatches["release-node"], want)
		}
	}
}

// TestCommandsAreSafe: substitutions in a command are shell-quoted, and a
// node name that is not valid in the dialect gets no command.
func TestCommandsAreSafe(t *testing.T) {
	rule := Rule{Name: "label", When: "verdict == 'busy' || verdict == 'idle'", Priority: 5, Severity: "info",
		Suggest: Suggest{Text: "{name}: {verdict}", Command: "kubectl label node {name} seedance.io/verdict={verdict}"}}
	r := sample()
	if err := mustCompile(t, rule).Apply(context.Background(), Input{Result: r, Dialect: "kubectl"}); err != nil {
		t.Fatal(err)
	}
	var cmds []string
	for _, s := range r.Suggestions[2:] {
		cmds = append(cmds, s.Command+"|"+s.Text)
	}
	want := []string{"kubectl label node a seedance.io/verdict=busy|a: busy", `|b;rm -rf: idle (no command: "b;rm -rf" is not a valid kubectl node name)`}
	if strings.Join(cmds, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(cmds, "\n"), strings.Join(want, "\n"))
	}
	r = sample()
	if err := mustCompile(t, rule).Apply(context.Background(), Input{Result: r, Dialect: recommend.DialectNone}); err != nil {
		t.Fatal(err)
	}
	if r.Suggestions[2].Command != "" {
		t.Errorf("dialect none: %q", r.Suggestions[2].Command)
	}
	// A value from the input that is not plain text gets no command, and
	// the text says which field and why.
	r = sample()
	frag := &recommend.Fragmentation{Pools: []recommend.FragPool{{Model: "H100 $(reboot)'x"}, {Model: "H100-80GB"}}}
	if err := mustCompile(t, Rule{Name: "p", On: "pool", When: "true", Suggest: Suggest{Text: "{model}", Command: "echo {model}"}}).Apply(context.Background(), Input{Result: withFrag(r, frag), Dialect: "kubectl"}); err != nil {
		t.Fatal(err)
	}
	n := len(r.Suggestions)
	if sg := r.Suggestions[n-2]; sg.Command != "" || !strings.Contains(sg.Text, `(no command: the value of {model}, "H100 $(reboot)'x", is not plain text`) {
		t.Errorf("a value that could run: %+v", sg)
	}
	if got := r.Suggestions[n-1].Command; got != "echo H100-80GB" {
		t.Errorf("a plain value: %q", got)
	}
}

// TestCommandValuesAreInert: quoting holds for one parse, and a tool that
// parses its argument again (flock -c runs sh -c) is not on the load-time
// list: a name that is not plain text gets no command, whatever the
// template. The quoted command alone would have run the name.
func TestCommandValuesAreInert(t *testing.T) {
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("flock (util-linux) is not installed")
	}
	dir := t.TempDir()
	tmpl := "flock " + filepath.Join(dir, "lock") + " -c {name}"
	payload := "touch " + filepath.Join(dir, "PWNED")
	// What quoting alone gives: the payload runs.
	c := exec.Command("sh", "-c", expand(tmpl, map[string]any{"name": payload}, 0, true))
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "PWNED")); err != nil {
		t.Fatal("the quoted command did not run the name: the demonstration is void")
	}
	for _, v := range []string{payload, "$(touch PWNED)", "a;b", "x y", "-rf", "a\nb", "é"} {
		if notInert(tmpl, map[string]any{"name": v}, 0) == "" {
			t.Errorf("%q: a command is made", v)
		}
	}
	for _, v := range []string{"gpu-01", "node.example.com", "ns/pod", "-5", "12.5", "team=ml,x:y@z%+_", ""} {
		if why := notInert(tmpl, map[string]any{"name": v}, 0); why != "" {
			t.Errorf("%q: %s", v, why)
		}
	}
	// Through Apply: the node "b;rm -rf" has no command (not a node name);
	// a pool rule over a model that is not plain text has none either,
	// even with a tool the shell parser cannot know runs its argument
	// (flock -c itself is now refused when the rules load).
	r := sample()
	frag := &recommend.Fragmentation{Pools: []recommend.FragPool{{Model: payload}}}
	if err := mustCompile(t, Rule{Name: "p", On: "pool", When: "true", Suggest: Suggest{Text: "t", Command: "./runs-its-argument {model}"}}).Apply(context.Background(), Input{Result: withFrag(r, frag), Dialect: "kubectl"}); err != nil {
		t.Fatal(err)
	}
	if sg := r.Suggestions[len(r.Suggestions)-1]; sg.Command != "" {
		t.Errorf("a tool that runs its argument, with a name that runs: %q", sg.Command)
	}
}

// TestNullFigures: comparing a figure that was not measured does not match
// and says why in a warning, once per rule.
func TestNullFigures(t *testing.T) {
	r := sample()
	if err := mustCompile(t, Rule{Name: "low-mean", When: "avg_gpu_util_pct < 80", Suggest: Suggest{Text: "{name}"}}).Apply(context.Background(), Input{Result: r}); err != nil {
		t.Fatal(err)
	}
	if r.RuleMatches["low-mean"] != 1 || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "rule low-mean: b;rm -rf:") {
		t.Errorf("%v %q", r.RuleMatches, r.Warnings)
	}
	r = sample()
	if err := mustCompile(t, Rule{Name: "low-mean", When: "(avg_gpu_util_pct ?? 0) < 80", Suggest: Suggest{Text: "{name}"}}).Apply(context.Background(), Input{Result: r}); err != nil {
		t.Fatal(err)
	}
	if r.RuleMatches["low-mean"] != 2 || len(r.Warnings) != 0 {
		t.Errorf("with ??: %v %q", r.RuleMatches, r.Warnings)
	}
}

// TestPoolsAndPriority: a rule on pools, and rules in priority order.
func TestPoolsAndPriority(t *testing.T) {
	ratio := 0.6
	frag := &recommend.Fragmentation{Pools: []recommend.FragPool{{Model: "H100", FreeGPUs: 5, StrandedGPUs: 3, Ratio: &ratio, Above: true,
		StrandedOn: []recommend.StrandedSet{{Node: "a", GPUs: []int{7}}}}}}
	r := sample()
	r.Suggestions = append(r.Suggestions, analyze.Suggestion{Kind: "fragmentation", Node: "a", Text: "stranded"})
	set := mustCompile(t,
		Rule{Name: "low", When: "util_pct < 10", Priority: 1, Suggest: Suggest{Text: "low {name}"}},
		Rule{Name: "frag", On: "pool", When: "ratio > 0.5 && stranded_gpus >= 3", Priority: 9, Suggest: Suggest{Text: "{model}: {stranded_gpus} of {free_gpus}"}},
		Rule{Name: "fragmentation", On: "pool", When: "ratio > 0.9"},
	)
	if err := set.Apply(context.Background(), Input{Result: withFrag(r, frag)}); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, s := range r.Suggestions {
		kinds = append(kinds, s.Kind+":"+s.Text)
	}
	want := "release-node:release b|migrate:move|rule:frag:H100: 3 of 5|rule:low:low a|rule:low:low b;rm -rf"
	if strings.Join(kinds, "|") != want {
		t.Errorf("got  %s\nwant %s", strings.Join(kinds, "|"), want)
	}
}

// TestBadRules: each mistake is one error naming the rule and what is
// wrong, with the file and line when read from a file.
func TestBadRules(t *testing.T) {
	for _, tt := range []struct {
		rule Rule
		want string
	}{
		{Rule{Name: "x", When: "utl_pct < 10", Suggest: Suggest{Text: "t"}}, `rule 1 ("x") in test: when: unknown name utl_pct (1:1)`},
		{Rule{Name: "x", When: "util_pct <", Suggest: Suggest{Text: "t"}}, `rule 1 ("x") in test: when: unexpected token EOF (1:10)`},
		{Rule{Name: "x", When: "util_pct", Suggest: Suggest{Text: "t"}}, `when: expected bool, but got float64`},
		{Rule{Name: "X y", When: "true", Suggest: Suggest{Text: "t"}}, "name must be"},
		{Rule{Name: "x", On: "cluster", When: "true", Suggest: Suggest{Text: "t"}}, `on: "cluster" is not a scope`},
		{Rule{Name: "x", When: "true", Severity: "high", Suggest: Suggest{Text: "t"}}, `severity: "high" (choose info, warning, critical)`},
		{Rule{Name: "x", When: "true", For: "ten minutes", Suggest: Suggest{Text: "t"}}, `for: "ten minutes" is not a duration`},
		{Rule{Name: "x", When: "true"}, "suggest.text: required"},
		{Rule{Name: "x", When: "true", Suggest: Suggest{Text: "{nmae}"}}, "suggest.text: {nmae} is not a field of a node"},
		{Rule{Name: "x", When: "true", Suggest: Suggest{Text: "t", Command: "echo {model}"}}, "suggest.command: {model} is not a field of a node"},
		{Rule{Name: "release-node", When: "true", Suggest: Suggest{Text: "t"}}, "suggest: the built-in release-node suggestion's text and command are seedance's"},
		{Rule{Name: "fragmentation", When: "true"}, "on: the built-in fragmentation rule is about a pool"},
	} {
		_, err := Compile([]Rule{tt.rule}, "test")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want %q", tt.rule, err, tt.want)
		}
	}
	if _, err := Compile([]Rule{{Name: "x", When: "true", Suggest: Suggest{Text: "t"}}, {Name: "x", When: "true", Suggest: Suggest{Text: "t"}}}, "test"); err == nil ||
		!strings.Contains(err.Error(), `rule 2 ("x") in test: a second rule of that name`) {
		t.Errorf("duplicate: %v", err)
	}
	doc := "rules:\n  - name: ok\n    when: idle\n    suggest: {text: t}\n  - name: bad\n    when: utl_pct < 10\n    suggest: {text: t}\n"
	rules, err := Load([]byte(doc), "r.yaml", true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Compile(rules, "r.yaml"); err == nil || err.Error() != `r.yaml:5: rule "bad": when: unknown name utl_pct (1:1) at "utl_pct < 10"` {
		t.Errorf("from a file: %v", err)
	}
	for doc, want := range map[string]string{
		"rules:\n  - name: x\n    whenn: true\n":       `r.yaml:3: unknown key "whenn" (a rule has name, priority, on, when, for, severity, suggest, enabled)`,
		"rules:\n  - name: x\n    suggest: {txt: a}\n": `r.yaml:3: unknown key "txt" (a rule has text, command)`,
		"rules:\n  - name: x\n    priority: high\n":    `r.yaml:2: line 3: cannot unmarshal !!str`,
		"rules: {name: x}\n":                           "r.yaml:1: rules must be a list",
		"analyze:\n  report: all\n":                    `r.yaml:1: unknown key "analyze" (a rules file has one key, rules:)`,
		"rules:\n  - [a]\n":                            "r.yaml:2: a rule must be a mapping",
		"rules: [\n":                                   "r.yaml: ",
	} {
		if _, err := Load([]byte(doc), "r.yaml", true); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", doc, err, want)
		}
	}
	// In the config file, the other keys are the config's.
	if rules, err := Load([]byte("analyze:\n  report: all\nrules:\n  - name: x\n    when: idle\n    suggest: {text: t}\n"), "c.yaml", false); err != nil || len(rules) != 1 {
		t.Errorf("config file: %v %v", rules, err)
	}
}

// TestDocsListEveryField: docs/rules.md names every field of every scope.
func TestDocsListEveryField(t *testing.T) {
	doc, err := os.ReadFile("../docs/rules.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, on := range []string{OnNode, OnGPU, OnGroup, OnPool, OnQueue} {
		for _, f := range Fields(on) {
			if !strings.Contains(string(doc), "`"+f+"`") {
				t.Errorf("docs/rules.md does not name the %s field %s", on, f)
			}
		}
	}
	for _, d := range Defaults {
		if !strings.Contains(string(doc), "| `"+d.Name+"` | "+d.On+" | ") || !strings.Contains(string(doc), " | "+d.Severity+" |") {
			t.Errorf("docs/rules.md's table lacks the default rule %s", d.Name)
		}
	}
}

// TestCommandPlaceholdersUnquoted (#27, case 4): a placeholder inside
// quotes would let a value (a group named from a tenant's pod label) run
// shell, so such a template is refused at load; unquoted, the value is one
// word whatever it holds, and running the command runs no payload.
func TestCommandPlaceholdersUnquoted(t *testing.T) {
	for _, cmd := range []string{`echo "{name}"`, `echo '{name}'`, "echo `{name}`", `echo "x {name} y"`, `echo \{name}`, `echo "unclosed {name}`} {
		_, err := Compile([]Rule{{Name: "x", When: "true", Suggest: Suggest{Text: "t", Command: cmd}}}, "test")
		if err == nil || !strings.Contains(err.Error(), "suggest.command:") {
			t.Errorf("%s: %v", cmd, err)
		}
	}
	for _, cmd := range []string{`echo {name}`, `kubectl label node {name} seedance/idle=true`, `echo --node={name}.x`, `echo "literal" {name}`, `echo '{not a field}'`} {
		if _, err := Compile([]Rule{{Name: "x", When: "true", Suggest: Suggest{Text: "t", Command: cmd}}}, "test"); err != nil {
			t.Errorf("%s: %v", cmd, err)
		}
	}
	// Constructs that parse text as a command again: refused at load, so
	// that no name ever reaches a second parse.
	for _, cmd := range []string{"cat <<EOF\n{name}\nEOF", "eval echo {name}", "sh -c {name}", "bash -c {name}", "/bin/sh -c {name}", "echo x && sh -c {name}",
		"ssh gpu-01 kubectl cordon {name}", "su -c {name} root", "echo {name} | xargs kubectl cordon", "watch kubectl get node {name}", "source {name}", ". {name}",
		"trap {name} EXIT", "echo $(bash -c {name})"} {
		_, err := Compile([]Rule{{Name: "x", When: "true", Suggest: Suggest{Text: "t", Command: cmd}}}, "test")
		if err == nil || !strings.Contains(err.Error(), "suggest.command:") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want a one-line refusal", cmd, err)
		}
	}
	for _, cmd := range []string{"sudo kubectl cordon {name}", "env KUBECONFIG=/k kubectl label node {name} a=b", "echo {name} | tee -a idle.log", "bash ./notify.sh", "kubectl drain {name} --ignore-daemonsets"} {
		if _, err := Compile([]Rule{{Name: "x", When: "true", Suggest: Suggest{Text: "t", Command: cmd}}}, "test"); err != nil {
			t.Errorf("%s: %v", cmd, err)
		}
	}
	dir := t.TempDir()
	for _, payload := range []string{"$(touch PWNED)", "`touch PWNED`", "'; touch PWNED; '", "\"; touch PWNED; \"", "a\nb; touch PWNED"} {
		got := expand("echo {name} {name}.log", map[string]any{"name": payload}, 0, true)
		c := exec.Command("sh", "-c", got)
		c.Dir = dir
		out, err := c.Output()
		if err != nil {
			t.Fatalf("%q: %v", got, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "PWNED")); err == nil {
			t.Fatalf("%q ran its payload", got)
		}
		if want := payload + " " + payload + ".log\n"; string(out) != want {
			t.Errorf("%q printed %q, want %q", got, out, want)
		}
	}
}

// withFrag is r with its fragmentation report.
func withFrag(r *report.Result, f *recommend.Fragmentation) *report.Result {
	r.Fragmentation = f
	return r
}

// TestDefaultsHaveNoCondition (#28): the built-in suggestions' conditions
// are the analysis', written once; a default rule restates none, and a
// user's rule of that name without a when only re-ranks.
func TestDefaultsHaveNoCondition(t *testing.T) {
	for _, d := range Defaults {
		if d.When != "" {
			t.Errorf("default rule %s restates a condition: %s", d.Name, d.When)
		}
	}
	r := sample()
	if err := mustCompile(t, Rule{Name: "release-node", Severity: "critical", Priority: 3}).Apply(context.Background(), Input{Result: r}); err != nil {
		t.Fatal(err)
	}
	kept := 0
	for _, s := range r.Suggestions {
		if s.Kind == "release-node" && s.Severity == "critical" && s.Priority == 3 {
			kept++
		}
	}
	if kept != 1 || r.RuleMatches["release-node"] != 1 {
		t.Errorf("re-ranked %d, matches %v: %+v", kept, r.RuleMatches, r.Suggestions)
	}
	if _, err := Compile([]Rule{{Name: "release-node", For: "1h"}}, "test"); err == nil || !strings.Contains(err.Error(), "for: needs a when") {
		t.Errorf("for without when: %v", err)
	}
}

// TestGPURuleKeepsMatchedFigures: a rule on GPUs reads every GPU's figures
// but leaves in the report only those of the GPUs it matched.
func TestGPURuleKeepsMatchedFigures(t *testing.T) {
	r := sample()
	r.GPUFigures = []analyze.GPUReport{
		{Node: "a", Index: 0, UUID: "GPU-a0", IdleMemGiB: f(12), ObservedS: 600},
		{Node: "a", Index: 1, UUID: "GPU-a1", IdleMemGiB: f(1), ObservedS: 600},
		{Node: "b;rm -rf", Index: 0, UUID: "GPU-b0", ObservedS: 600},
	}
	set := mustCompile(t, Rule{Name: "idle-memory", On: "gpu", When: "idle_mem_gib != nil && idle_mem_gib > 8", Suggest: Suggest{Text: "GPU {index} of {node}: {idle_mem_gib} GiB"}})
	if err := set.Apply(context.Background(), Input{Result: r}); err != nil {
		t.Fatal(err)
	}
	if r.RuleMatches["idle-memory"] != 1 || len(r.GPUFigures) != 1 || r.GPUFigures[0].UUID != "GPU-a0" {
		t.Fatalf("matches %v, figures %+v", r.RuleMatches, r.GPUFigures)
	}
	if got := r.Suggestions[len(r.Suggestions)-1].Text; got != "GPU 0 of a: 12 GiB" {
		t.Errorf("suggestion %q", got)
	}
}

// TestQueueBudgetRule (#58): a rule on queues sees a Slurm budget's
// figures; an account whose use Slurm did not count (nil) does not match
// and gets a warning, as every nil figure does.
func TestQueueBudgetRule(t *testing.T) {
	r := sample()
	r.Queues = map[string]analyze.QueueFigures{"research": {Kind: "slurm-account", BudgetUsedPct: f(95), BudgetLeftGPUHours: f(2.5)}, "prod": {Kind: "slurm-account"}}
	set := mustCompile(t, Rule{Name: "budget", On: OnQueue, When: "budget_used_pct > 90", Suggest: Suggest{Text: "{name}: {budget_used_pct}% of its GPU-minutes, {budget_left_gpu_hours} GPU-h left"}})
	if err := set.Apply(context.Background(), Input{Result: r}); err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, s := range r.Suggestions {
		if s.Kind == "rule:budget" {
			texts = append(texts, s.Text)
		}
	}
	if len(texts) != 1 || texts[0] != "research: 95% of its GPU-minutes, 2.5 GPU-h left" || r.RuleMatches["budget"] != 1 || len(r.Warnings) != 1 {
		t.Errorf("suggestions %q, matches %v, warnings %q", texts, r.RuleMatches, r.Warnings)
	}
}
