package cmd

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/seedance/seedance/internal/setting"
	"github.com/seedance/seedance/recommend"

	"github.com/seedance/seedance/render"
	"github.com/seedance/seedance/settings"
	"github.com/seedance/seedance/source"
	"github.com/seedance/seedance/source/sim"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// addSettingFlags defines the flags of a command's settings, each marked
// with its key (bindFlags ties them when the command runs) and completing
// to its values where they are a fixed set.
func addSettingFlags(c *cobra.Command, cmd string) {
	fs := c.Flags()
	for _, k := range settings.Keys() {
		if k.Flag == "" || !slices.Contains(strings.Fields(k.Cmd), cmd) {
			continue
		}
		if vals := flagValues(k.Key); vals != nil {
			defer completeValues(c, k.Flag, vals) // once the flag exists
		}
		switch d := k.Default.(type) {
		case string:
			fs.StringP(k.Flag, k.Short, d, k.Help)
		case bool:
			fs.BoolP(k.Flag, k.Short, d, k.Help)
		case int:
			fs.IntP(k.Flag, k.Short, d, k.Help)
		case int64:
			fs.Int64P(k.Flag, k.Short, d, k.Help)
		case float64:
			fs.Float64P(k.Flag, k.Short, d, k.Help)
		case setting.Dur:
			def, err := settings.ParseDuration(string(d))
			if err != nil {
				panic(fmt.Sprintf("setting %s: default %v", k.Key, err)) // programming error
			}
			durationFlag(fs, k.Flag, def, k.Help)
		case map[string]float64:
			// Its flag's MODEL=USD entries overlay the file's map rather
			// than replace it: not bound to the key (Factory.PricedConfig).
			fs.StringArrayP(k.Flag, k.Short, nil, k.Help)
			_ = fs.SetAnnotation(k.Flag, overlayAnnotation, []string{k.Key})
			continue
		case []string:
			if k.Split {
				fs.StringSliceP(k.Flag, k.Short, d, k.Help)
			} else {
				fs.StringArrayP(k.Flag, k.Short, d, k.Help)
			}
		default:
			panic(fmt.Sprintf("setting %s: no flag for a %T", k.Key, d)) // programming error
		}
		_ = fs.SetAnnotation(k.Flag, keyAnnotation, []string{k.Key}) // the flag was just defined
	}
}

// flagValues are the values a setting's flag takes, for completion; nil
// where they are open.
func flagValues(key string) []string {
	switch key {
	case "profile.source", "analyze.source":
		return source.Names()
	case "sim.scenario":
		return sim.Scenarios
	case "analyze.report":
		return render.Reports
	case "analyze.format":
		return render.Formats
	case "analyze.dialect":
		return []string{recommend.DialectKubectl, recommend.DialectSlurm, recommend.DialectNone}
	case "analyze.group_by":
		return []string{"namespace", "workload", "controller", "user", "account", "team="}
	}
	return nil
}

// completeValues makes a flag complete to a fixed set of values (a value
// ending in "=" waits for the rest, as team=LABEL).
func completeValues(c *cobra.Command, flag string, vals []string) {
	_ = c.RegisterFlagCompletionFunc(flag, func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		d := cobra.ShellCompDirectiveNoFileComp
		for _, v := range vals {
			if strings.HasSuffix(v, "=") {
				d |= cobra.ShellCompDirectiveNoSpace
			}
		}
		return vals, d
	}) // the flag was just defined
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

// settingSource says where the effective value of key came from.
func settingSource(v *viper.Viper, key string, flags *pflag.FlagSet, file string, getenv func(string) string) string {
	if name := settings.GivenFlag(flags, key); name != "" {
		return "flag --" + name
	}
	if getenv(settings.EnvName(key)) != "" {
		return "env " + settings.EnvName(key)
	}
	if file != "" && v.InConfig(key) {
		return "file " + file
	}
	return "default"
}

// keyAnnotation marks a flag with its config key; overlayAnnotation, a
// flag whose entries overlay a map setting's.
const (
	keyAnnotation     = "seedance_config_key"
	overlayAnnotation = "seedance_config_overlay"
)

// overlays are the entries the command line gives the map settings, by key.
func overlays(fs *pflag.FlagSet) map[string][]string {
	out := map[string][]string{}
	fs.VisitAll(func(f *pflag.Flag) {
		if keys := f.Annotations[overlayAnnotation]; len(keys) == 1 {
			if v, ok := f.Value.(pflag.SliceValue); ok {
				out[keys[0]] = v.GetSlice()
			}
		}
	})
	return out
}

// secondsValue is a pflag.Value for durations that also takes plain seconds.
type secondsValue time.Duration

func (d *secondsValue) String() string { return time.Duration(*d).String() }

func (d *secondsValue) Type() string { return "duration" }

func (d *secondsValue) Set(s string) error {
	v, err := settings.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = secondsValue(v)
	return nil
}

// durationFlag defines a duration flag that also accepts plain seconds.
func durationFlag(fs *pflag.FlagSet, name string, def time.Duration, usage string) {
	v := secondsValue(def)
	fs.Var(&v, name, usage)
}
