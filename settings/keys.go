package settings

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/internal/exit"
	"github.com/seedance/seedance/pricing"
	"github.com/seedance/seedance/recommend"
	"github.com/seedance/seedance/render"
	"github.com/seedance/seedance/source"
	"github.com/seedance/seedance/source/sim"
)

// Key is one setting, defined once. Its config file key, its
// environment variable (SEEDANCE_ + the key), its default, its flag, the
// range checked at start-up, `seedance config view` and the settings tables
// of docs/configuration.md are all made from it.
type Key struct {
	Key string
	// Default's type is the setting's: string, bool, int, int64, float64,
	// Dur (a duration), []string or a map.
	Default any
	Help    string
	// Cmd names the commands (space-separated) whose flag Flag sets the key
	// (Short is its one-letter form); a key without a flag is set by the
	// file or the environment only.
	Cmd, Flag, Short string
	// Split makes a list flag take comma-separated values (--targets a,b);
	// otherwise it repeats (--gate X --gate Y), for values with commas.
	Split bool
	// DocDefault and DocFlag are what docs/configuration.md shows when the
	// default value or the flag alone would not say it.
	DocDefault, DocFlag string
	// Map keys take any sub-key (a map of user-chosen names to values).
	Map bool
	// NoDefault keys are only known, not set: absent unless configured.
	NoDefault bool
	// Range, when set, is the valid range of a number or duration (in
	// seconds), checked at start-up; of every value of a Map key.
	Range *valueRange
}

// Dur is a duration default, written as users write it ("60s", "2h").
type Dur string

// secondsDur writes a default duration in seconds ("60s").
func secondsDur(d time.Duration) Dur { return Dur(fmt.Sprintf("%gs", d.Seconds())) }

// valueRange is an inclusive range of valid values.
type valueRange struct{ Min, Max float64 }

// rng is a range; durations are given in seconds.
func rng(lo, hi float64) *valueRange { return &valueRange{lo, hi} }

const (
	day  = 86400.0
	span = 400 * day // profile.MaxSpan
)

// httpClientKeys are prometheus/common HTTPClientConfig's settings, which
// may also stand directly under prometheus: and scrape:, as in a
// Prometheus scrape config.
var httpClientKeys = map[string]bool{
	"basic_auth": true, "authorization": true, "oauth2": true, "tls_config": true, "http_headers": true,
	"proxy_connect_header": true, "bearer_token": false, "bearer_token_file": false, "proxy_url": false,
	"no_proxy": false, "proxy_from_environment": false, "follow_redirects": false, "enable_http2": false,
}

func init() {
	for _, section := range []string{"prometheus", "scrape"} {
		for k, nested := range httpClientKeys {
			Keys = append(Keys, Key{Key: section + "." + k, Map: nested, NoDefault: true})
		}
	}
}

// The analysis defaults live with the analysis (analyze.DefaultParams,
// analyze.DefaultScaling); the settings take them from there.
var (
	analysisDefaults = analyze.DefaultParams()
	scalingDefaults  = analyze.DefaultScaling()
	holderDefaults   = analyze.DefaultHolderRules()
)

// orList writes "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Keys is every setting seedance knows. A config file key that is not
// here (or below a Map key) is an error.
var Keys = []Key{
	{Key: "profile.source", Default: "nvml", Cmd: "profile", Flag: "source", Help: "sample source: " + orList(source.Names())},
	{Key: "profile.interval", Default: Dur("1s"), Cmd: "profile analyze", Flag: "interval", Help: "time between samples (at least 100ms)", Range: rng(0.1, day)},
	{Key: "profile.duration", Default: Dur("0s"), Cmd: "profile analyze", Flag: "duration", Help: "how long to sample (e.g. 300s, 1h): nvml and scrape sample for it (0: until interrupted, or until CMD exits); prometheus reads the range that ends at --end (default now) and lasts it, unless --start is given; sim simulates it (0: 300s)", Range: rng(0, span)},
	{Key: "profile.output", Default: "profile.json", Cmd: "profile", Flag: "output", Short: "o", Help: "output file; - writes to stdout; a .gz name is gzip-compressed"},
	{Key: "profile.checkpoint", Default: Dur("0s"), Cmd: "profile", Flag: "checkpoint", Help: "rewrite the output file this often during the run (e.g. 60s)", Range: rng(0, day)},
	{Key: "profile.quiet", Default: false, Cmd: "profile", Flag: "quiet", Short: "q", Help: "no progress bar and no summary line"},
	{Key: "nvml.node_name", Default: "", Cmd: "profile analyze", Flag: "node-name", Help: "node name to record (default: the host name)", DocDefault: "host name"},
	{Key: "nvml.proc_root", Default: "/proc", Help: "procfs mount, for process names and pod cgroups"},
	{Key: "nvml.pods_dir", Default: "/var/log/pods", Help: "kubelet pod log directory, for pod names"},
	{Key: "nvml.sys_root", Default: "/sys", Help: "sysfs mount, for each GPU's NUMA node"},
	{Key: "sim.nodes", Default: 8, Cmd: "profile analyze", Flag: "sim-nodes", Help: "number of simulated nodes (--source sim)", Range: rng(1, 10000)},
	{Key: "sim.scenario", Default: "mixed", Cmd: "profile analyze", Flag: "sim-scenario", Help: "simulated scenario: " + orList(sim.Scenarios) + " (docs/simulator.md)"},
	{Key: "sim.seed", Default: int64(1), Cmd: "profile analyze", Flag: "sim-seed", Help: "seed of the simulation: the same seed gives the same profile byte for byte"},
	{Key: "sim.realtime", Default: false, Cmd: "profile analyze", Flag: "sim-realtime", Help: "sample the simulated cluster at wall-clock pace instead of at once"},
	{Key: "sim.start", Default: "", Cmd: "profile analyze", Flag: "sim-start", Help: "RFC 3339 time the simulated clock starts at (default 2026-01-05T09:00:00Z)", DocDefault: "2026-01-05T09:00:00Z"},
	{Key: "analyze.source", Default: "", Cmd: "analyze", Flag: "source", Help: "analyze straight from a source instead of profile files: " + orList(source.Names()) + ", with the settings of seedance profile"},
	{Key: "analyze.report", Default: "cost-savings", Cmd: "analyze", Flag: "report", Help: "report: " + orList(render.Reports)},
	{Key: "analyze.group_by", Default: []string{"namespace"}, Cmd: "analyze", Flag: "group-by", Help: "attribution levels, outermost first: namespace, workload, controller, user, account or team=LABEL (repeatable)"},
	{Key: "analyze.format", Default: "table", Cmd: "analyze", Flag: "format", Short: "f", Help: "output format: " + orList(render.Formats)},
	{Key: "analyze.output", Default: "-", Cmd: "analyze", Flag: "output", Short: "o", Help: "write the report to this file (atomically); - is stdout"},
	{Key: "analyze.idle_threshold_pct", Default: analysisDefaults.IdleThresholdPct, Cmd: "analyze", Flag: "idle-threshold", Help: "a sample is idle when GPU utilization is below this percentage", Range: rng(0, 100)},
	{Key: "analyze.idle_window", Default: secondsDur(analysisDefaults.IdleWindow), Cmd: "analyze", Flag: "idle-window", Help: "an idle run counts when it lasts at least this long", Range: rng(0.001, span)},
	{Key: "analyze.underused_pct", Default: analysisDefaults.UnderusedPct, Cmd: "analyze", Flag: "underused", Help: "a node is under-used when its mean GPU utilization is below this percentage", Range: rng(0, 100)},
	{Key: "analyze.idle_node_share", Default: analysisDefaults.IdleNodeShare, Cmd: "analyze", Flag: "idle-node-share", Help: "a node is idle when idle for at least this share (0–1) of its observed time", Range: rng(0.001, 1)},
	{Key: "analyze.stale_after", Default: Dur("0s"), Cmd: "analyze", Flag: "stale-after", Help: "a node whose newest sample ends longer than this before the window does is stale: not idle now, no command acts on it (0: the idle window)", Range: rng(0, span)},
	{Key: "analyze.fragmentation_ratio", Default: recommend.DefaultFragmentationRatio, Cmd: "analyze", Flag: "fragmentation-ratio", Help: "fragmentation report: a pool whose stranded share of free GPUs is above this (0–1) gets a suggestion", Range: rng(0, 1)},
	{Key: "analyze.dialect", Default: recommend.DialectKubectl, Cmd: "analyze", Flag: "dialect", Help: "commands in suggestions: kubectl, slurm or none"},
	{Key: "analyze.every", Default: Dur("0s"), Cmd: "analyze", Flag: "every", Help: "run again every this long, re-reading the config and rules files when they change (0: once; docs/rules.md, Loop mode)", Range: rng(0, span)},
	{Key: "analyze.listen", Default: "", Cmd: "analyze", Flag: "listen", Help: "with --every: serve the latest report's series at http://ADDR/metrics and /healthz (e.g. :9464)"},
	{Key: "analyze.gates", Default: []string{}, Cmd: "analyze", Flag: "gate", Help: "CI gate over the JSON report, e.g. 'summary.idle_ratio <= 0.2' (repeatable); a failed gate exits 3"},
	{Key: "attribution.idle_holder_util_pct", Default: holderDefaults.IdleUtilPct, Help: "holder rule: a workload holding GPUs below this mean utilization… (0 turns the rule off)", Range: rng(0, 100)},
	{Key: "attribution.idle_holder_hours", Default: holderDefaults.IdleHours, Help: "…for at least this many hours", Range: rng(0, 24*400)},
	{Key: "attribution.small_memory_pct", Default: holderDefaults.SmallMemoryPct, Help: "holder rule: a workload using less than this share of its GPUs' memory (0: off)", Range: rng(0, 100)},
	{Key: "attribution.imbalance_idle_pct", Default: holderDefaults.ImbalanceIdlePct, Help: "holder rule: a multi-GPU workload with one GPU busy and the others below this (0: off)", Range: rng(0, 50)},
	{Key: "pricing.gpu_hour_usd", Default: map[string]float64{}, Help: "USD per GPU-hour by model substring (docs/pricing.md); flag entries override file entries; not settable by environment",
		DocFlag: "--gpu-price MODEL=USD", DocDefault: "built-in table", Map: true, Range: rng(0, 1e6)},
	{Key: "pricing.default_gpu_hour_usd", Default: pricing.DefaultGPUHourUSD, Cmd: "analyze", Flag: "default-gpu-price", Help: "USD per GPU-hour for models with no price", Range: rng(0, 1e6)},
	{Key: "pricing.energy_usd_per_kwh", Default: analysisDefaults.EnergyUSDPerKWh, Cmd: "analyze", Flag: "energy-price", Help: "USD per kWh", Range: rng(0, 1e3)},
	{Key: "scaling.period", Default: secondsDur(scalingDefaults.Period), Help: "length of one autoscaling period (docs/scaling.md)", Range: rng(1, day)},
	{Key: "scaling.weights", Default: scalingDefaults.Weights, Help: "weights of the metrics in the load signal", Map: true, Range: rng(0, 1e3)},
	{Key: "scaling.prefer_sm_active", Default: scalingDefaults.PreferSMActive, Help: "use sm_active_pct instead of gpu_util_pct where present"},
	{Key: "scaling.alpha", Default: scalingDefaults.Alpha, Help: "weight of the newest period in the moving average", Range: rng(0.001, 1)},
	{Key: "scaling.target_pct", Default: scalingDefaults.TargetPct, Help: "utilization the autoscaler aims at", Range: rng(1, 100)},
	{Key: "scaling.lower_pct", Default: scalingDefaults.LowerPct, Help: "scale down below this smoothed utilization", Range: rng(0, 100)},
	{Key: "scaling.up_periods", Default: scalingDefaults.UpPeriods, Help: "periods above target × 1.1 before scaling up", Range: rng(1, 10000)},
	{Key: "scaling.down_periods", Default: scalingDefaults.DownPeriods, Help: "periods below lower_pct before scaling down", Range: rng(1, 10000)},
	{Key: "scaling.min_gpus", Default: scalingDefaults.MinGPUs, Help: "smallest pool size", Range: rng(0, 1e7)},
	{Key: "scaling.max_gpus", Default: scalingDefaults.MaxGPUs, Help: "largest pool size; 0 is the pool's GPUs", Range: rng(0, 1e7)},
	{Key: "scaling.pool_by", Default: scalingDefaults.PoolBy, Cmd: "analyze", Flag: "pool-by", Help: "node label that names the scaling pools (default: GPU model)", DocDefault: "GPU model"},
	{Key: "migration.allow_model_change", Default: false, Cmd: "recommend analyze", Flag: "allow-model-change", Help: "let workloads move to another GPU model (docs/recommend.md)"},
	{Key: "migration.allow_sharing", Default: false, Cmd: "recommend analyze", Flag: "allow-sharing", Help: "pack workloads that use part of a GPU onto shared GPUs (MPS or MIG)"},
	{Key: "migration.max_moves_per_node", Default: 0, Cmd: "recommend analyze", Flag: "max-moves-per-node", Help: "evict at most this many workloads from one node (0: no limit)", Range: rng(0, 1e6)},
	{Key: "migration.move_jobs", Default: false, Cmd: "recommend analyze", Flag: "move-jobs", Help: "let running batch jobs move (Slurm requeues them; their work restarts)"},
	{Key: "migration.move_pending", Default: false, Cmd: "recommend analyze", Flag: "move-pending", Help: "let pending work move off the node its owner asked for (a pod's nodeName or affinity, Slurm's -w)"},
	{Key: "migration.move_blockers", Default: false, Cmd: "recommend analyze", Flag: "move-blockers", Help: "let pods move whose move loses something: no controller, a Job's, a StatefulSet's (docs/recommend.md)"},
	{Key: "slurm.pending", Default: false, Cmd: "profile analyze", Flag: "slurm", Help: "add the pending GPU jobs squeue lists, on the node each waits for, and the user and account of running jobs (squeue, then sacct; run where squeue works: a Slurm node or login node)"},
	{Key: "prometheus.url", Default: "", Cmd: "profile analyze", Flag: "prometheus-url", Help: "Prometheus holding dcgm-exporter metrics (--source prometheus; docs/sources.md)"},
	{Key: "prometheus.step", Default: "auto", Cmd: "profile analyze", Flag: "step", Help: "dcgm-exporter's scrape interval (--source prometheus): auto measures it on each target's samples, which is what the figures use; a duration (30s) is assumed only where a target has one sample, and noted when the data contradicts it"},
	{Key: "prometheus.selector", Default: "", Cmd: "profile analyze", Flag: "selector", Help: `label matchers added to every Prometheus query, e.g. '{cluster="a"}'`},
	{Key: "prometheus.chunk", Default: Dur("2h"), Cmd: "profile analyze", Flag: "prometheus-chunk", Help: "longest time range one Prometheus query reads", Range: rng(1, 31*day)},
	{Key: "prometheus.concurrency", Default: 4, Cmd: "profile analyze", Flag: "prometheus-concurrency", Help: "Prometheus queries in flight at once", Range: rng(1, 64)},
	{Key: "prometheus.timeout", Default: Dur("2m"), Cmd: "profile analyze", Flag: "prometheus-timeout", Help: "timeout of one Prometheus query", Range: rng(0.1, day)},
	{Key: "prometheus.max_samples", Default: 100_000_000, Help: "most samples one batch of nodes holds (about 20 bytes of memory each); past it the read stops with a message saying how to narrow it", Range: rng(1000, 1e10)},
	{Key: "prometheus.pushdown", Default: false, Cmd: "profile analyze", Flag: "pushdown", Help: "read utilization raw and the energy counter as exact per-chunk aggregates, nothing else: the idle time, costs and energy of the raw read for about a tenth of the samples (docs/sources.md, Pushdown)"},
	{Key: "prometheus.batch_samples", Default: 2_500_000, Help: "sample values the nodes read together hold at most (about 20 bytes of memory each): the read's working set, whatever the range or the number of nodes", Range: rng(1000, 1e10)},
	{Key: "prometheus.retries", Default: 3, Help: "retries of a query after a network error, timeout, 429 or 5xx", Range: rng(0, 20)},
	{Key: "prometheus.http", Default: map[string]any{}, Help: "HTTP settings: prometheus/common HTTPClientConfig (basic_auth, authorization, tls_config, proxy_url, http_headers…)", Map: true},
	{Key: "scrape.targets", Default: []string{}, Cmd: "profile analyze", Flag: "targets", Split: true, Help: "dcgm-exporter endpoints to scrape, host:port or URLs (--source scrape)"},
	{Key: "scrape.targets_file", Default: "", Cmd: "profile analyze", Flag: "targets-file", Help: "file with one scrape target per line (--source scrape)"},
	{Key: "scrape.timeout", Default: Dur("10s"), Help: "timeout of one scrape (at most the interval)", Range: rng(0, 3600)},
	{Key: "scrape.http", Default: map[string]any{}, Help: "HTTP settings of the scrapes (like prometheus.http)", Map: true},
	{Key: "limits.expr_time", Default: Dur("1s"), Help: "longest evaluation of one policy rule's condition or one gate (docs/rules.md, Budgets)", Range: rng(0.001, 3600)},
	{Key: "limits.expr_memory_mib", Default: 64, Help: "most memory the values of one evaluation of a condition or gate may take, in MiB", Range: rng(1, 4096)},
	{Key: "limits.rules_time", Default: Dur("30s"), Help: "longest time all policy rules of one run may take together", Range: rng(0.001, day)},
	{Key: "limits.command_time", Default: Dur("60s"), Help: "longest run of one external command (squeue, sacct, scontrol); then it is killed and the run says so", Range: rng(0.1, day)},
	{Key: "limits.command_output_mib", Default: 64, Help: "most output read from one external command, in MiB; past it the command is killed and the run says so", Range: rng(1, 4096)},
	{Key: "limits.http_timeout", Default: Dur("30s"), Help: "with --listen: longest read of a request and longest write of an answer; an idle keep-alive connection is closed after it too", Range: rng(0.1, 3600)},
	{Key: "limits.http_connections", Default: 64, Help: "with --listen: most connections served at once; more wait to be accepted", Range: rng(1, 100000)},
}

// defaultValue is a key's default as viper holds it.
func (k Key) defaultValue() any {
	if d, ok := k.Default.(Dur); ok {
		return string(d)
	}
	return k.Default
}

// docDefault is a key's default as docs/configuration.md shows it.
func (k Key) docDefault() string {
	if k.DocDefault != "" {
		return k.DocDefault
	}
	switch d := k.Default.(type) {
	case string:
		if d == "" {
			return ""
		}
	case []string:
		if len(d) == 0 {
			return ""
		}
		return "`" + strings.Join(d, ", ") + "`"
	case map[string]any:
		return ""
	case map[string]float64:
		parts := make([]string, 0, len(d))
		for _, name := range slices.Sorted(maps.Keys(d)) {
			parts = append(parts, fmt.Sprintf("%s: %g", name, d[name]))
		}
		if len(parts) == 0 {
			return ""
		}
		return "`" + strings.Join(parts, ", ") + "`"
	}
	return "`" + fmt.Sprint(k.defaultValue()) + "`"
}

// docLink turns the docs/NAME.md a help text names into a link, for
// docs/configuration.md (which sits beside them).
var docLink = regexp.MustCompile(`docs/([a-z-]+\.md)`)

// Doc writes the settings tables of docs/configuration.md: every
// key with its flag, environment variable, default and meaning, then every
// range checked at start-up.
func Doc() string {
	var b strings.Builder
	cell := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	b.WriteString("| key | flag | environment | default | meaning |\n|---|---|---|---|---|\n")
	for _, k := range Keys {
		if k.NoDefault {
			continue // an HTTP setting: see prometheus.http
		}
		flag := k.DocFlag
		if flag == "" && k.Flag != "" {
			flag = "--" + k.Flag
			if k.Short != "" {
				flag += ", -" + k.Short
			}
		}
		if flag != "" {
			flag = "`" + flag + "`"
		}
		env := "`" + EnvName(k.Key) + "`"
		if k.Map {
			env = "" // a map is set in the file (or, for pricing, by flags)
		}
		help := docLink.ReplaceAllString(cell(k.Help), "[$1]($1)")
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", k.Key, flag, env, cell(k.docDefault()), help)
	}
	b.WriteString("\n| key | range |\n|---|---|\n")
	for _, k := range Keys {
		if k.Range != nil {
			fmt.Fprintf(&b, "| `%s` | %s |\n", k.Key, rangeText(k))
		}
	}
	return b.String()
}

// formatNames are the format names that, given to --output, are more
// likely a mistaken --format than a file name.
var formatNames = []string{"json", "yaml", "yml", "table", "csv", "markdown", "md", "html", "prom", "kubectl", "slurm"}

// CheckOutputName refuses an output file named like a format: -o json
// meant --format json, as kubectl users write it.
func CheckOutputName(flag, path string) error {
	if slices.Contains(formatNames, path) {
		return exit.Usagef("%s %s would write a file named %q: did you mean --format %s? (write ./%s to mean the file)", flag, path, path, path, path)
	}
	return nil
}
