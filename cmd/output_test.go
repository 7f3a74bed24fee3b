package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/seedance/seedance/internal/exit"

	"gopkg.in/yaml.v3"
)

// TestOutputCheckedBeforeWork: an output that cannot be written fails at
// once with exit 2, before the wrapped command runs or any sampling starts.
func TestOutputCheckedBeforeWork(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "job-ran")
	tests := []struct{ out, want string }{
		{filepath.Join(dir, "nonexistent", "x.json"), "does not exist"},
		{dir, "is a directory"},
	}
	for _, tt := range tests {
		c, stderr := startSeedance(t, "profile", "--source", "sim", "--sim-nodes", "1", "-o", tt.out, "--", "touch", marker)
		code := exitCode(c.Wait())
		if code != int(exit.Usage) || !strings.Contains(stderr.String(), tt.want) || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("-o %s: exit %d: %s", tt.out, code, stderr)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("-o %s: the command ran although its profile could not be written", tt.out)
		}
	}
}

// TestOutputIsNotAnInput: analyze and recommend refuse to write over what
// they read, and the profile is left as it was.
func TestOutputIsNotAnInput(t *testing.T) {
	p := simProfile(t)
	before, _ := os.ReadFile(p)
	for _, args := range [][]string{
		{"analyze", "-i", p, "-o", p},
		{"analyze", p, "--format", "json", "--output", filepath.Join(filepath.Dir(p), ".", filepath.Base(p))},
		{"recommend", "-i", p, "-o", p},
	} {
		r := run(t, nil, args...)
		if r.code != exit.Usage || !strings.Contains(r.errOut, "is also an input") {
			t.Errorf("%v: exit %d %s", args, r.code, r.errOut)
		}
	}
	if after, _ := os.ReadFile(p); string(after) != string(before) {
		t.Fatal("the profile was changed")
	}
	// The baseline is an input too.
	base := filepath.Join(t.TempDir(), "base.json")
	if r := run(t, nil, "analyze", p, "--format", "json", "-o", base); r.code != 0 {
		t.Fatal(r.errOut)
	}
	if r := run(t, nil, "analyze", p, "--baseline", base, "--format", "json", "-o", base); r.code != exit.Usage {
		t.Errorf("baseline as output: exit %d %s", r.code, r.errOut)
	}
}

// TestOutputToDeviceNode: -o onto a character device writes through it and
// leaves the node a device (on a node the test makes, never the real
// /dev/null).
func TestOutputToDeviceNode(t *testing.T) {
	dev := filepath.Join(t.TempDir(), "null")
	if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Skipf("cannot make a device node here (not root?): %v", err)
	}
	// past the umask; recommend must not chmod it
	if err := os.Chmod(dev, 0o666); err != nil {
		t.Fatal(err)
	}

	p := simProfile(t)
	for _, args := range [][]string{
		{"analyze", p, "-o", dev},
		{"recommend", "-i", p, "-o", dev},
		{"profile", "--source", "sim", "--sim-nodes", "1", "--duration", "10", "-o", dev},
	} {
		if r := run(t, nil, args...); r.code != 0 {
			t.Fatalf("%v: exit %d %s", args, r.code, r.errOut)
		}
		fi, err := os.Stat(dev)
		if err != nil || fi.Mode()&os.ModeCharDevice == 0 || fi.Mode().Perm() != 0o666 {
			t.Fatalf("%v: the device node became %v", args, fi.Mode())
		}
	}
}

// TestShortJobSaysSo: a job shorter than the idle window gets a note on
// stderr (and in the report) instead of a silent "nothing idle", and the
// gates docs/ci.md gives for short jobs work on it.
func TestShortJobSaysSo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "job.json")
	c, stderr := startSeedance(t, "profile", "--source", "sim", "--sim-nodes", "1", "--interval", "200ms", "-o", path, "--", "sleep", "1")
	if code := exitCode(c.Wait()); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r := run(t, nil, "analyze", path)
	if r.code != 0 || !strings.Contains(r.errOut, "note: no GPU was observed for as long as the 1m idle window") {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	// The gates decide on measured values (pass or fail: the simulated
	// node's first second varies), never on nothing.
	r = run(t, nil, "analyze", path, "--idle-window", "200ms", "--gate", "summary.avg_gpu_util_pct >= 5", "--gate", "summary.idle_ratio <= 0.9")
	if (r.code != 0 && r.code != exit.GateFailed) || strings.Contains(r.errOut, "note:") || !regexp.MustCompile(`gate (PASS|FAIL): summary.avg_gpu_util_pct >= 5 \(was [0-9.]+\)`).MatchString(r.errOut) {
		t.Fatalf("scaled window: exit %d: %s", r.code, r.errOut)
	}
}

// TestSourceURLsAndInputs: a URL that is not http(s) is a usage error at
// once (not four retries), so is a serving target given twice (its
// counters would count twice), and a directory given as a profile says so.
func TestSourceURLsAndInputs(t *testing.T) {
	out := filepath.Join(t.TempDir(), "p.json")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"profile", "--source", "prometheus", "--prometheus-url", "ftp://prom/", "--duration", "1h", "-o", out}, "invalid setting: --prometheus-url must be an http(s) URL"},
		{[]string{"profile", "--source", "scrape", "--targets", "ftp://u:pw@x/metrics", "-o", out}, `scrape target ftp://u:xxxxx@x/metrics: the scheme must be http or https, not "ftp"`},
		{[]string{"profile", "--source", "scrape", "--targets", "127.0.0.1:1", "--serving", "ml/a=http://u:pw@h:8000/metrics", "--serving", "ml/a=http://u:pw@h:8000/metrics", "--interval", "100ms", "--duration", "0.2", "-o", out},
			"--serving: ml/a=http://u:xxxxx@h:8000/metrics is given twice"},
		{[]string{"analyze", t.TempDir()}, "it is a directory, not a profile file"},
		{[]string{"profile", "--source", "sim", "--sim-start", "9999-12-31T23:59:59Z", "-o", out}, "a profile's times must lie between 1970 and 2199"},
		{[]string{"profile", "--source", "sim", "--sim-start", "0001-01-01T00:00:00Z", "-o", out}, "a profile's times must lie between 1970 and 2199"},
		{[]string{"recommend", "-i", t.TempDir()}, "it is a directory, not a profile file"},
	} {
		r := run(t, nil, tt.args...)
		if r.code != exit.Usage || !strings.Contains(r.errOut, tt.want) || strings.Contains(r.errOut, "pw@") {
			t.Errorf("%v: exit %d %q", tt.args, r.code, r.errOut)
		}
	}
}

// TestSpillDir: nodes spilled by a streaming source go next to a regular
// output file, never into /dev or next to a pipe.
func TestSpillDir(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	regular := filepath.Join(dir, "p.json")
	if err := os.WriteFile(regular, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{"-": "", "/dev/null": "", fifo: "", regular: dir, filepath.Join(dir, "new.json.gz"): dir} {
		if got := spillDir(path); got != want {
			t.Errorf("spillDir(%q) = %q, want %q", path, got, want)
		}
	}
}

// TestYAMLFormats: a report and a plan in YAML say what their JSON says,
// key for key; config view and version write JSON and YAML too.
func TestYAMLFormats(t *testing.T) {
	path := simProfile(t, "--duration", "120", "--sim-nodes", "8")
	same := func(name string, jsonArgs, yamlArgs []string) {
		t.Helper()
		j, y := run(t, nil, jsonArgs...), run(t, nil, yamlArgs...)
		if j.code != 0 || y.code != 0 {
			t.Fatalf("%s: exit %d / %d: %s %s", name, j.code, y.code, j.errOut, y.errOut)
		}
		var a, b any
		if err := json.Unmarshal([]byte(j.out), &a); err != nil {
			t.Fatalf("%s JSON: %v", name, err)
		}
		if err := yaml.Unmarshal([]byte(y.out), &b); err != nil {
			t.Fatalf("%s YAML: %v", name, err)
		}
		ja, _ := json.Marshal(a)
		jb, err := json.Marshal(b)
		if err != nil || string(ja) != string(jb) {
			t.Fatalf("%s: the YAML says something else than the JSON (%v)", name, err)
		}
	}
	same("report", []string{"analyze", path, "--report", "all", "-f", "json"}, []string{"analyze", path, "--report", "all", "-f", "yaml"})
	same("plan", []string{"recommend", "--input", path, "--dialect", "json"}, []string{"recommend", "--input", path, "--dialect", "yaml"})
	same("config", []string{"config", "view", "-f", "json"}, []string{"config", "view", "-f", "yaml"})
	same("version", []string{"version", "-f", "json"}, []string{"version", "-f", "yaml"})
	if r := run(t, nil, "version", "-f", "xml"); r.code != exit.Usage || !strings.Contains(r.errOut, "choose text, json or yaml") {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
}

// TestWarningsReachStderr: a warning of the report (a rule stopped by its
// budget) is said on stderr when the report goes to a file or in a format
// a program reads, not only inside it.
func TestWarningsReachStderr(t *testing.T) {
	dir := t.TempDir()
	rules := filepath.Join(dir, "rules.yaml")
	saveAs(t, rules, "rules:\n  - name: hog\n    when: 'len(repeat(\"a\", 1000000000)) > 0'\n    suggest: {text: x}\n")
	for _, args := range [][]string{{"-f", "json", "-o", filepath.Join(dir, "r.json")}, {"-f", "table", "-o", filepath.Join(dir, "r.txt")}, {"-f", "json"}} {
		r := run(t, nil, append([]string{"analyze", "--source", "sim", "--duration", "120", "--rules", rules}, args...)...)
		if r.code != 0 || !strings.Contains(r.errOut, "warning: rule hog: ") || !strings.Contains(r.errOut, "over its budget") {
			t.Errorf("%v: exit %d, stderr %q", args, r.code, r.errOut)
		}
	}
}
