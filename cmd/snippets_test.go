package cmd

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/testkit/engine"

	"github.com/seedance/seedance/internal/exit"

	"gopkg.in/yaml.v3"

	"github.com/seedance/seedance/internal/testkit/dcgmtest"
	"github.com/seedance/seedance/internal/testkit/promtest"
	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source"
	"github.com/seedance/seedance/source/sim"
)

// A docs snippet is a fenced block of README.md or docs/*.md.
type snippet struct {
	file, lang, text string
	line             int
}

var fence = regexp.MustCompile("^```([a-z]*)\\s*$")

// cronCommand is the command of a crontab line: after five time fields.
var cronCommand = regexp.MustCompile(`^(?:\S+\s+){5}(.*)$`)

// needsGPU lists the snippet commands that need a GPU, and what they say
// on a machine without one (this one, and CI's).
var needsGPU = map[string]string{
	"seedance topo --format matrix": "no GPU found",
}

func docSnippets(t *testing.T) []snippet {
	t.Helper()
	files, _ := filepath.Glob("../docs/*.md")
	cli, _ := filepath.Glob("../docs/cli/*.md") // the commands' Example blocks
	files = append(append([]string{"../README.md"}, files...), cli...)
	var out []snippet
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var cur *snippet
		prev := ""
		for i, l := range strings.Split(string(b), "\n") {
			m := fence.FindStringSubmatch(l)
			switch {
			case m != nil && cur == nil:
				cur = &snippet{file: filepath.Base(f), lang: m[1], line: i + 1}
				if m[1] == "" && prev == "### Examples" {
					cur.lang = "sh" // cobra writes examples without a language
				}
			case strings.HasPrefix(l, "```") && cur != nil:
				out = append(out, *cur)
				cur = nil
			case cur != nil:
				cur.text += l + "\n"
			}
			if strings.TrimSpace(l) != "" {
				prev = strings.TrimSpace(l)
			}
		}
	}
	return out
}

// commands splits a shell snippet into commands: comments dropped,
// backslash continuations joined.
func commands(text string) []string {
	var out []string
	cur := ""
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if cur == "" && (l == "" || strings.HasPrefix(l, "#")) {
			continue
		}
		if strings.HasSuffix(l, "\\") {
			cur += strings.TrimSuffix(l, "\\") + " "
			continue
		}
		cur += l
		out = append(out, strings.TrimSpace(stripComment(cur)))
		cur = ""
	}
	return out
}

// stripComment drops a trailing " # comment" outside quotes.
func stripComment(s string) string {
	var quote rune
	for i, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote == 0 && (r == '\'' || r == '"'):
			quote = r
		case quote == 0 && r == '#' && i > 0 && s[i-1] == ' ':
			return s[:i]
		}
	}
	return s
}

// sandbox is a directory with seedance and stand-ins for the tools a
// snippet calls (python, gh) on PATH, and the files the snippets name.
type sandbox struct {
	dir, bin string
	env      []string
	subst    *strings.Replacer
}

func newSandbox(t *testing.T, promURL, promUS string, scrapeTargets string) *sandbox {
	t.Helper()
	sb := &sandbox{dir: t.TempDir()}
	sb.bin = filepath.Join(sb.dir, ".bin")
	if err := os.MkdirAll(sb.bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(binary, filepath.Join(sb.bin, "seedance")); err != nil {
		t.Fatal(err)
	}
	standIns := map[string]string{
		// A benchmark of two seconds.
		"python": "#!/bin/sh\nsleep 1\n",
		// gh run download … --dir DIR: the baseline artifact when there is one.
		"gh": "#!/bin/sh\nwhile [ $# -gt 0 ]; do [ \"$1\" = --dir ] && dir=$2; shift; done\n" +
			"[ -f \"$GH_ARTIFACT\" ] || { echo 'no artifact found' >&2; exit 1; }\nmkdir -p \"$dir\" && cp \"$GH_ARTIFACT\" \"$dir/report.json\"\n",
	}
	for name, body := range standIns {
		if err := os.WriteFile(filepath.Join(sb.bin, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(sb.dir, "run-gpu-tests.sh"), []byte("#!/bin/sh\nsleep 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"var/lib/seedance", "var/lib/node_exporter/textfile", "srv/reports"} {
		if err := os.MkdirAll(filepath.Join(sb.dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Without a driver here, the default NVML source is the simulated
	// cluster: the environment sets it, and a --source flag still wins.
	// The docs' data lies on the days they name, in the past: a ledger of
	// it lags now (docs/chargeback.md, Lag) by as much as the docs are
	// old, and holds an hour of December.
	sb.env = []string{"PATH=" + sb.bin + ":/usr/bin:/bin", "HOME=" + sb.dir, "SEEDANCE_PROFILE_SOURCE=sim", "SEEDANCE_SIM_NODES=2", "SEEDANCE_LEDGER_MAX_LAG=9000h",
		"SEEDANCE_LEDGER_FORECAST_MIN_OBSERVED=1h"}
	pairs := []string{
		"/var/lib/", sb.dir + "/var/lib/", "/srv/reports/", sb.dir + "/srv/reports/",
		// Real time: an hour of scraping becomes two seconds.
		"--interval 15s --duration 1h", "--interval 500ms --duration 2s",
	}
	// docs/ledger.md's clusters: two Prometheus servers (the one here,
	// and one of another cluster's GPUs) and a PostgreSQL ledger (a file
	// in the sandbox).
	pairs = append(pairs, "postgres://seedance@ledger-db/seedance", "clusters.db")
	if promURL != "" {
		pairs = append(pairs, "http://prometheus:9090", promURL, "http://prom-eu:9090", promURL, "http://prom-us:9090", promUS)
	}
	if scrapeTargets != "" {
		pairs = append(pairs, "gpu-01:9400,gpu-02:9400", scrapeTargets)
		if err := os.WriteFile(filepath.Join(sb.dir, "exporters.txt"), []byte(strings.ReplaceAll(scrapeTargets, ",", "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sb.subst = strings.NewReplacer(pairs...)
	return sb
}

// seedance runs the binary in the sandbox for the fixtures.
func (sb *sandbox) seedance(t *testing.T, args ...string) {
	t.Helper()
	c := exec.Command(binary, args...)
	c.Dir, c.Env = sb.dir, sb.env
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("seedance %v: %v\n%s", args, err, out)
	}
}

func gzipFile(t *testing.T, src, dst string) {
	b, _ := os.ReadFile(src)
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	_, _ = w.Write(b)
	w.Close()
	if err := os.WriteFile(dst, z.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fixtures writes the profiles and reports the snippets read.
func (sb *sandbox) fixtures(t *testing.T) {
	t.Helper()
	// profile.json as README's first command writes it, and a baseline
	// report of it.
	sb.seedance(t, "profile", "--source", "sim", "--duration", "300", "-o", "profile.json")
	sb.seedance(t, "analyze", "profile.json", "--format", "json", "-o", "main-report.json")
	sb.seedance(t, "profile", "--source", "sim", "--duration", "600", "-o", "day.json")
	gzipFile(t, filepath.Join(sb.dir, "day.json"), filepath.Join(sb.dir, "day.json.gz"))
	for _, name := range []string{"node.json.gz", "cluster.json.gz", "var/lib/seedance/last-hour.json.gz", "var/lib/seedance/yesterday.json.gz"} {
		gzipFile(t, filepath.Join(sb.dir, "day.json"), filepath.Join(sb.dir, name))
	}
	sb.seedance(t, "profile", "--source", "sim", "--duration", "300", "-o", "day1.json")
	sb.seedance(t, "profile", "--source", "sim", "--duration", "300", "--sim-start", "2026-01-06T09:00:00Z", "-o", "day2.json")
	for _, day := range []string{"day1.json", "day2.json"} {
		gzipFile(t, filepath.Join(sb.dir, day), filepath.Join(sb.dir, day+".gz"))
	}
	if err := os.WriteFile(filepath.Join(sb.dir, "seedance.yaml"), []byte("profile:\n  interval: 1s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// sh runs one command line in the sandbox with bash.
func (sb *sandbox) sh(t *testing.T, cmdline string, env ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, "bash", "-eo", "pipefail", "-c", cmdline)
	c.Dir, c.Env = sb.dir, append(append([]string(nil), sb.env...), env...)
	out, err := c.CombinedOutput()
	return string(out), exitCode(err)
}

// TestDocSnippets runs what a user copies from README.md, docs/ and the
// CLI reference's Examples (docs/cli): every
// command of every sh block and of the cron block, the GitHub Actions
// workflow's run steps (without and with a baseline), and every config
// file. Names that stand for the user's own machines are swapped for local
// ones: http://prometheus:9090 for a real Prometheus holding a simulated
// cluster, gpu-01:9400,gpu-02:9400 for local dcgm-exporter stand-ins, /var
// and /srv paths for the sandbox; an hour of scraping becomes two seconds.
// json and plain blocks are formats and formulas, not commands.
func TestDocSnippets(t *testing.T) {
	engine.SkipShort(t, "runs the binary many times")
	// A sandbox, a Prometheus and exporters of its own: it runs beside the
	// rest of the package (its snippets, in order, share the sandbox).
	t.Parallel()
	promURL, promUS := snippetPrometheus(t, 1), ""
	if promURL != "" {
		promUS = snippetPrometheus(t, 2)
	}
	targets := snippetExporters(t)
	sb := newSandbox(t, promURL, promUS, targets)
	sb.fixtures(t)
	ran := 0
	// Without Prometheus, a later snippet may read what a skipped one
	// would have written (a ledger): its failure is logged, not failed.
	// Under CI Prometheus is required, so nothing is excused there.
	skipped := false
	for _, s := range docSnippets(t) {
		where := fmt.Sprintf("%s:%d", s.file, s.line)
		switch {
		case s.lang == "sh":
			for _, c := range commands(s.text) {
				if strings.HasSuffix(c, "go test ./...") {
					continue // the command that runs this test
				}
				c = strings.ReplaceAll(c, "go run . ", "seedance ")
				if (regexp.MustCompile(`prom(etheus|-eu|-us):9090`).MatchString(c) && promURL == "") || (strings.Contains(c, "gpu-01:9400") && targets == "") {
					t.Logf("%s: skipped (prometheus is not installed): %s", where, c)
					skipped = true
					continue
				}
				ran++
				out, code := sb.sh(t, sb.subst.Replace(c))
				if want, ok := needsGPU[c]; ok {
					// Without a GPU, the documented refusal.
					if code != int(exit.Usage) || !strings.Contains(out, want) {
						t.Errorf("%s: without a GPU: exit %d: %s\n%s", where, code, c, out)
					}
					continue
				}
				switch {
				case code != 0 && skipped:
					t.Logf("%s: exit %d after a skipped snippet (prometheus is not installed): %s", where, code, c)
				case code != 0:
					t.Errorf("%s: exit %d: %s\n%s", where, code, c, out)
				}
			}
		case s.lang == "cron":
			for _, c := range commands(s.text) {
				cmd := cronCommand.FindStringSubmatch(c)[1]
				ran++
				if out, code := sb.sh(t, sb.subst.Replace(cmd)); code != 0 {
					t.Errorf("%s: exit %d: %s\n%s", where, code, cmd, out)
				}
			}
		case s.lang == "yaml" && strings.Contains(s.text, "\njobs:"):
			ran += runWorkflow(t, sb, where, s.text)
		case s.lang == "yaml" && (strings.HasPrefix(s.text, "prices:") || strings.Contains(s.text, "\nprices:")):
			// A price file (docs/pricing.md): it loads and prices a report.
			if err := os.WriteFile(filepath.Join(sb.dir, "prices.yaml"), []byte(s.text), 0o644); err != nil {
				t.Fatal(err)
			}
			ran++
			if out, code := sb.sh(t, "seedance analyze profile.json --price-file prices.yaml -f json -o price-check.json"); code != 0 {
				t.Errorf("%s: the price file does not load: %s", where, out)
			}
		case s.lang == "yaml" && strings.HasPrefix(s.text, "budgets:"):
			// A budgets file (docs/chargeback.md): it loads and reports on
			// the sandbox's ledger (README's).
			if err := os.WriteFile(filepath.Join(sb.dir, "budgets.yaml"), []byte(s.text), 0o644); err != nil {
				t.Fatal(err)
			}
			ran++
			if out, code := sb.sh(t, "seedance ledger report --ledger seedance.db --budgets budgets.yaml -f json -o budgets-check.json"); code != 0 {
				t.Errorf("%s: the budgets file does not load: %s", where, out)
			}
		case s.lang == "yaml":
			cfg := filepath.Join(sb.dir, "config.yaml")
			if err := os.WriteFile(cfg, []byte(s.text), 0o644); err != nil {
				t.Fatal(err)
			}
			ran++
			if out, code := sb.sh(t, "seedance --config config.yaml config view"); code != 0 {
				t.Errorf("%s: the config does not load: %s", where, out)
			}
			if strings.HasPrefix(s.text, "rules:") || strings.Contains(s.text, "\nrules:") {
				// Policy rules: they compile and run over a report with every section.
				if out, code := sb.sh(t, "seedance --config config.yaml analyze --source sim --duration 120 --report all --format json --output rules-report.json"); code != 0 {
					t.Errorf("%s: the rules do not run: %s", where, out)
				}
			}
		}
	}
	if ran < 30 {
		t.Errorf("only %d snippet commands ran", ran)
	}
}

// runWorkflow runs a GitHub Actions workflow's run steps as the runner
// would (bash -e; with shell: bash, -eo pipefail), twice: on a first
// pull request without a baseline, then with the first run's report as the
// baseline artifact. Every step must succeed, and the second report must
// carry the baseline's delta and both gates.
func runWorkflow(t *testing.T, sb *sandbox, where, text string) int {
	var wf struct {
		Jobs map[string]struct {
			Steps []struct {
				Name  string            `yaml:"name"`
				Uses  string            `yaml:"uses"`
				Run   string            `yaml:"run"`
				Shell string            `yaml:"shell"`
				Env   map[string]string `yaml:"env"`
				With  map[string]string `yaml:"with"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal([]byte(text), &wf); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	ran := 0
	artifact := filepath.Join(t.TempDir(), "artifact.json")
	for pass := 0; pass < 2; pass++ {
		os.RemoveAll(filepath.Join(sb.dir, "baseline"))
		os.RemoveAll(filepath.Join(sb.dir, "seedance-report")) // another workflow's
		os.Remove(filepath.Join(sb.dir, "report.json"))
		summary := filepath.Join(sb.dir, "step-summary.md")
		os.Remove(summary)
		for _, job := range wf.Jobs {
			for _, st := range job.Steps {
				if strings.HasPrefix(st.Uses, "seedance/seedance@") { // this repository's action.yml
					ran++
					if out, code := sb.sh(t, "bash "+actionScript(t), actionEnv(summary, artifact, st.With)...); code != 0 {
						t.Errorf("%s: pass %d, the seedance action: exit %d\n%s", where, pass+1, code, out)
					}
					continue
				}
				if st.Run == "" {
					continue // uses: actions run by GitHub
				}
				ran++
				script := filepath.Join(sb.dir, ".step.sh")
				if err := os.WriteFile(script, []byte(sb.subst.Replace(st.Run)), 0o644); err != nil {
					t.Fatal(err)
				}
				flags := "-e"
				if st.Shell == "bash" {
					flags = "-eo pipefail"
				}
				env := []string{"GITHUB_STEP_SUMMARY=" + summary, "GH_ARTIFACT=" + artifact}
				for k, v := range st.Env {
					env = append(env, k+"="+v)
				}
				if out, code := sb.sh(t, "bash "+flags+" .step.sh", env...); code != 0 {
					t.Errorf("%s: pass %d, step %q: exit %d\n%s", where, pass+1, st.Name, code, out)
				}
			}
		}
		report, err := os.ReadFile(filepath.Join(sb.dir, "seedance-report", "report.json")) // the action's
		if errors.Is(err, os.ErrNotExist) {
			report, err = os.ReadFile(filepath.Join(sb.dir, "report.json"))
		}
		if err != nil {
			t.Fatalf("%s: pass %d wrote no report.json", where, pass+1)
		}
		if b, _ := os.ReadFile(summary); !bytes.Contains(b, []byte("### seedance")) {
			t.Errorf("%s: pass %d: the step summary is %q", where, pass+1, b)
		}
		if pass == 1 && (!bytes.Contains(report, []byte(`"delta"`)) || !bytes.Contains(report, []byte(`"expr": "delta.avg_gpu_util_pct \u003e= -5"`))) {
			t.Errorf("%s: with a baseline, the report lacks the delta or its gate:\n%.600s", where, report)
		}
		// upload-artifact
		if err := os.WriteFile(artifact, report, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ran
}

// actionScript is the step script of the repository's GitHub Action.
func actionScript(t *testing.T) string {
	p, err := filepath.Abs("../deploy/github-action/gate.sh")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// actionEnv is the environment action.yml gives its step: its inputs (with
// their defaults), the summary file.
func actionEnv(summary, artifact string, with map[string]string) []string {
	out := with["output-dir"]
	if out == "" {
		out = "seedance-report"
	}
	return []string{"GITHUB_STEP_SUMMARY=" + summary, "GH_ARTIFACT=" + artifact, "INPUT_COMMAND=" + with["command"], "INPUT_GATES=" + with["gates"],
		"INPUT_BASELINE=" + with["baseline"], "INPUT_PROFILE_ARGS=" + with["profile-args"], "INPUT_OUTPUT_DIR=" + out}
}

// snippetPrometheus starts a real Prometheus holding a simulated 2-node
// cluster (seed: its GPUs' UUIDs) labelled cluster="train-a", for ten minutes of yesterday
// (2026-11-29, the range the docs name) and the last ten minutes before
// now, so that --duration 24h and --start/--end both find it. Empty when
// prometheus is not installed.
func snippetPrometheus(t *testing.T, seed int64) string {
	t.Helper()
	if _, err := exec.LookPath("prometheus"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("prometheus is not installed (.ci/run installs it)")
		}
		t.Log("prometheus is not installed: the snippets that read one are skipped (apt-get install prometheus)")
		return ""
	}
	record := func(start time.Time) *profile.Profile {
		clk := sim.NewClock(start)
		sim, err := sim.Open(sim.Options{Nodes: 2, Scenario: sim.ScenarioMixed, Seed: seed, Clock: clk, Start: start})
		if err != nil {
			t.Fatal(err)
		}
		defer sim.Close()
		p, err := source.Record(context.Background(), sim, source.RecordOptions{Interval: 15 * time.Second, Duration: 10 * time.Minute, Clock: clk})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	var om bytes.Buffer
	for _, start := range []time.Time{time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC), time.Now().UTC().Add(-15 * time.Minute).Truncate(time.Second)} {
		var b bytes.Buffer
		if err := dcgmtest.WriteOpenMetrics(&b, record(start)); err != nil {
			t.Fatal(err)
		}
		om.WriteString(strings.TrimSuffix(b.String(), "# EOF\n"))
	}
	// One family per metric name in OpenMetrics: merge the two documents'
	// samples under their # TYPE lines, labelled with the cluster.
	srv := promtest.Start(t, mergeOpenMetrics(om.String(), `cluster="train-a",`))
	return srv.URL
}

// mergeOpenMetrics groups sample lines by family, keeping each family's
// samples in time order, adds a label to each, and ends the document.
func mergeOpenMetrics(doc, label string) []byte {
	fams := map[string][]string{}
	var order []string
	cur := ""
	for _, l := range strings.Split(doc, "\n") {
		switch {
		case strings.HasPrefix(l, "# TYPE "):
			cur = l
			if _, ok := fams[cur]; !ok {
				order = append(order, cur)
				fams[cur] = nil
			}
		case l != "" && !strings.HasPrefix(l, "#"):
			i := strings.IndexByte(l, '{') + 1
			fams[cur] = append(fams[cur], l[:i]+label+l[i:])
		}
	}
	var b strings.Builder
	for _, f := range order {
		lines := fams[f]
		// Series by labels, then time: promtool wants each series ordered.
		sort.SliceStable(lines, func(i, j int) bool {
			return lines[i][:strings.IndexByte(lines[i], '}')] < lines[j][:strings.IndexByte(lines[j], '}')]
		})
		b.WriteString(f + "\n" + strings.Join(lines, "\n") + "\n")
	}
	b.WriteString("# EOF\n")
	return []byte(b.String())
}

// snippetExporters serves two dcgm-exporter stand-ins on loopback, each
// with one simulated node's metrics, and returns them as host:port,…
func snippetExporters(t *testing.T) string {
	t.Helper()
	var hosts []string
	for i := 0; i < 2; i++ {
		doc := fmt.Sprintf("# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n"+
			"DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-%d\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"gpu-0%d\"} %d\n", i, i+1, 10+40*i)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(doc)) }))
		t.Cleanup(srv.Close)
		hosts = append(hosts, strings.TrimPrefix(srv.URL, "http://"))
	}
	return strings.Join(hosts, ",")
}
