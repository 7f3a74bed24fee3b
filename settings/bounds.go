package settings

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"time"

	"github.com/seedance/seedance/internal/setting"

	"github.com/seedance/seedance/internal/exit"
)

// checkRanges checks every setting that has a Range (Keys) in the
// effective configuration, whichever of flag, environment or file set it:
// a value outside its range, NaN or infinite is a usage error of one line
// naming the key, its flag and environment variable, and the range.
func (c *Config) checkRanges() error {
	values := map[string]reflect.Value{}
	collect(reflect.ValueOf(c).Elem(), "", values)
	for name, v := range c.sources {
		collect(v, name, values)
	}
	for _, k := range Keys() {
		v, ok := values[k.Key]
		if k.Range == nil || !ok {
			continue
		}
		if v.Kind() == reflect.Map {
			iter := v.MapRange()
			for iter.Next() {
				if err := inRange(k, fmt.Sprintf("%s.%v", k.Key, iter.Key()), iter.Value()); err != nil {
					return err
				}
			}
			continue
		}
		if err := inRange(k, k.Key, v); err != nil {
			return err
		}
	}
	return nil
}

// collect maps each setting's key to its field, by mapstructure tags.
func collect(v reflect.Value, prefix string, out map[string]reflect.Value) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		if !t.Field(i).IsExported() {
			continue
		}
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("mapstructure"), ",")
		key := name
		if prefix != "" {
			key = prefix + "." + name
		}
		if f := v.Field(i); f.Kind() == reflect.Struct {
			collect(f, key, out)
		} else {
			out[key] = f
		}
	}
}

func inRange(k setting.Key, key string, v reflect.Value) error {
	var x float64
	shown := ""
	switch {
	case v.Type() == reflect.TypeOf(time.Duration(0)):
		d := time.Duration(v.Int())
		x, shown = d.Seconds(), d.String()
	case v.CanInt():
		x = float64(v.Int())
	case v.CanFloat():
		x = v.Float()
	default:
		return nil
	}
	if shown == "" {
		shown = fmt.Sprint(x)
	}
	if !math.IsNaN(x) && x >= k.Range.Min && x <= k.Range.Max {
		return nil
	}
	return exit.Usagef("%s = %s is outside %s%s", key, shown, rangeText(k), whereSet(k.Key))
}

// rangeText writes a key's range as its values are written: "0–100",
// "1s–24h0m0s".
func rangeText(k setting.Key) string {
	if _, ok := k.Default.(setting.Dur); ok {
		return secs(k.Range.Min) + "–" + secs(k.Range.Max)
	}
	return fmt.Sprint(k.Range.Min) + "–" + fmt.Sprint(k.Range.Max)
}

func secs(s float64) string { return time.Duration(s * float64(time.Second)).String() }

// whereSet names the flag and environment variable of a key.
func whereSet(key string) string {
	parts := []string{"environment " + EnvName(key)}
	if flag := flagOf(key); flag != "" {
		parts = append([]string{"flag --" + flag}, parts...)
	}
	return " (" + strings.Join(parts, ", ") + ", or " + key + " in the config file)"
}
