package settings

import (
	"time"

	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/seedance/seedance/internal/setting"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/internal/exit"
	"github.com/seedance/seedance/internal/shell"
	"github.com/seedance/seedance/pricing"
)

// The analysis defaults live with the analysis (analyze.DefaultParams,
// analyze.DefaultScaling); the settings take them from there.
var (
	analysisDefaults = analyze.DefaultParams()
	scalingDefaults  = analyze.DefaultScaling()
	holderDefaults   = analyze.DefaultHolderRules()
	queueDefaults    = analyze.DefaultQueueParams()
)

// Keys is every setting seedance knows: its own, then each source's
// (declared where the source registers its section, internal/setting). A
// config file key that is not here (or below a Map key) is an error. The
// names in its help (sources, formats, reports) are their registries',
// which the program links (cmd): the table is made at its first use, after
// every registry's init.
var Keys = sync.OnceValue(func() []setting.Key {
	all := append(ownKeys(), sourceKeys()...)
	for i, k := range all {
		all[i].Cmd += reclaimAlso(k) // reclaim reads what ledger update reads
	}
	return append(all, reclaimKeys()...)
})

// sourceKeys are the registered sources' settings, by source name.
func sourceKeys() []setting.Key {
	var out []setting.Key
	for _, r := range setting.Sections() {
		for _, k := range r.Keys {
			if strings.Contains(k.Cmd, "analyze") {
				k.Cmd += " ledger-update" // wherever a source is read
			}
			out = append(out, k)
		}
	}
	return out
}

// DefaultFragmentationRatio is analyze.fragmentation_ratio's default, the
// fragmentation white paper's threshold (recommend.DefaultFragmentationRatio,
// which a test of recommend holds equal).
const DefaultFragmentationRatio = 0.35

// ownKeys are seedance's settings that no source owns.
func ownKeys() []setting.Key {
	sources, reports, formats := setting.OrList(setting.NameList(setting.KindSource)), setting.OrList(setting.NameList(setting.KindReport)), setting.OrList(setting.NameList(setting.KindFormat))
	return []setting.Key{
		{Key: "profile.source", Default: "nvml", Cmd: "profile", Flag: "source", Help: "sample source: " + sources},
		{Key: "profile.interval", Default: setting.Dur("1s"), Cmd: "profile analyze ledger-update", Flag: "interval", Help: "time between samples (at least 100ms)", Range: setting.Rng(0.1, setting.Day)},
		{Key: "profile.duration", Default: setting.Dur("0s"), Cmd: "profile analyze ledger-update", Flag: "duration", Help: "how long to sample (e.g. 300s, 1h): nvml and scrape sample for it (0: until interrupted, or until CMD exits); prometheus reads the range that ends at --end (default now) and lasts it, unless --start is given; sim simulates it (0: 300s)", Range: setting.Rng(0, setting.Span)},
		{Key: "profile.output", Default: "profile.json", Cmd: "profile", Flag: "output", Short: "o", Help: "output file; - writes to stdout; a .gz name is gzip-compressed, a .zst name zstd-compressed"},
		{Key: "profile.checkpoint", Default: setting.Dur("0s"), Cmd: "profile", Flag: "checkpoint", Help: "rewrite the output file this often during the run (e.g. 60s)", Range: setting.Rng(0, setting.Day)},
		{Key: "profile.quiet", Default: false, Cmd: "profile", Flag: "quiet", Short: "q", Help: "no progress bar and no summary line"},
		{Key: "analyze.source", Default: "", Cmd: "analyze ledger-update", Flag: "source", Help: "analyze straight from a source instead of profile files: " + sources + ", with the settings of seedance profile"},
		{Key: "analyze.report", Default: "cost-savings", Cmd: "analyze", Flag: "report", Help: "report: " + reports},
		{Key: "analyze.group_by", Default: []string{"namespace"}, Cmd: "analyze", Flag: "group-by", Help: "attribution levels, outermost first: namespace, workload, controller, user, account, model or team=LABEL (repeatable)"},
		{Key: "analyze.format", Default: "table", Cmd: "analyze", Flag: "format", Short: "f", Help: "output format: " + formats},
		{Key: "analyze.output", Default: "-", Cmd: "analyze", Flag: "output", Short: "o", Help: "write the report to this file (atomically); - is stdout"},
		{Key: "analyze.keep", Default: 0, Cmd: "analyze", Flag: "keep", Help: "with --output FILE: also write each report to a dated copy beside it (FILE's name with the window's end, report-20261201T1000Z.json) and keep the newest N of them (0: none)", Range: setting.Rng(0, 1e5)},
		{Key: "analyze.idle_threshold_pct", Default: analysisDefaults.IdleThresholdPct, Cmd: "analyze ledger-update", Flag: "idle-threshold", Help: "a sample is idle when GPU utilization is below this percentage", Range: setting.Rng(0, 100)},
		{Key: "analyze.idle_window", Default: setting.SecondsDur(analysisDefaults.IdleWindow), Cmd: "analyze ledger-update", Flag: "idle-window", Help: "an idle run counts when it lasts at least this long", Range: setting.Rng(0.001, setting.Span)},
		{Key: "analyze.underused_pct", Default: analysisDefaults.UnderusedPct, Cmd: "analyze", Flag: "underused", Help: "a node is under-used when its mean GPU utilization is below this percentage", Range: setting.Rng(0, 100)},
		{Key: "analyze.idle_node_share", Default: analysisDefaults.IdleNodeShare, Cmd: "analyze", Flag: "idle-node-share", Help: "a node is idle when idle for at least this share (0–1) of its observed time", Range: setting.Rng(0.001, 1)},
		{Key: "analyze.stale_after", Default: setting.Dur("0s"), Cmd: "analyze", Flag: "stale-after", Help: "a node whose newest sample ends longer than this before the window does is stale: not idle now, no command acts on it (0: the idle window)", Range: setting.Rng(0, setting.Span)},
		{Key: "analyze.fragmentation_ratio", Default: DefaultFragmentationRatio, Cmd: "analyze", Flag: "fragmentation-ratio", Help: "fragmentation report: a pool whose stranded share of free GPUs is above this (0–1) gets a suggestion", Range: setting.Rng(0, 1)},
		{Key: "analyze.dialect", Default: shell.Kubectl, Cmd: "analyze", Flag: "dialect", Help: "commands in suggestions: kubectl, slurm or none"},
		{Key: "analyze.every", Default: setting.Dur("0s"), Cmd: "analyze", Flag: "every", Help: "run again every this long, re-reading the config and rules files when they change (0: once; docs/rules.md, Loop mode)", Range: setting.Rng(0, setting.Span)},
		{Key: "analyze.listen", Default: "", Cmd: "analyze", Flag: "listen", Help: "with --every: serve the latest report's series at http://ADDR/metrics and /healthz (e.g. :9464)"},
		{Key: "analyze.gates", Default: []string{}, Cmd: "analyze", Flag: "gate", Help: "CI gate over the JSON report, e.g. 'summary.idle_ratio <= 0.2' (repeatable); a failed gate exits 3"},
		{Key: "attribution.idle_holder_util_pct", Default: holderDefaults.IdleUtilPct, Help: "holder rule: a workload holding GPUs below this mean utilization… (0 turns the rule off)", Range: setting.Rng(0, 100)},
		{Key: "attribution.idle_holder_hours", Default: holderDefaults.IdleHours, Help: "…for at least this many hours", Range: setting.Rng(0, 24*400)},
		{Key: "attribution.small_memory_pct", Default: holderDefaults.SmallMemoryPct, Help: "holder rule: a workload using less than this share of its GPUs' memory (0: off)", Range: setting.Rng(0, 100)},
		{Key: "attribution.imbalance_idle_pct", Default: holderDefaults.ImbalanceIdlePct, Help: "holder rule: a multi-GPU workload with one GPU busy and the others below this (0: off)", Range: setting.Rng(0, 50)},
		{Key: "queues.hoard_held_pct", Default: queueDefaults.HeldPct, Help: "hoarding verdict: a queue that held at least this percentage of its quota's GPU-hours… (docs/queues.md)", Range: setting.Rng(0, 1e4)},
		{Key: "queues.hoard_used_pct", Default: queueDefaults.UsedPct, Help: "…and used less than this percentage of what it held, while another queue of its cohort waited", Range: setting.Rng(0, 100)},
		{Key: "queues.percentile", Default: queueDefaults.Percentile, Help: "what-if: a quota is right-sized to this percentile of the queue's used GPUs… (docs/queues.md)", Range: setting.Rng(1, 100)},
		{Key: "queues.headroom_pct", Default: queueDefaults.HeadroomPct, Help: "…plus this percentage, never below its peak use", Range: setting.Rng(0, 1e3)},
		{Key: "queues.usage_half_life", Default: setting.SecondsDur(time.Duration(queueDefaults.HalfLifeS) * time.Second), Help: "fair-share input: the half-life of a queue's decayed use, as Kueue's admissionFairSharing.usageHalfLifeTime (0: no memory)", Range: setting.Rng(0, setting.Span)},
		{Key: "queues.usage_sampling_interval", Default: setting.SecondsDur(time.Duration(queueDefaults.SamplingS) * time.Second), Help: "the queues' timelines' bucket, as Kueue's admissionFairSharing.usageSamplingInterval", Range: setting.Rng(1, setting.Day)},
		{Key: "pricing.gpu_hour_usd", Default: map[string]float64{}, Cmd: "analyze recommend ledger-update", Flag: "gpu-price", Help: "USD per GPU-hour for models whose name contains MODEL, as MODEL=USD (repeatable; docs/pricing.md); flag entries override file entries; not settable by environment",
			DocFlag: "--gpu-price MODEL=USD", DocDefault: "built-in table", Map: true, Range: setting.Rng(0, 1e6)},
		{Key: "pricing.price_file", Default: "", Cmd: "analyze recommend ledger-update", Flag: "price-file", Help: "YAML file of prices per GPU-hour by node (name or glob), node labels (instance type) and GPU model, first match first (docs/pricing.md); it wins over a node's OpenCost cost unless pricing.prefer_discovered"},
		{Key: "pricing.prefer_discovered", Default: false, Cmd: "analyze ledger-update", Flag: "prefer-discovered-prices", Help: "price a node by its OpenCost cost even where --price-file or --gpu-price gives one (docs/pricing.md)"},
		{Key: "pricing.default_gpu_hour_usd", Default: pricing.DefaultGPUHourUSD, Cmd: "analyze ledger-update", Flag: "default-gpu-price", Help: "USD per GPU-hour for models with no price", Range: setting.Rng(0, 1e6)},
		{Key: "pricing.energy_usd_per_kwh", Default: analysisDefaults.EnergyUSDPerKWh, Cmd: "analyze ledger", Flag: "energy-price", Help: "USD per kWh", Range: setting.Rng(0, 1e3)},
		{Key: "scaling.period", Default: setting.SecondsDur(scalingDefaults.Period), Help: "length of one autoscaling period (docs/scaling.md)", Range: setting.Rng(1, setting.Day)},
		{Key: "scaling.weights", Default: scalingDefaults.Weights, Help: "weights of the metrics in the load signal", Map: true, Range: setting.Rng(0, 1e3)},
		{Key: "scaling.prefer_sm_active", Default: scalingDefaults.PreferSMActive, Help: "use sm_active_pct instead of gpu_util_pct where present"},
		{Key: "scaling.alpha", Default: scalingDefaults.Alpha, Help: "weight of the newest period in the moving average", Range: setting.Rng(0.001, 1)},
		{Key: "scaling.target_pct", Default: scalingDefaults.TargetPct, Help: "utilization the autoscaler aims at", Range: setting.Rng(1, 100)},
		{Key: "scaling.lower_pct", Default: scalingDefaults.LowerPct, Help: "scale down below this smoothed utilization", Range: setting.Rng(0, 100)},
		{Key: "scaling.up_periods", Default: scalingDefaults.UpPeriods, Help: "periods above target × 1.1 before scaling up", Range: setting.Rng(1, 10000)},
		{Key: "scaling.down_periods", Default: scalingDefaults.DownPeriods, Help: "periods below lower_pct before scaling down", Range: setting.Rng(1, 10000)},
		{Key: "scaling.min_gpus", Default: scalingDefaults.MinGPUs, Help: "smallest pool size", Range: setting.Rng(0, 1e7)},
		{Key: "scaling.max_gpus", Default: scalingDefaults.MaxGPUs, Help: "largest pool size; 0 is the pool's GPUs", Range: setting.Rng(0, 1e7)},
		{Key: "scaling.pool_by", Default: "", Cmd: "analyze", Flag: "pool-by", Help: "node label that names the pools: the scaling what-if's and the report's (default: GPU model)", DocDefault: "GPU model"},
		{Key: "migration.allow_model_change", Default: false, Cmd: "recommend analyze", Flag: "allow-model-change", Help: "let workloads move to another GPU model (docs/recommend.md)"},
		{Key: "migration.allow_sharing", Default: false, Cmd: "recommend analyze", Flag: "allow-sharing", Help: "pack workloads that use part of a GPU onto shared GPUs (MPS or MIG)"},
		{Key: "migration.max_moves_per_node", Default: 0, Cmd: "recommend analyze", Flag: "max-moves-per-node", Help: "evict at most this many workloads from one node (0: no limit)", Range: setting.Rng(0, 1e6)},
		{Key: "migration.move_jobs", Default: false, Cmd: "recommend analyze", Flag: "move-jobs", Help: "let running batch jobs move (Slurm requeues them; their work restarts)"},
		{Key: "migration.move_pending", Default: false, Cmd: "recommend analyze", Flag: "move-pending", Help: "let pending work move off the node its owner asked for (a pod's nodeName or affinity, Slurm's -w)"},
		{Key: "migration.max_plan_age", Default: setting.Dur("1h"), Cmd: "recommend analyze", Flag: "max-plan-age", Help: "a plan's script refuses to execute (exit 3, before any command) when run longer than this after the end of its data, unless run with --stale-ok; 0: no limit (docs/recommend.md)", Range: setting.Rng(0, 30*setting.Day)},
		{Key: "migration.move_blockers", Default: false, Cmd: "recommend analyze", Flag: "move-blockers", Help: "let pods move whose move loses something: no controller, a Job's, a StatefulSet's (docs/recommend.md)"},
		{Key: "ledger.dsn", Default: "", Cmd: "ledger analyze", Flag: "ledger", Help: "the ledger: a file path (an embedded SQLite database, created when absent) or a postgres:// URL (docs/ledger.md); analyze counts what it reads into it too (each run of a loop)"},
		{Key: "ledger.bucket", Default: setting.Dur("1h"), Cmd: "ledger-update analyze", Flag: "bucket", Help: "a new ledger's bucket length (an existing ledger keeps its own); it divides a day", Range: setting.Rng(60, setting.Day)},
		{Key: "ledger.cluster", Default: "", Cmd: "ledger-update analyze", Flag: "cluster", Help: "the cluster the ledger counts this data as (each has its own data end; docs/ledger.md): default the cluster the source names (Prometheus' cluster label), else \"default\"; a ledger of several clusters needs a name for each"},
		{Key: "ledger.share_idle", Default: "", Cmd: "ledger-report ledger-export", Flag: "share-idle", Help: "add the charges (docs/chargeback.md): none keeps what no workload held on the unallocated row; weighted shares it over the teams by the cost each held in its scope and day; even splits it equally among them"},
		{Key: "ledger.units", Default: false, Cmd: "ledger-report", Flag: "units", Help: "add the unit figures: what each request, token or unit of work cost in the window, by --by and by model (docs/units.md)"},
		{Key: "ledger.queues", Default: false, Cmd: "ledger-report", Flag: "queues", Help: "add the queues' figures: quota against measured use by the hour, the hoarding verdict and the quota what-if (docs/queues.md)"},
		{Key: "ledger.share_idle_by", Default: "cluster", Cmd: "ledger-report ledger-export", Flag: "share-idle-by", Help: "where unallocated cost is shared: node (among the holders of the node's GPUs), pool (of the GPUs of its model in its cluster) or cluster"},
		{Key: "ledger.budgets_file", Default: "", Cmd: "ledger-report ledger-check analyze", Flag: "budgets", Help: "YAML file of monthly budgets by group (by, key, monthly, currency, from; docs/chargeback.md): the report shows each one's month to date and forecast; ledger check gates on them"},
		{Key: "ledger.budget_threshold_pct", Default: 100.0, Cmd: "ledger-check", Flag: "fail-at", Help: "ledger check fails (exit 3) when a budget's forecast (or actual, --on actual) reaches this percentage of it", Range: setting.Rng(0, 1e6)},
		{Key: "ledger.check_integrity", Default: false, Cmd: "ledger-check", Flag: "integrity", Help: "ledger check runs the database's own full integrity check of the ledger (SQLite's integrity_check; PostgreSQL: every table read, amcheck on every index when installed) and fails (exit 1) on any problem; --budgets is then optional (docs/ledger.md)"},
		{Key: "ledger.budget_on", Default: "forecast", Cmd: "ledger-check", Flag: "on", Help: "what ledger check compares with the threshold: forecast (the month-end forecast) or actual (the month so far)"},
		{Key: "ledger.carbon_intensity_file", Default: "", Cmd: "ledger-report ledger-export", Flag: "carbon-intensity", Help: "hourly grid carbon intensity CSV (datetime, zone = the cluster's name, gco2e_per_kwh; Electricity Maps' hourly exports too): adds the charges' emissions (docs/chargeback.md, Emissions)"},
		{Key: "ledger.max_lag", Default: setting.Dur("2h"), Cmd: "ledger-report ledger-export", Flag: "max-lag", Help: "a cluster whose data ends more than this before the latest cluster's, or before now, is a warning in reports, exports and checks, and the budgets it bears on have no forecast (docs/ledger.md)", Range: setting.Rng(60, 400*setting.Day)},
		{Key: "ledger.forecast_min_observed", Default: setting.Dur("6h"), Cmd: "ledger-check", Flag: "forecast-min-observed", Help: "a budget's month-end forecast is null (and fails ledger check) until each cluster it bears on has counted this much of the month (docs/chargeback.md)", Range: setting.Rng(0, 31*setting.Day)},
		{Key: "ledger.step", Default: setting.Dur("1h"), Cmd: "ledger-update analyze", Flag: "ledger-step", Help: "the longest range one ledger update counts at once, read from Prometheus or from -i files past the ledger's data end: a longer one is counted in steps of it, each one transaction (memory holds one step's counting; docs/ledger.md, Memory)", Range: setting.Rng(60, setting.Day)},
		{Key: "slurm.pending", Default: false, Cmd: "profile analyze", Flag: "slurm", Help: "add the pending GPU jobs squeue lists, on the node each waits for, and the user and account of running jobs (squeue, then sacct; run where squeue works: a Slurm node or login node)"},
		{Key: "slurm.queues", Default: "account", Cmd: "profile analyze", Flag: "slurm-queues", Help: "what holds GPU quota in Slurm, read as queues with --slurm: account (each account's GrpTRES and GrpTRESMins gres/gpu, its parent the cohort) or qos (each QOS's)"},
		{Key: "limits.expr_time", Default: setting.Dur("1s"), Help: "longest evaluation of one policy rule's condition or one gate (docs/rules.md, Budgets)", Range: setting.Rng(0.001, 3600)},
		{Key: "limits.expr_memory_mib", Default: 64, Help: "most memory the values of one evaluation of a condition or gate may take, in MiB", Range: setting.Rng(1, 4096)},
		{Key: "limits.rules_time", Default: setting.Dur("30s"), Help: "longest time all policy rules of one run may take together", Range: setting.Rng(0.001, setting.Day)},
		{Key: "limits.command_time", Default: setting.Dur("60s"), Help: "longest run of one external command (squeue, sacct, scontrol); then it is killed and the run says so", Range: setting.Rng(0.1, setting.Day)},
		{Key: "limits.command_output_mib", Default: 64, Help: "most output read from one external command, in MiB; past it the command is killed and the run says so", Range: setting.Rng(1, 4096)},
		{Key: "limits.http_timeout", Default: setting.Dur("30s"), Help: "with --listen: longest read of a request and longest write of an answer; an idle keep-alive connection is closed after it too", Range: setting.Rng(0.1, 3600)},
		{Key: "limits.http_connections", Default: 64, Help: "with --listen: connections of one address (4× this in all) and connections waiting over 2 s for a header; past it the oldest idle one is closed", Range: setting.Rng(1, 100000)},
	}
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
	for _, k := range Keys() {
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
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", k.Key, flag, env, cell(k.DocValue()), help)
	}
	b.WriteString("\n| key | range |\n|---|---|\n")
	for _, k := range Keys() {
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
