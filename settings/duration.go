package settings

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
)

// ParseDuration reads a Go duration ("90s", "5m", "1h30m") or a plain number
// of seconds ("300", "0.5"), the way users of nvidia-smi and dcgmi write it.
func ParseDuration(s string) (time.Duration, error) {
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

// durationHook decodes config and env values into time.Duration with the same
// rules as the flags (a bare number is seconds, not nanoseconds).
func durationHook() mapstructure.DecodeHookFuncType {
	return func(from, to reflect.Type, data any) (any, error) {
		if to != reflect.TypeOf(time.Duration(0)) {
			return data, nil
		}
		switch v := data.(type) {
		case string:
			return ParseDuration(v)
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
