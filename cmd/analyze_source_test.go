package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/seedance/seedance/internal/exit"

	"github.com/seedance/seedance/internal/testkit/dcgmtest"
	"github.com/seedance/seedance/internal/testkit/promtest"
	"github.com/seedance/seedance/internal/testkit/schematest"
	"github.com/seedance/seedance/internal/testkit/slurmtest"
	"github.com/seedance/seedance/profile"
)

// sameReport compares two JSON reports but for the inputs' names (a file's
// path on one side, "--source NAME" on the other).
func sameReport(t *testing.T, viaFile, direct string) {
	t.Helper()
	norm := func(s string) []byte {
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatalf("%v: %.300s", err, s)
		}
		for _, in := range m["inputs"].([]any) {
			in.(map[string]any)["name"] = "input"
		}
		b, _ := json.MarshalIndent(m, "", " ")
		return b
	}
	a, b := norm(viaFile), norm(direct)
	if !bytes.Equal(a, b) {
		i := 0
		for i < len(a) && i < len(b) && a[i] == b[i] {
			i++
		}
		t.Fatalf("the reports differ at byte %d:\nprofile then analyze: …%s\nanalyze --source:     …%s", i, a[max(0, i-200):min(len(a), i+200)], b[max(0, i-200):min(len(b), i+200)])
	}
}

// TestAnalyzeSourceSimEqualsProfileThenAnalyze: analyze --source sim is
// profile --source sim followed by analyze, number for number.
func TestAnalyzeSourceSimEqualsProfileThenAnalyze(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.json")
	simArgs := []string{"--sim-nodes", "3", "--sim-seed", "4", "--duration", "120", "--interval", "5s"}
	if r := run(t, nil, append([]string{"profile", "--source", "sim", "-o", path, "--quiet"}, simArgs...)...); r.code != 0 {
		t.Fatal(r.errOut)
	}
	viaFile := run(t, nil, "analyze", path, "--report", "all", "-f", "json")
	direct := run(t, nil, append([]string{"analyze", "--source", "sim", "--report", "all", "-f", "json"}, simArgs...)...)
	if viaFile.code != 0 || direct.code != 0 {
		t.Fatalf("exit %d / %d: %s %s", viaFile.code, direct.code, viaFile.errOut, direct.errOut)
	}
	sameReport(t, viaFile.out, direct.out)
	if r := run(t, nil, "analyze", path, "--source", "sim"); r.code != exit.Usage {
		t.Fatalf("files and --source together: exit %d %s", r.code, r.errOut)
	}
}

// TestAnalyzeSourcePrometheusEqualsProfileThenAnalyze: on each of two real
// engines, Prometheus and VictoriaMetrics, holding the same data, analyze
// --source prometheus gives the report of profile --source prometheus
// followed by analyze: the same idle intervals, idle GPU-hours, verdicts,
// costs and energy (issue #13).
func TestAnalyzeSourcePrometheusEqualsProfileThenAnalyze(t *testing.T) {
	sim, err := profile.ReadFile(simProfile(t, "--interval", "15s", "--duration", "15m", "--sim-nodes", "3"), nil)
	if err != nil {
		t.Fatal(err)
	}
	var om bytes.Buffer
	if err := dcgmtest.WriteOpenMetrics(&om, sim); err != nil {
		t.Fatal(err)
	}
	for engine, srv := range map[string]*promtest.Server{"prometheus": promtest.Start(t, om.Bytes()), "victoria-metrics": promtest.StartVictoriaMetrics(t, om.Bytes())} {
		t.Run(engine, func(t *testing.T) {
			promArgs := []string{"--prometheus-url", srv.URL, "--start", "2026-01-05T09:00:00Z", "--end", "2026-01-05T09:15:00Z", "--step", "15s"}
			path := filepath.Join(t.TempDir(), "cluster.json")
			if r := run(t, nil, append([]string{"profile", "--source", "prometheus", "-o", path, "--quiet"}, promArgs...)...); r.code != 0 {
				t.Fatal(r.errOut)
			}
			viaFile := run(t, nil, "analyze", path, "--report", "all", "-f", "json", "--idle-window", "30s")
			direct := run(t, nil, append([]string{"analyze", "--source", "prometheus", "--report", "all", "-f", "json", "--idle-window", "30s"}, promArgs...)...)
			if viaFile.code != 0 || direct.code != 0 {
				t.Fatalf("exit %d / %d: %s %s", viaFile.code, direct.code, viaFile.errOut, direct.errOut)
			}
			sameReport(t, viaFile.out, direct.out)
			var rep struct {
				Summary struct {
					IdleGPUHours float64 `json:"idle_gpu_hours"`
				} `json:"summary"`
			}
			if err := json.Unmarshal([]byte(direct.out), &rep); err != nil || rep.Summary.IdleGPUHours <= 0 {
				t.Fatalf("a report with nothing idle proves little: %+v %v", rep.Summary, err)
			}
		})
	}
}

// TestVictoriaMetricsAgreesWithPrometheus: the same dcgm-exporter and
// kube-state-metrics data in two real engines, Prometheus 2.x and
// VictoriaMetrics, give the same report through the PromQL subset seedance
// uses, read raw or with --pushdown. At a range's left edge Prometheus 2.x
// includes a sample exactly on the edge and VictoriaMetrics does not, so
// the ranges start between samples and exactly on them (#25, case 5): a
// sample at --start is in the report on both engines (docs/sources.md).
func TestVictoriaMetricsAgreesWithPrometheus(t *testing.T) {
	sim, err := profile.ReadFile(simProfile(t, "--interval", "15s", "--duration", "15m"), nil)
	if err != nil {
		t.Fatal(err)
	}
	var om bytes.Buffer
	if err := dcgmtest.WriteOpenMetrics(&om, sim); err != nil {
		t.Fatal(err)
	}
	engines := map[string]*promtest.Server{"prometheus": promtest.Start(t, om.Bytes()), "victoria-metrics": promtest.StartVictoriaMetrics(t, om.Bytes())}
	var reports map[string]string
	for _, start := range []string{"2026-01-05T08:59:50Z", "2026-01-05T09:00:00Z", "2026-01-05T09:00:15Z", "2026-01-05T09:00:00.001Z"} {
		for _, mode := range []string{"--pushdown=false", "--pushdown"} {
			reports = map[string]string{}
			for name, srv := range engines {
				r := run(t, nil, "analyze", "--source", "prometheus", "--prometheus-url", srv.URL, "--start", start,
					"--end", "2026-01-05T09:15:00Z", "--report", "all", "-f", "json", "--idle-window", "30s", mode, "--prometheus-chunk", "5m")
				if r.code != 0 {
					t.Fatalf("%s: exit %d: %s", name, r.code, r.errOut)
				}
				reports[name] = r.out
			}
			t.Logf("--start %s %s", start, mode)
			// What pushdown transferred is the engine's business: with a
			// sample 1 ms before a chunk, Prometheus 2.x's chunk is read raw.
			cost := regexp.MustCompile(`read \d+ raw samples and \d+ aggregates`)
			for k, v := range reports {
				reports[k] = cost.ReplaceAllString(v, "read N raw samples and M aggregates")
			}
			sameReport(t, reports["prometheus"], reports["victoria-metrics"])
			if start == "2026-01-05T09:00:00Z" || start == "2026-01-05T09:00:15Z" {
				var rep struct {
					Nodes []struct {
						Intervals []struct {
							StartS float64 `json:"start_s"`
						} `json:"idle_intervals"`
					} `json:"nodes"`
				}
				_ = json.Unmarshal([]byte(reports["victoria-metrics"]), &rep)
				first := false
				for _, n := range rep.Nodes {
					first = first || len(n.Intervals) > 0 && n.Intervals[0].StartS == 0
				}
				if !first {
					t.Errorf("--start %s %s: no idle interval starts at 0: the sample at --start was lost", start, mode)
				}
			}
		}
	}
	var rep struct {
		Nodes []struct {
			Pending int `json:"pending_workloads"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(reports["victoria-metrics"]), &rep); err != nil {
		t.Fatal(err)
	}
	pending := 0
	for _, n := range rep.Nodes {
		pending += n.Pending
	}
	if len(rep.Nodes) != 8 || pending == 0 {
		t.Fatalf("%d nodes, %d pending workloads: the kube-state-metrics queries were not exercised", len(rep.Nodes), pending)
	}
}

// TestAttributionReport: --report attribution writes a schema-valid
// section that gates can read; a --group-by that names no grouping is a
// usage error.
func TestAttributionReport(t *testing.T) {
	path := simProfile(t, "--duration", "120", "--sim-nodes", "2")
	r := run(t, nil, "analyze", path, "--report", "attribution", "--group-by", "namespace", "--group-by", "controller", "-f", "json",
		"--gate", "attribution.total.idle_held_gpu_hours == summary.idle_gpu_hours")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	schematest.Validate(t, "report-v1.schema.json", []byte(r.out))
	var rep struct {
		Attribution struct {
			GroupBy []string `json:"group_by"`
			Groups  []struct {
				Key []string `json:"key"`
			} `json:"groups"`
		} `json:"attribution"`
	}
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil || len(rep.Attribution.Groups) == 0 || len(rep.Attribution.Groups[0].Key) != 2 {
		t.Fatalf("%v: %+v", err, rep.Attribution)
	}
	if r := run(t, nil, "analyze", path, "--report", "attribution", "--group-by", "owner"); r.code != exit.Usage || !strings.Contains(r.errOut, `invalid --group-by "owner"`) {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
}

// TestAttributionByTeamFromPrometheus: the team of each pod comes from
// kube-state-metrics' kube_pod_labels in a real Prometheus, and attribution
// groups the GPU time by it. The series whose exported_pod names a pod
// give it its tenure: a pod that held its GPU for the second half of the
// range only gets that interval, and half the GPU-hours of its siblings.
func TestAttributionByTeamFromPrometheus(t *testing.T) {
	sim, err := profile.ReadFile(simProfile(t, "--interval", "15s", "--duration", "15m"), nil)
	if err != nil {
		t.Fatal(err)
	}
	late := &sim.Nodes[1].Workloads[0] // a llama-7b-infer pod on node-gpu-02
	late.Intervals = []profile.Tenure{{StartS: 450, EndS: 900}}
	var om bytes.Buffer
	if err := dcgmtest.WriteOpenMetricsLayout(&om, sim, dcgmtest.LayoutKubePrometheus); err != nil {
		t.Fatal(err)
	}
	srv := promtest.Start(t, om.Bytes())
	r := run(t, nil, "analyze", "--source", "prometheus", "--prometheus-url", srv.URL, "--start", "2026-01-05T09:00:00Z",
		"--end", "2026-01-05T09:15:00Z", "--step", "15s", "--report", "attribution", "--group-by", "team=team", "--group-by", "controller", "-f", "json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	var rep struct {
		Attribution struct {
			Groups []struct {
				Key          []string `json:"key"`
				Workloads    int      `json:"workloads"`
				HeldGPUHours float64  `json:"held_gpu_hours"`
			} `json:"groups"`
		} `json:"attribution"`
	}
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil {
		t.Fatal(err)
	}
	teams, controllers := map[string]bool{}, map[string]int{}
	for _, g := range rep.Attribution.Groups {
		teams[g.Key[0]] = true
		controllers[g.Key[1]] = g.Workloads
	}
	if !teams["research"] || !teams["serving"] || teams["(none)"] {
		t.Fatalf("teams %v: every pod should have its kube_pod_labels team", teams)
	}
	// kube_pod_owner: the ReplicaSets of one Deployment are one controller.
	if controllers["inference/Deployment/llama-7b-infer"] < 2 {
		t.Fatalf("controllers %v", controllers)
	}

	// The profile: the late pod's tenure, and the namespace's labels.
	path := filepath.Join(t.TempDir(), "p.json")
	if r := run(t, nil, "profile", "--source", "prometheus", "--prometheus-url", srv.URL, "--start", "2026-01-05T09:00:00Z",
		"--end", "2026-01-05T09:15:00Z", "--step", "15s", "-o", path, "--quiet"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	got, err := profile.ReadFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range got.Nodes[1].Workloads {
		want := "[]"
		if w.ID == late.ID {
			want = "[{450 900}]"
		}
		if fmt.Sprint(w.Intervals) != want || w.Labels["cost_center"] != dcgmtest.CostCenter(w.Labels["namespace"]) {
			t.Errorf("%s: intervals %v (want %s), labels %v", w.ID, w.Intervals, want, w.Labels)
		}
	}
	r = run(t, nil, "analyze", path, "--report", "attribution", "--group-by", "team=cost_center", "--group-by", "workload", "-f", "json")
	rep.Attribution.Groups = nil
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil {
		t.Fatal(err)
	}
	held := map[string]float64{}
	for _, g := range rep.Attribution.Groups {
		if g.Key[0] != dcgmtest.CostCenter("inference") && g.Key[0] != dcgmtest.CostCenter("training") && g.Key[0] != dcgmtest.CostCenter("eval") && g.Key[0] != dcgmtest.CostCenter("notebooks") {
			t.Errorf("group %v: every pod's namespace has a cost_center", g.Key)
		}
		held[g.Key[1]] = g.HeldGPUHours
	}
	sibling := sim.Nodes[1].Workloads[1].ID
	if h, s := held[late.ID], held[sibling]; s == 0 || math.Abs(h-s/2) > 1e-3 {
		t.Fatalf("held GPU-hours: %s %v, %s %v: want half", late.ID, h, sibling, s)
	}
}

// TestSlurmPendingJobMakesANodeStalled: on a real Slurm controller, a
// pending GPU job waiting for node-gpu-02 makes that idle node stalled, not
// idle, in a profile taken with --slurm (issue #18).
func TestSlurmPendingJobMakesANodeStalled(t *testing.T) {
	c := slurmtest.Start(t, "node-gpu-01", "node-gpu-02", "node-gpu-03")
	job := c.Submit(t, "--gres=gpu:2", "-w", "node-gpu-02", "-A", "research") // no slurmd there: it waits
	path := slurmProfile(t, c)
	r := run(t, nil, "analyze", path, "-f", "json")
	var rep struct {
		Nodes []struct {
			Name    string `json:"name"`
			Verdict string `json:"verdict"`
			Pending int    `json:"pending_workloads"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil {
		t.Fatalf("%v: %s", err, r.errOut)
	}
	verdicts := map[string]string{}
	for _, n := range rep.Nodes {
		verdicts[n.Name] = n.Verdict
		if n.Name == "node-gpu-02" && n.Pending != 1 {
			t.Errorf("node-gpu-02: %d pending workloads, want job %s", n.Pending, job)
		}
	}
	if verdicts["node-gpu-02"] != "stalled" || verdicts["node-gpu-03"] != "idle" {
		t.Fatalf("verdicts %v: node-gpu-02 should be stalled behind job %s, node-gpu-03 idle", verdicts, job)
	}
}

// pushdownFigures are the figures pushdown must give exactly as the raw
// read does (issue #13): idle intervals, idle GPU-hours, verdicts, costs,
// energy, utilization.
type pushdownFigures struct {
	Summary struct {
		ObservedGPUHours float64  `json:"observed_gpu_hours"`
		AvgGPUUtilPct    *float64 `json:"avg_gpu_util_pct"`
		IdleGPUHours     float64  `json:"idle_gpu_hours"`
		IdleCostUSD      float64  `json:"idle_cost_usd"`
		EnergyKWh        float64  `json:"energy_kwh"`
		EnergyCostUSD    float64  `json:"energy_cost_usd"`
		IdleNodes        int      `json:"idle_nodes"`
		Notes            []string `json:"notes"`
	} `json:"summary"`
	Nodes []struct {
		Name          string           `json:"name"`
		Verdict       string           `json:"verdict"`
		AvgGPUUtilPct *float64         `json:"avg_gpu_util_pct"`
		ObservedS     float64          `json:"observed_s"`
		IdleGPUHours  float64          `json:"idle_gpu_hours"`
		IdleCostUSD   float64          `json:"idle_cost_usd"`
		EnergyKWh     float64          `json:"energy_kwh"`
		IdleIntervals []map[string]any `json:"idle_intervals"`
	} `json:"nodes"`
	Warnings []string `json:"warnings"`
}

// TestPushdownEqualsRaw: on Prometheus and on VictoriaMetrics, analyze
// --source prometheus --pushdown gives the raw read's idle intervals, idle
// GPU-hours, verdicts, costs, energy and utilization, number for number,
// over data with an energy counter reset, a GPU's two-minute gap, a GPU
// without an energy counter, a GPU whose utilization is missing from
// scrapes its other metrics are in, and chunk edges, for at least 8×
// fewer values read (docs/performance.md has the figure at fleet scale).
func TestPushdownEqualsRaw(t *testing.T) {
	sim, err := profile.ReadFile(simProfile(t, "--interval", "15s", "--duration", "30m", "--sim-nodes", "3"), nil)
	if err != nil {
		t.Fatal(err)
	}
	gpus := sim.Nodes[1].GPUs
	for i := 30; i < len(gpus[0].Series.EnergyJ); i++ { // a driver reload: the counter starts again
		gpus[0].Series.EnergyJ[i] = float64(i-30) * 1000
	}
	for m := profile.Metric(0); m < profile.NumMetrics; m++ { // the exporter down for two minutes
		if col := *gpus[1].Series.Col(m); col != nil {
			for i := 20; i < 28; i++ {
				col[i] = profile.Null
			}
		}
	}
	gpus[2].Series.EnergyJ = nil // power only: pushdown reads power raw
	for i := 5; i < len(gpus[3].Series.GPUUtilPct); i += 37 {
		gpus[3].Series.GPUUtilPct[i] = profile.Null // dcgm-exporter leaves a blank field out of its scrape
	}
	var om bytes.Buffer
	if err := dcgmtest.WriteOpenMetrics(&om, sim); err != nil {
		t.Fatal(err)
	}
	for engine, srv := range map[string]*promtest.Server{"prometheus": promtest.Start(t, om.Bytes()), "victoria-metrics": promtest.StartVictoriaMetrics(t, om.Bytes())} {
		t.Run(engine, func(t *testing.T) {
			args := []string{"analyze", "--source", "prometheus", "--prometheus-url", srv.URL, "--start", "2026-01-05T09:00:00Z", "--end", "2026-01-05T09:30:00Z",
				"--step", "15s", "--prometheus-chunk", "10m", "-f", "json", "--idle-window", "30s"}
			raw, push := run(t, nil, args...), run(t, nil, append(args, "--pushdown")...)
			if raw.code != 0 || push.code != 0 {
				t.Fatalf("exit %d / %d: %s %s", raw.code, push.code, raw.errOut, push.errOut)
			}
			var a, b pushdownFigures
			if err := json.Unmarshal([]byte(raw.out), &a); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(push.out), &b); err != nil {
				t.Fatal(err)
			}
			// What pushdown read is a note, not a warning: it would bury
			// the warnings that matter.
			note := ""
			for _, n := range b.Summary.Notes {
				if strings.Contains(n, "pushdown: read") {
					note = n
				}
			}
			for _, w := range b.Warnings {
				if strings.Contains(w, "pushdown: read") {
					t.Errorf("pushdown's statistics are a warning: %s", w)
				}
			}
			b.Warnings, a.Warnings, b.Summary.Notes, a.Summary.Notes = nil, nil, nil, nil
			ja, _ := json.Marshal(a)
			jb, _ := json.Marshal(b)
			if !bytes.Equal(ja, jb) {
				t.Fatalf("pushdown differs from the raw read:\nraw:      %s\npushdown: %s", ja, jb)
			}
			if a.Summary.IdleGPUHours <= 0 || a.Summary.EnergyKWh <= 0 {
				t.Fatalf("nothing idle or no energy proves little: %+v", a.Summary)
			}
			var rawN, aggN, allN int
			if _, err := fmt.Sscanf(note[strings.Index(note, "pushdown: read"):], "pushdown: read %d raw samples and %d aggregates where every metric raw is about %d samples", &rawN, &aggN, &allN); err != nil {
				t.Fatalf("note %q: %v", note, err)
			}
			if allN < 8*(rawN+aggN) {
				t.Fatalf("pushdown read %d samples and %d aggregates of about %d: not 8× fewer", rawN, aggN, allN)
			}
			t.Logf("%s: %d raw samples + %d aggregates in place of about %d (%.1f×)", engine, rawN, aggN, allN, float64(allN)/float64(rawN+aggN))
		})
	}
}

// TestSlurmSuggestionsOnRealController (#26): every command of analyze's
// suggestions in the Slurm dialect runs against a real slurmctld: the idle
// nodes are drained, the stalled node's questions are answered, and the
// node the pending job waits for is not drained.
func TestSlurmSuggestionsOnRealController(t *testing.T) {
	c := slurmtest.Start(t, "node-gpu-01", "node-gpu-02", "node-gpu-03")
	c.Submit(t, "--gres=gpu:2", "-w", "node-gpu-02") // no slurmd there: it waits
	path := slurmProfile(t, c)
	r := run(t, nil, "analyze", path, "--dialect", "slurm", "-f", "json")
	var rep struct {
		Suggestions []struct{ Kind, Node, Command string } `json:"suggestions"`
	}
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil {
		t.Fatalf("%v: %s", err, r.errOut)
	}
	ran := 0
	for _, s := range rep.Suggestions {
		if s.Command == "" {
			continue
		}
		cmd := exec.Command("bash", "-c", s.Command)
		cmd.Env = c.Env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s on %s: %s: %v\n%s", s.Kind, s.Node, s.Command, err, out)
		}
		ran++
	}
	if ran < 2 {
		t.Fatalf("%d commands ran: %+v", ran, rep.Suggestions)
	}
	if st := c.Node(t, "node-gpu-03", "State"); !strings.Contains(st, "DRAIN") {
		t.Errorf("node-gpu-03 is %s, want drained by its release-node command", st)
	}
	if st := c.Node(t, "node-gpu-02", "State"); strings.Contains(st, "DRAIN") {
		t.Errorf("node-gpu-02, which a pending job waits for, was drained: %s", st)
	}
}

// slurmProfile is a profile of the simulated idle cluster of c's three
// nodes taken with --slurm against c (its SLURM_CONF in the environment).
func slurmProfile(t *testing.T, c *slurmtest.Cluster) string {
	t.Helper()
	c.UseConf(t)
	path := filepath.Join(t.TempDir(), "p.json")
	if r := run(t, nil, "profile", "--source", "sim", "--sim-scenario", "idle", "--sim-nodes", "3", "--duration", "120", "--slurm", "-o", path, "--quiet"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	return path
}
