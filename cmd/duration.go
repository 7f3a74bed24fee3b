package cmd

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/pflag"
)

// parseDuration reads a Go duration ("90s", "5m", "1h30m") or a plain number
// of seconds ("300", "0.5"), the way users of nvidia-smi and dcgmi write it.
func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return time.Duration(f * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (use seconds, e.g. 300, or 300s, 5m, 1h)", s)
	}
	return d, nil
}

// secondsValue is a pflag.Value for durations that also takes plain seconds.
type secondsValue time.Duration

func (d *secondsValue) String() string { return time.Duration(*d).String() }
func (d *secondsValue) Type() string   { return "duration" }
func (d *secondsValue) Set(s string) error {
	v, err := parseDuration(s)
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

// durationHook decodes config and env values into time.Duration with the same
// rules as the flags (a bare number is seconds, not nanoseconds).
func durationHook() mapstructure.DecodeHookFuncType {
	return func(from, to reflect.Type, data any) (any, error) {
		if to != reflect.TypeOf(time.Duration(0)) {
			return data, nil
		}
		switch v := data.(type) {
		case string:
			return parseDuration(v)
		case int:
			return time.Duration(v) * time.Second, nil
		case int64:
			return time.Duration(v) * time.Second, nil
		case float64:
			return time.Duration(v * float64(time.Second)), nil
		}
		return data, nil
	}
}
