package cmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
	"gopkg.in/yaml.v3"
)

// configKey is one configuration setting: its key, default and help.
type configKey struct {
	Key     string
	Default any
	Help    string
	// Map keys take any sub-key (a map of user-chosen names to values).
	Map bool
	// NoDefault keys are only known, not set: absent unless configured.
	NoDefault bool
	// Range, when set, is the valid range of a number or duration (in
	// seconds), checked at start-up; of every value of a Map key.
	Range *valueRange
}

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
			configKeys = append(configKeys, configKey{Key: section + "." + k, Map: nested, Help: "HTTP setting (see docs/sources.md)", NoDefault: true})
		}
	}
}

// configKeys is every setting seedance knows. A config file key that is not
// here (or below a Map key) is an error.
var configKeys = []configKey{
	{Key: "profile.source", Default: "nvml", Help: "where samples come from: nvml, sim"},
	{Key: "profile.interval", Default: "1s", Help: "time between samples", Range: rng(0.1, day)},
	{Key: "profile.duration", Default: "0s", Help: "how long to sample; 0 runs until interrupted or the wrapped command exits", Range: rng(0, span)},
	{Key: "profile.output", Default: "profile.json", Help: "output file; - is stdout; .gz is compressed"},
	{Key: "profile.checkpoint", Default: "0s", Help: "rewrite the output this often during a run", Range: rng(0, day)},
	{Key: "profile.quiet", Default: false, Help: "no progress bar and no summary line"},
	{Key: "nvml.node_name", Default: "", Help: "node name to record; the host name when empty"},
	{Key: "nvml.proc_root", Default: "/proc", Help: "procfs mount, for process names and pod cgroups"},
	{Key: "nvml.pods_dir", Default: "/var/log/pods", Help: "kubelet pod log directory, for pod names"},
	{Key: "nvml.sys_root", Default: "/sys", Help: "sysfs mount, for GPU NUMA nodes"},
	{Key: "sim.nodes", Default: 8, Help: "number of simulated nodes", Range: rng(1, 10000)},
	{Key: "sim.scenario", Default: "mixed", Help: "simulated scenario: mixed, idle, busy"},
	{Key: "sim.seed", Default: int64(1), Help: "random seed; the same seed gives the same profile"},
	{Key: "sim.realtime", Default: false, Help: "sample the simulated cluster at wall-clock pace"},
	{Key: "sim.start", Default: "", Help: "RFC 3339 time the simulated clock starts at"},
	{Key: "analyze.report", Default: "cost-savings", Help: "cost-savings, idle, utilization or all"},
	{Key: "analyze.format", Default: "table", Help: "table, json, markdown, csv or prom"},
	{Key: "analyze.output", Default: "-", Help: "report file; - is stdout"},
	{Key: "analyze.idle_threshold_pct", Default: 15.0, Help: "a sample is idle when GPU utilization is below this", Range: rng(0, 100)},
	{Key: "analyze.idle_window", Default: "60s", Help: "an idle run counts when it lasts at least this long", Range: rng(0.001, span)},
	{Key: "analyze.underused_pct", Default: 40.0, Help: "a node is under-used when its mean utilization is below this", Range: rng(0, 100)},
	{Key: "analyze.idle_node_share", Default: 0.5, Help: "a node is idle when idle for at least this share of its observed time", Range: rng(0.001, 1)},
	{Key: "analyze.dialect", Default: "kubectl", Help: "commands in suggestions: kubectl, slurm or none"},
	{Key: "analyze.gates", Default: []string{}, Help: "CI gate expressions over the JSON report"},
	{Key: "pricing.gpu_hour_usd", Default: map[string]float64{}, Help: "USD per GPU-hour by model substring", Map: true, Range: rng(0, 1e6)},
	{Key: "pricing.default_gpu_hour_usd", Default: 1.0, Help: "USD per GPU-hour for models without a price", Range: rng(0, 1e6)},
	{Key: "pricing.energy_usd_per_kwh", Default: 0.12, Help: "USD per kWh", Range: rng(0, 1e3)},
	{Key: "scaling.period", Default: "60s", Help: "length of one autoscaling period", Range: rng(1, day)},
	{Key: "scaling.weights", Default: map[string]float64{"gpu_util_pct": 0.6, "mem_bw_util_pct": 0.4}, Help: "weights of the metrics in the load signal", Map: true, Range: rng(0, 1e3)},
	{Key: "scaling.prefer_sm_active", Default: false, Help: "use sm_active_pct instead of gpu_util_pct where present"},
	{Key: "scaling.alpha", Default: 0.8, Help: "weight of the newest period in the moving average", Range: rng(0.001, 1)},
	{Key: "scaling.target_pct", Default: 70.0, Help: "utilization the autoscaler aims at", Range: rng(1, 100)},
	{Key: "scaling.lower_pct", Default: 30.0, Help: "scale down below this smoothed utilization", Range: rng(0, 100)},
	{Key: "scaling.up_periods", Default: 3, Help: "periods above target × 1.1 before scaling up", Range: rng(1, 10000)},
	{Key: "scaling.down_periods", Default: 5, Help: "periods below lower_pct before scaling down", Range: rng(1, 10000)},
	{Key: "scaling.min_gpus", Default: 1, Help: "smallest pool size", Range: rng(0, 1e7)},
	{Key: "scaling.max_gpus", Default: 0, Help: "largest pool size; 0 is the pool's GPUs", Range: rng(0, 1e7)},
	{Key: "scaling.pool_by", Default: "", Help: "node label that names pools; GPU model when empty"},
	{Key: "migration.allow_model_change", Default: false, Help: "let workloads move to another GPU model"},
	{Key: "migration.allow_sharing", Default: false, Help: "pack fractional workloads onto shared GPUs"},
	{Key: "migration.max_moves_per_node", Default: 0, Help: "evictions allowed per node; 0 is no limit", Range: rng(0, 1e6)},
	{Key: "prometheus.url", Default: "", Help: "Prometheus (or Thanos, Mimir, VictoriaMetrics) holding dcgm-exporter metrics"},
	{Key: "prometheus.step", Default: "15s", Help: "dcgm-exporter's scrape interval: the profile's interval_s", Range: rng(0.001, day)},
	{Key: "prometheus.selector", Default: "", Help: "label matchers added to every query, e.g. {cluster=\"a\"}"},
	{Key: "prometheus.chunk", Default: "2h", Help: "longest time range read by one query", Range: rng(1, 31*day)},
	{Key: "prometheus.concurrency", Default: 4, Help: "queries in flight at once", Range: rng(1, 64)},
	{Key: "prometheus.timeout", Default: "2m", Help: "timeout of one query", Range: rng(0.1, day)},
	{Key: "prometheus.retries", Default: 3, Help: "retries of a query after a timeout, 429 or 5xx", Range: rng(0, 20)},
	{Key: "prometheus.http", Default: map[string]any{}, Help: "HTTP settings (prometheus/common HTTPClientConfig: basic_auth, authorization, tls_config, proxy_url, http_headers…)", Map: true},
	{Key: "scrape.targets", Default: []string{}, Help: "dcgm-exporter endpoints, host:port or URLs"},
	{Key: "scrape.targets_file", Default: "", Help: "file with one scrape target per line"},
	{Key: "scrape.timeout", Default: "10s", Help: "timeout of one scrape", Range: rng(0, 3600)},
	{Key: "scrape.http", Default: map[string]any{}, Help: "HTTP settings for the scrapes (like prometheus.http)", Map: true},
}

// Config is the typed configuration, filled from flags, env, file and defaults.
type Config struct {
	Profile struct {
		Source     string        `mapstructure:"source"`
		Interval   time.Duration `mapstructure:"interval"`
		Duration   time.Duration `mapstructure:"duration"`
		Output     string        `mapstructure:"output"`
		Checkpoint time.Duration `mapstructure:"checkpoint"`
		Quiet      bool          `mapstructure:"quiet"`
	} `mapstructure:"profile"`
	NVML struct {
		NodeName string `mapstructure:"node_name"`
		ProcRoot string `mapstructure:"proc_root"`
		PodsDir  string `mapstructure:"pods_dir"`
		SysRoot  string `mapstructure:"sys_root"`
	} `mapstructure:"nvml"`
	Sim struct {
		Nodes    int    `mapstructure:"nodes"`
		Scenario string `mapstructure:"scenario"`
		Seed     int64  `mapstructure:"seed"`
		Realtime bool   `mapstructure:"realtime"`
		Start    string `mapstructure:"start"`
	} `mapstructure:"sim"`
	Analyze struct {
		Report           string        `mapstructure:"report"`
		Format           string        `mapstructure:"format"`
		Output           string        `mapstructure:"output"`
		IdleThresholdPct float64       `mapstructure:"idle_threshold_pct"`
		IdleWindow       time.Duration `mapstructure:"idle_window"`
		UnderusedPct     float64       `mapstructure:"underused_pct"`
		IdleNodeShare    float64       `mapstructure:"idle_node_share"`
		Dialect          string        `mapstructure:"dialect"`
		Gates            []string      `mapstructure:"gates"`
	} `mapstructure:"analyze"`
	Scaling struct {
		Period         time.Duration      `mapstructure:"period"`
		Weights        map[string]float64 `mapstructure:"weights"`
		PreferSMActive bool               `mapstructure:"prefer_sm_active"`
		Alpha          float64            `mapstructure:"alpha"`
		TargetPct      float64            `mapstructure:"target_pct"`
		LowerPct       float64            `mapstructure:"lower_pct"`
		UpPeriods      int                `mapstructure:"up_periods"`
		DownPeriods    int                `mapstructure:"down_periods"`
		MinGPUs        int                `mapstructure:"min_gpus"`
		MaxGPUs        int                `mapstructure:"max_gpus"`
		PoolBy         string             `mapstructure:"pool_by"`
	} `mapstructure:"scaling"`
	Migration struct {
		AllowModelChange bool `mapstructure:"allow_model_change"`
		AllowSharing     bool `mapstructure:"allow_sharing"`
		MaxMovesPerNode  int  `mapstructure:"max_moves_per_node"`
	} `mapstructure:"migration"`
	Prometheus struct {
		URL         string         `mapstructure:"url"`
		Step        time.Duration  `mapstructure:"step"`
		Selector    string         `mapstructure:"selector"`
		Chunk       time.Duration  `mapstructure:"chunk"`
		Concurrency int            `mapstructure:"concurrency"`
		Timeout     time.Duration  `mapstructure:"timeout"`
		Retries     int            `mapstructure:"retries"`
		HTTP        map[string]any `mapstructure:"http"`
	} `mapstructure:"prometheus"`
	Scrape struct {
		Targets     []string       `mapstructure:"targets"`
		TargetsFile string         `mapstructure:"targets_file"`
		Timeout     time.Duration  `mapstructure:"timeout"`
		HTTP        map[string]any `mapstructure:"http"`
	} `mapstructure:"scrape"`
	Pricing struct {
		GPUHourUSD        map[string]float64 `mapstructure:"gpu_hour_usd"`
		DefaultGPUHourUSD float64            `mapstructure:"default_gpu_hour_usd"`
		EnergyUSDPerKWh   float64            `mapstructure:"energy_usd_per_kwh"`
	} `mapstructure:"pricing"`
}

// newViper returns the root command's own viper instance with defaults and
// SEEDANCE_* environment variables set up.
func newViper() *viper.Viper {
	v := viper.New()
	for _, k := range configKeys {
		if !k.NoDefault {
			v.SetDefault(k.Key, k.Default)
		}
	}
	v.SetEnvPrefix("SEEDANCE")
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	v.AutomaticEnv()
	return v
}

// bindFlag ties a flag to its config key, so that precedence (flag > env >
// file > default) is viper's job and every flag has one key.
func bindFlag(v *viper.Viper, fs *pflag.FlagSet, name, key string) {
	f := fs.Lookup(name)
	if f == nil {
		panic("bindFlag: no flag " + name) // programming error
	}
	_ = fs.SetAnnotation(name, keyAnnotation, []string{key})
	flagForKey[key] = name
	if err := v.BindPFlag(key, f); err != nil {
		panic(fmt.Sprintf("bind flag %s to %s: %v", name, key, err)) // programming error
	}
}

// flagForKey names the flag bound to each config key (bindFlag).
var flagForKey = map[string]string{}

func flagOf(key string) string { return flagForKey[key] }

// envName is the environment variable of a key.
func envName(key string) string {
	return "SEEDANCE_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// configPath returns the config file to read and whether it must exist.
func configPath(flagPath string, getenv func(string) string) (string, bool) {
	if flagPath != "" {
		return flagPath, true
	}
	if p := getenv("SEEDANCE_CONFIG"); p != "" {
		return p, true
	}
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "seedance", "config.yaml"), false
	}
	if home := getenv("HOME"); home != "" {
		p := filepath.Join(home, ".config", "seedance", "config.yaml")
		if _, err := os.Stat(p); err == nil {
			return p, false
		}
	}
	return "/etc/seedance/config.yaml", false
}

// loadConfig reads the config file into v after checking that every key in it
// is known. It returns the path read, or "" when there was none.
func loadConfig(v *viper.Viper, flagPath string, getenv func(string) string) (string, error) {
	path, must := configPath(flagPath, getenv)
	b, err := readLimited(path, maxConfigBytes)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && !must {
			return "", nil
		}
		return "", usageErrorf("config %s: %v", path, err)
	}
	if err := checkConfigKeys(path, b); err != nil {
		return "", err
	}
	v.SetConfigFile(path)
	v.SetConfigType("yaml")
	if err := v.ReadInConfig(); err != nil {
		return "", usageErrorf("config %s: %s", path, oneLine(err.Error()))
	}
	return path, nil
}

// maxConfigBytes bounds a config file: seedance's settings fit in a few
// kilobytes, and /dev/zero must not be read for ever.
const maxConfigBytes = 1 << 20

// readLimited reads a file of at most limit bytes.
func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("%s is a directory, not a file", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("larger than %d KiB: not a seedance config file", limit>>10)
	}
	return b, nil
}

// checkConfigKeys parses the YAML itself, to name the file, line and key of
// the first setting seedance does not know.
func checkConfigKeys(path string, b []byte) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return usageErrorf("config %s: %s", path, strings.TrimPrefix(oneLine(err.Error()), "yaml: "))
	}
	if len(doc.Content) == 0 {
		return nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return usageErrorf("config %s:%d: the top level must be a mapping of keys to values", path, root.Line)
	}
	known := map[string]configKey{}
	for _, k := range configKeys {
		known[k.Key] = k
	}
	var walk func(n *yaml.Node, prefix string) error
	walk = func(n *yaml.Node, prefix string) error {
		for i := 0; i+1 < len(n.Content); i += 2 {
			kn, vn := n.Content[i], n.Content[i+1]
			key := strings.ToLower(kn.Value)
			if prefix != "" {
				key = prefix + "." + key
			}
			if k, ok := known[key]; ok {
				if k.Map && vn.Kind != yaml.MappingNode {
					return usageErrorf("config %s:%d: key %q must be a mapping", path, kn.Line, key)
				}
				continue
			}
			if vn.Kind == yaml.MappingNode && hasPrefix(known, key+".") {
				if err := walk(vn, key); err != nil {
					return err
				}
				continue
			}
			return usageErrorf("config %s:%d: unknown key %q", path, kn.Line, key)
		}
		return nil
	}
	return walk(root, "")
}

func hasPrefix(known map[string]configKey, prefix string) bool {
	for k := range known {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

// settingSource says where the effective value of key came from.
func settingSource(v *viper.Viper, key string, flags *pflag.FlagSet, file string, getenv func(string) string) string {
	if flags != nil {
		var src string
		flags.VisitAll(func(f *pflag.Flag) {
			if f.Changed && f.Annotations[keyAnnotation] != nil && f.Annotations[keyAnnotation][0] == key {
				src = "flag --" + f.Name
			}
		})
		if src != "" {
			return src
		}
	}
	if getenv(envName(key)) != "" {
		return "env " + envName(key)
	}
	if file != "" && v.InConfig(key) {
		return "file " + file
	}
	return "default"
}

// keyAnnotation marks a flag with its config key.
const keyAnnotation = "seedance_config_key"

// sortedKeys returns the config keys in order (the optional HTTP settings
// only when set).
func sortedKeys(v *viper.Viper) []string {
	out := make([]string, 0, len(configKeys))
	for _, k := range configKeys {
		if k.NoDefault && !v.IsSet(k.Key) {
			continue
		}
		out = append(out, k.Key)
	}
	sort.Strings(out)
	return out
}
