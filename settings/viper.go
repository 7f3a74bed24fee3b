package settings

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	"github.com/seedance/seedance/internal/setting"

	"github.com/prometheus/common/config"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
	yamlv2 "go.yaml.in/yaml/v2"
	"gopkg.in/yaml.v3"

	"github.com/seedance/seedance/internal/exit"
	"github.com/seedance/seedance/internal/fsutil"
	"github.com/seedance/seedance/internal/table"
)

// NewViper returns the root command's own viper instance with the
// defaults set up; ApplyEnv adds the SEEDANCE_* environment variables.
func NewViper() *viper.Viper {
	v := viper.New()
	for _, k := range Keys() {
		if !k.NoDefault {
			v.SetDefault(k.Key, k.Value())
		}
	}
	return v
}

// ApplyEnv sets each key whose variable (EnvName) getenv finds set and not
// empty, unless its flag was given (flagGiven): a flag wins over the
// environment, which wins over the config file and the defaults. The
// variables are read through getenv, not from the process, so that each
// run of the commands can have its own (a test's).
func ApplyEnv(v *viper.Viper, getenv func(string) string, flags *pflag.FlagSet) {
	for _, k := range Keys() {
		if val := getenv(EnvName(k.Key)); val != "" && given(flags, k) == "" {
			v.Set(k.Key, val)
		}
	}
}

// GivenFlag is the name of key's flag (Key.Flag) when flags has it and it
// was given, else "". A map's flag (--gpu-price) overlays the map rather
// than set it, and is not the key's source.
func GivenFlag(flags *pflag.FlagSet, key string) string {
	for _, k := range Keys() {
		if k.Key == key {
			return given(flags, k)
		}
	}
	return ""
}

// given is GivenFlag of one key.
func given(flags *pflag.FlagSet, k setting.Key) string {
	if flags == nil || k.Flag == "" || k.Map {
		return ""
	}
	if f := flags.Lookup(k.Flag); f != nil && f.Changed {
		return k.Flag
	}
	return ""
}

// flagOf names the flag that sets key, "" when none does.
func flagOf(key string) string {
	for _, k := range Keys() {
		if k.Key == key {
			return k.Flag
		}
	}
	return ""
}

// EnvName is the environment variable of a key.
func EnvName(key string) string {
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

// Load reads the config file into v after checking that every key in it
// is known. It returns the path read, or "" when there was none.
func Load(v *viper.Viper, flagPath string, getenv func(string) string) (string, error) {
	path, must := configPath(flagPath, getenv)
	b, err := fsutil.ReadRegular(path, MaxFileBytes)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && !must {
			return "", nil
		}
		return "", exit.Usagef("config %s: %v", path, err)
	}
	return path, Read(v, path, b)
}

// Read checks the config file's keys and reads it into v (at start,
// and again when a loop sees the file change).
func Read(v *viper.Viper, path string, b []byte) error {
	if err := checkConfigKeys(path, b); err != nil {
		return err
	}
	v.SetConfigType("yaml")
	if err := v.ReadConfig(bytes.NewReader(b)); err != nil { // what was checked, not the path again
		return exit.Usagef("config %s: %s", path, table.Flatten(err.Error()))
	}
	return nil
}

// MaxFileBytes bounds a config file: seedance's settings fit in a few
// kilobytes, and /dev/zero must not be read for ever.
const MaxFileBytes = 1 << 20

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
	known := map[string]setting.Key{}
	for _, k := range Keys() {
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
			if key == "units" {
				if err := checkUnits(path, vn); err != nil {
					return err
				}
				continue
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

func hasPrefix(known map[string]setting.Key, prefix string) bool {
	for k := range known {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

// SortedKeys returns the config keys in order (the optional HTTP settings
// only when set).
func SortedKeys(v *viper.Viper) []string {
	out := make([]string, 0, len(Keys()))
	for _, k := range Keys() {
		if k.NoDefault && !v.IsSet(k.Key) {
			continue
		}
		out = append(out, k.Key)
	}
	sort.Strings(out)
	return out
}

// SourceSettings hands a source its section of the configuration (the
// Settings of source.Env): the section's value is copied into into, which
// must be a pointer to the source's Settings type.
func (c *Config) SourceSettings(section string, into any) error {
	v, ok := c.sources[section]
	if !ok {
		return fmt.Errorf("no settings section %q", section) // programming error
	}
	dst := reflect.ValueOf(into)
	if dst.Kind() != reflect.Pointer || dst.Elem().Type() != v.Type() {
		return fmt.Errorf("settings %s: want a *%v, got a %T", section, v.Type(), into) // programming error
	}
	dst.Elem().Set(v)
	return nil
}

// decodeSources decodes each registered source's section, with the rules
// of the rest (a bare number of seconds is a duration).
func (c *Config) decodeSources(all map[string]any) error {
	c.sources = map[string]reflect.Value{}
	for _, r := range setting.Sections() {
		v := reflect.New(reflect.TypeOf(r.Settings))
		d, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{DecodeHook: durationHook(), WeaklyTypedInput: true, Result: v.Interface()})
		if err != nil {
			return err
		}
		if err := d.Decode(all[r.Name]); err != nil {
			return exit.Usagef("configuration: %s", table.Flatten(err.Error()))
		}
		c.sources[r.Name] = v.Elem()
	}
	return nil
}

// HTTP decodes the HTTP settings of a section (prometheus or scrape)
// into prometheus/common's HTTPClientConfig, strictly, so that a misspelt
// setting is an error. The settings may stand directly in the section, as in
// a Prometheus scrape config, or under its http: key. The message names the
// setting, never its value.
func HTTP(v *viper.Viper, section string) (config.HTTPClientConfig, error) {
	cfg := config.DefaultHTTPClientConfig
	key := section + ".http"
	m := map[string]any{}
	for k, val := range v.GetStringMap(key) {
		m[k] = val
	}
	for _, k := range setting.HTTPKeys(section) {
		if v.IsSet(k.Key) {
			m[strings.TrimPrefix(k.Key, section+".")] = v.Get(k.Key)
		}
	}
	if len(m) == 0 {
		return cfg, nil
	}
	b, err := yamlv2.Marshal(m)
	if err != nil {
		return cfg, exit.Usagef("config %s: %v", key, err)
	}
	if err := yamlv2.UnmarshalStrict(b, &cfg); err != nil {
		return cfg, exit.Usagef("config %s: %s", key, table.Flatten(err.Error()))
	}
	return cfg, nil
}

// Decode reads the effective configuration out of v (flags, environment,
// file and defaults, in that precedence) and validates it.
func Decode(v *viper.Viper) (*Config, error) {
	var c Config
	if err := v.Unmarshal(&c, viper.DecodeHook(durationHook())); err != nil {
		return nil, exit.Usagef("configuration: %s", table.Flatten(err.Error()))
	}
	if err := c.decodeSources(v.AllSettings()); err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}
