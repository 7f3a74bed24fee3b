package cmd

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/seedance/seedance/internal/exit"
	"github.com/seedance/seedance/internal/table"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
	"gopkg.in/yaml.v3"

	"github.com/seedance/seedance/internal/fsutil"

	"github.com/seedance/seedance/source/gpu"
	"github.com/seedance/seedance/source/prometheus"
	"github.com/seedance/seedance/source/scrape"
	"github.com/seedance/seedance/source/sim"
)

// Config is the typed configuration, filled from flags, env, file and
// defaults. A source's section is that source's own Settings type.
type Config struct {
	Profile struct {
		Source     string        `mapstructure:"source"`
		Interval   time.Duration `mapstructure:"interval"`
		Duration   time.Duration `mapstructure:"duration"`
		Output     string        `mapstructure:"output"`
		Checkpoint time.Duration `mapstructure:"checkpoint"`
		Quiet      bool          `mapstructure:"quiet"`
	} `mapstructure:"profile"`
	NVML    gpu.Settings `mapstructure:"nvml"`
	Sim     sim.Settings `mapstructure:"sim"`
	Analyze struct {
		Source           string        `mapstructure:"source"`
		Report           string        `mapstructure:"report"`
		Format           string        `mapstructure:"format"`
		Output           string        `mapstructure:"output"`
		IdleThresholdPct float64       `mapstructure:"idle_threshold_pct"`
		IdleWindow       time.Duration `mapstructure:"idle_window"`
		UnderusedPct     float64       `mapstructure:"underused_pct"`
		IdleNodeShare    float64       `mapstructure:"idle_node_share"`
		StaleAfter       time.Duration `mapstructure:"stale_after"`
		FragmentRatio    float64       `mapstructure:"fragmentation_ratio"`
		Dialect          string        `mapstructure:"dialect"`
		Gates            []string      `mapstructure:"gates"`
		Every            time.Duration `mapstructure:"every"`
		Listen           string        `mapstructure:"listen"`
		GroupBy          []string      `mapstructure:"group_by"`
	} `mapstructure:"analyze"`
	Attribution struct {
		IdleHolderUtilPct float64 `mapstructure:"idle_holder_util_pct"`
		IdleHolderHours   float64 `mapstructure:"idle_holder_hours"`
		SmallMemoryPct    float64 `mapstructure:"small_memory_pct"`
		ImbalanceIdlePct  float64 `mapstructure:"imbalance_idle_pct"`
	} `mapstructure:"attribution"`
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
		MoveJobs         bool `mapstructure:"move_jobs"`
		MovePending      bool `mapstructure:"move_pending"`
		MoveBlockers     bool `mapstructure:"move_blockers"`
	} `mapstructure:"migration"`
	Prometheus prometheus.Settings `mapstructure:"prometheus"`
	Slurm      struct {
		Pending bool `mapstructure:"pending"`
	} `mapstructure:"slurm"`
	Scrape  scrape.Settings `mapstructure:"scrape"`
	Pricing struct {
		GPUHourUSD        map[string]float64 `mapstructure:"gpu_hour_usd"`
		DefaultGPUHourUSD float64            `mapstructure:"default_gpu_hour_usd"`
		EnergyUSDPerKWh   float64            `mapstructure:"energy_usd_per_kwh"`
	} `mapstructure:"pricing"`
	// Limits bound what a long-running seedance does with what it is
	// given: expressions, external commands, HTTP clients (docs/rules.md,
	// Budgets).
	Limits struct {
		ExprTime         time.Duration `mapstructure:"expr_time"`
		ExprMemoryMiB    int           `mapstructure:"expr_memory_mib"`
		RulesTime        time.Duration `mapstructure:"rules_time"`
		CommandTime      time.Duration `mapstructure:"command_time"`
		CommandOutputMiB int           `mapstructure:"command_output_mib"`
		HTTPTimeout      time.Duration `mapstructure:"http_timeout"`
		HTTPConnections  int           `mapstructure:"http_connections"`
	} `mapstructure:"limits"`
}

// newViper returns the root command's own viper instance with defaults and
// SEEDANCE_* environment variables set up.
func newViper() *viper.Viper {
	v := viper.New()
	for _, k := range configKeys {
		if !k.NoDefault {
			v.SetDefault(k.Key, k.defaultValue())
		}
	}
	v.SetEnvPrefix("SEEDANCE")
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	v.AutomaticEnv()
	return v
}

// bindFlags ties the running command's setting flags to their config keys,
// so that precedence (flag > env > file > default) is viper's job. It binds
// when the command runs, not when it is built: viper holds one flag per
// key, and a key may have a flag on more than one command.
func bindFlags(v *viper.Viper, fs *pflag.FlagSet) error {
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		if keys := f.Annotations[keyAnnotation]; len(keys) == 1 && err == nil {
			err = v.BindPFlag(keys[0], f)
		}
	})
	return err
}

// flagOf names the flag that sets key, "" when none does.
func flagOf(key string) string {
	for _, k := range configKeys {
		if k.Key == key {
			return k.Flag
		}
	}
	return ""
}

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
	b, err := fsutil.ReadRegular(path, maxConfigBytes)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && !must {
			return "", nil
		}
		return "", exit.Usagef("config %s: %v", path, err)
	}
	return path, readConfig(v, path, b)
}

// readConfig checks the config file's keys and reads it into v (at start,
// and again when a loop sees the file change).
func readConfig(v *viper.Viper, path string, b []byte) error {
	if err := checkConfigKeys(path, b); err != nil {
		return err
	}
	v.SetConfigType("yaml")
	if err := v.ReadConfig(bytes.NewReader(b)); err != nil { // what was checked, not the path again
		return exit.Usagef("config %s: %s", path, table.Flatten(err.Error()))
	}
	return nil
}

// maxConfigBytes bounds a config file: seedance's settings fit in a few
// kilobytes, and /dev/zero must not be read for ever.
const maxConfigBytes = 1 << 20

// checkConfigKeys parses the YAML itself, to name the file, line and key of
// the first setting seedance does not know.
func checkConfigKeys(path string, b []byte) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return exit.Usagef("config %s: %s", path, strings.TrimPrefix(table.Flatten(err.Error()), "yaml: "))
	}
	if len(doc.Content) == 0 {
		return nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return exit.Usagef("config %s:%d: the top level must be a mapping of keys to values", path, root.Line)
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
			if key == "rules" {
				continue // the policy rules: checked by policy.Load
			}
			if k, ok := known[key]; ok {
				if k.Map && vn.Kind != yaml.MappingNode {
					return exit.Usagef("config %s:%d: key %q must be a mapping", path, kn.Line, key)
				}
				continue
			}
			if vn.Kind == yaml.MappingNode && hasPrefix(known, key+".") {
				if err := walk(vn, key); err != nil {
					return err
				}
				continue
			}
			return exit.Usagef("config %s:%d: unknown key %q", path, kn.Line, key)
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

// sourceSettings hands a source its section of the configuration (the
// Settings of source.Env): the section's value is copied into into, which
// must be a pointer to the section's type.
func (c *Config) sourceSettings(section string, into any) error {
	cv := reflect.ValueOf(c).Elem()
	for i := 0; i < cv.NumField(); i++ {
		if name, _, _ := strings.Cut(cv.Type().Field(i).Tag.Get("mapstructure"), ","); name != section {
			continue
		}
		dst := reflect.ValueOf(into)
		if dst.Kind() != reflect.Pointer || dst.Elem().Type() != cv.Field(i).Type() {
			return fmt.Errorf("settings %s: want a *%v, got a %T", section, cv.Field(i).Type(), into) // programming error
		}
		dst.Elem().Set(cv.Field(i))
		return nil
	}
	return fmt.Errorf("no settings section %q", section) // programming error
}
