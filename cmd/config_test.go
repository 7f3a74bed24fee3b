package cmd

import (
	"context"
	"github.com/spf13/cobra"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/seedance/seedance/internal/exit"
	"github.com/seedance/seedance/pipeline"
	"github.com/seedance/seedance/settings"
	"github.com/seedance/seedance/source/sim"
)

// captureProfileOptions runs `seedance ARGS` with the profile command's run
// function replaced, and returns the options it would have run with.
func captureProfileOptions(t *testing.T, env map[string]string, args ...string) (*pipeline.RecordSpec, result) {
	t.Helper()
	f, get := testFactory(t, env)
	root := NewRootCmd(f)
	var got *pipeline.RecordSpec
	for _, c := range root.Commands() {
		if c.Name() == "profile" {
			root.RemoveCommand(c)
		}
	}
	root.AddCommand(newProfileCmd(f, func(o *pipeline.RecordSpec) error { got = o; return nil }))
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	r := get()
	r.code = exitCodeFor(err)
	if err != nil {
		r.errOut += err.Error()
	}
	return got, r
}

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestConfigPrecedence(t *testing.T) {
	file := writeConfig(t, "sim:\n  nodes: 3\nprofile:\n  interval: 2s\n  duration: 600\n")
	tests := []struct {
		name      string
		env       map[string]string
		args      []string
		wantNodes int
	}{
		{"default", map[string]string{}, nil, 8},
		{"file", map[string]string{"SEEDANCE_CONFIG": file}, nil, 3},
		{"env over file", map[string]string{"SEEDANCE_CONFIG": file, "SEEDANCE_SIM_NODES": "4"}, nil, 4},
		{"flag over env", map[string]string{"SEEDANCE_CONFIG": file, "SEEDANCE_SIM_NODES": "4"}, []string{"--sim-nodes", "5"}, 5},
		{"--config flag", map[string]string{}, []string{"--config", file}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, r := captureProfileOptions(t, tt.env, append([]string{"profile"}, tt.args...)...)
			if o == nil {
				t.Fatalf("not run: %+v", r)
			}
			if s := simSettings(t, o.Config); s.Nodes != tt.wantNodes {
				t.Fatalf("sim.nodes = %d, want %d", s.Nodes, tt.wantNodes)
			}
		})
	}
	o, _ := captureProfileOptions(t, map[string]string{"SEEDANCE_CONFIG": file}, "profile")
	if o.Config.Profile.Interval.String() != "2s" || o.Config.Profile.Duration.String() != "10m0s" {
		t.Fatalf("durations from file: interval %v, duration %v (a bare number is seconds)", o.Config.Profile.Interval, o.Config.Profile.Duration)
	}
}

func TestConfigSearchPath(t *testing.T) {
	xdg := t.TempDir()
	if err := os.MkdirAll(filepath.Join(xdg, "seedance"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(xdg, "seedance", "config.yaml"), []byte("sim:\n  scenario: idle\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o, r := captureProfileOptions(t, map[string]string{"XDG_CONFIG_HOME": xdg}, "profile")
	if o == nil || simSettings(t, o.Config).Scenario != "idle" {
		t.Fatalf("XDG config not read: %+v", r)
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"unknown key", "profile:\n  interval: 2s\n  intervall: 3s\n", `:3: unknown key "profile.intervall"`},
		{"unknown section", "sim:\n  nodes: 2\nbogus:\n  x: 1\n", `:3: unknown key "bogus"`},
		{"bad yaml", "profile:\n  interval: [2s\n", "did not find expected"},
		{"not a mapping", "- a\n- b\n", "top level must be a mapping"},
		{"bad duration", "profile:\n  interval: soon\n", "is not a duration"},
		{"units: an unknown key", "units:\n  - unit: videos\n    metric: videos_total\n    pod_lable: p\n", `:2: units[0]: unknown key "pod_lable"`},
		{"units: PromQL that does not parse", "units:\n  - unit: frames\n    expr: sum(rate(frames_total[5m])\n", `units[0]: expr does not parse as PromQL`},
		{"units: metric and expr", "units:\n  - unit: frames\n    expr: frames_total\n    metric: frames_total\n", `units[0]: give one of metric and expr`},
		{"units: a bad unit", "units:\n  - unit: Frames\n    metric: frames_total\n", `units[0]: unit "Frames"`},
		{"units: not a list", "units:\n  unit: frames\n", `units must be a list`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeConfig(t, tt.body)
			r := run(t, nil, "--config", path, "profile", "--source", "sim")
			if r.code != exit.Usage {
				t.Fatalf("exit %d: %s", r.code, r.errOut)
			}
			if !strings.Contains(r.errOut, tt.want) || strings.Count(r.errOut, "\n") != 1 {
				t.Fatalf("stderr = %q, want one line with %q", r.errOut, tt.want)
			}
			if tt.name != "bad duration" && !strings.Contains(r.errOut, path) {
				t.Fatalf("error does not name the file: %q", r.errOut)
			}
		})
	}
	r := run(t, nil, "--config", "/nonexistent/seedance.yaml", "version")
	if r.code != exit.Usage || !strings.Contains(r.errOut, "/nonexistent/seedance.yaml") {
		t.Fatalf("missing explicit config: %d %q", r.code, r.errOut)
	}
}

func TestConfigView(t *testing.T) {
	file := writeConfig(t, "sim:\n  nodes: 3\n")
	r := run(t, map[string]string{"SEEDANCE_CONFIG": file, "SEEDANCE_PROFILE_SOURCE": "sim"}, "config", "view")
	if r.code != exit.OK {
		t.Fatal(r.errOut)
	}
	lines := map[string]string{}
	for _, l := range strings.Split(r.out, "\n") {
		if f := strings.Fields(l); len(f) >= 2 {
			lines[f[0]] = strings.Join(f[1:], " ")
		}
	}
	for key, want := range map[string]string{
		"sim.nodes":        "3 file " + file,
		"profile.source":   "sim env SEEDANCE_PROFILE_SOURCE",
		"profile.interval": "1s default",
	} {
		if lines[key] != want {
			t.Errorf("%s: %q, want %q", key, lines[key], want)
		}
	}
	if !strings.Contains(r.out, "config file: "+file) {
		t.Errorf("output does not name the file:\n%s", r.out)
	}
}

// TestSettingRanges: every bounded setting is checked at start-up, from a
// flag, the environment or the config file alike; NaN and infinities are
// refused; the message names the key, its flag, its variable and the range.
func TestSettingRanges(t *testing.T) {
	tests := []struct {
		env  map[string]string
		args []string
		want string
	}{
		{map[string]string{"SEEDANCE_SCALING_PERIOD": "1ns"}, []string{"config", "view"}, "scaling.period = 1ns is outside 1s–24h0m0s"},
		{nil, []string{"analyze", "x.json", "--idle-threshold", "NaN"}, "analyze.idle_threshold_pct = NaN is outside 0–100 (flag --idle-threshold, environment SEEDANCE_ANALYZE_IDLE_THRESHOLD_PCT"},
		{nil, []string{"analyze", "x.json", "--underused", "NaN"}, "analyze.underused_pct = NaN"},
		{nil, []string{"analyze", "x.json", "--energy-price", "Inf"}, "pricing.energy_usd_per_kwh = +Inf"},
		{nil, []string{"analyze", "x.json", "--default-gpu-price", "-1"}, "pricing.default_gpu_hour_usd = -1 is outside 0–1e+06"},
		{nil, []string{"analyze", "x.json", "--gpu-price", "H100=NaN"}, "--gpu-price \"H100=NaN\""},
		{nil, []string{"profile", "--source", "sim", "--sim-nodes", "1000000000000"}, "sim.nodes = 1e+12 is outside 1–10000"},
		{map[string]string{"SEEDANCE_PROMETHEUS_RETRIES": "-1"}, []string{"config", "view"}, "prometheus.retries = -1 is outside 0–20"},
		{map[string]string{"SEEDANCE_CONFIG": writeConfig(t, "scaling:\n  alpha: .nan\n")}, []string{"config", "view"}, "scaling.alpha = NaN"},
		{map[string]string{"SEEDANCE_CONFIG": writeConfig(t, "pricing:\n  gpu_hour_usd:\n    H100: -3\n")}, []string{"config", "view"}, "pricing.gpu_hour_usd.h100 = -3"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			r := run(t, tt.env, tt.args...)
			if r.code != exit.Usage || strings.Count(r.errOut, "\n") != 1 || !strings.Contains(r.errOut, tt.want) {
				t.Errorf("%v %v: exit %d %q, want %q", tt.env, tt.args, r.code, r.errOut, tt.want)
			}
		})
	}
}

// TestCLIHabits: --version, flag values that complete, and -o FORMAT
// caught as the --format it meant.
func TestCLIHabits(t *testing.T) {
	if r := run(t, nil, "--version"); r.code != 0 || !strings.HasPrefix(r.out, "seedance ") {
		t.Fatalf("--version: exit %d %q", r.code, r.out)
	}
	r := run(t, nil, "__complete", "analyze", "--format", "")
	for _, want := range []string{"json", "html", "prom"} {
		if !strings.Contains(r.out, want+"\n") {
			t.Errorf("--format completes to %q, missing %s", r.out, want)
		}
	}
	if r := run(t, nil, "__complete", "profile", "--source", ""); !strings.Contains(r.out, "prometheus\n") || !strings.Contains(r.out, "sim\n") {
		t.Errorf("--source completes to %q", r.out)
	}
	for _, args := range [][]string{{"analyze", "--source", "sim", "-o", "json"}, {"profile", "--source", "sim", "-o", "yaml"}, {"recommend", "-i", "x.json", "-o", "json"}} {
		r := run(t, nil, args...)
		if r.code != exit.Usage || !strings.Contains(r.errOut, "did you mean --format") {
			t.Errorf("%v: exit %d %q", args, r.code, r.errOut)
		}
	}
}

// simSettings is the sim source's section of the configuration.
func simSettings(t *testing.T, c *settings.Config) sim.Settings {
	t.Helper()
	var s sim.Settings
	if err := c.SourceSettings("sim", &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSettingFlagsComeFromKeys: on every command a setting names (its
// Cmd), the setting's flag is declared from the key list
// (addSettingFlags) and carries its key: none is declared by hand.
func TestSettingFlagsComeFromKeys(t *testing.T) {
	f, _ := testFactory(t, nil)
	byName := map[string]*cobra.Command{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		byName[strings.ReplaceAll(strings.TrimPrefix(c.CommandPath(), "seedance "), " ", "-")] = c
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewRootCmd(f))
	checked := 0
	for _, k := range settings.Keys() {
		if k.Flag == "" {
			continue
		}
		var cmds []*cobra.Command
		for _, name := range strings.Fields(k.Cmd) {
			c := byName[name]
			if c == nil {
				t.Errorf("%s: no command %q", k.Key, name)
				continue
			}
			if c.HasSubCommands() && !c.Runnable() { // a group: each of its commands
				cmds = append(cmds, c.Commands()...)
			} else {
				cmds = append(cmds, c)
			}
		}
		for _, c := range cmds {
			fl := c.Flags().Lookup(k.Flag)
			if fl == nil {
				t.Errorf("%s: %s has no --%s", k.Key, c.CommandPath(), k.Flag)
				continue
			}
			checked++
			if got := append(fl.Annotations[keyAnnotation], fl.Annotations[overlayAnnotation]...); len(got) != 1 || got[0] != k.Key {
				t.Errorf("%s --%s is declared by hand, not from %s in settings.Keys", c.CommandPath(), k.Flag, k.Key)
			}
		}
	}
	if checked < 50 {
		t.Fatalf("only %d setting flags seen", checked)
	}
}

// TestConfigUnits: the configuration's units: reach the run as the
// counters the sources read (docs/units.md).
func TestConfigUnits(t *testing.T) {
	path := writeConfig(t, "units:\n  - unit: videos\n    metric: render_videos_total\n    pod_label: exported_pod\n    namespace_label: exported_namespace\n"+
		"  - unit: steps\n    expr: sum by (slurm_job) (train_steps_total)\n    job_label: slurm_job\n")
	o, r := captureProfileOptions(t, nil, "--config", path, "profile")
	if o == nil {
		t.Fatalf("no run: %+v", r)
	}
	want := []settings.WorkQuery{
		{Unit: "videos", Metric: "render_videos_total", PodLabel: "exported_pod", NamespaceLabel: "exported_namespace"},
		{Unit: "steps", Expr: "sum by (slurm_job) (train_steps_total)", JobLabel: "slurm_job"},
	}
	if !reflect.DeepEqual(o.Config.Units, want) {
		t.Errorf("units %+v, want %+v", o.Config.Units, want)
	}
}
