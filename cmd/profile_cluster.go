package cmd

import (
	"github.com/prometheus/common/config"
	"github.com/seedance/seedance/internal/exit"
	"github.com/seedance/seedance/internal/table"
	"github.com/spf13/viper"
	yaml "go.yaml.in/yaml/v2"
)

// httpConfig decodes the HTTP settings of a section (prometheus or scrape)
// into prometheus/common's HTTPClientConfig, strictly, so that a misspelt
// setting is an error. The settings may stand directly in the section, as in
// a Prometheus scrape config, or under its http: key. The message names the
// setting, never its value.
func httpConfig(v *viper.Viper, section string) (config.HTTPClientConfig, error) {
	cfg := config.DefaultHTTPClientConfig
	key := section + ".http"
	m := map[string]any{}
	for k, val := range v.GetStringMap(key) {
		m[k] = val
	}
	for k := range httpClientKeys {
		if v.IsSet(section + "." + k) {
			m[k] = v.Get(section + "." + k)
		}
	}
	if len(m) == 0 {
		return cfg, nil
	}
	b, err := yaml.Marshal(m)
	if err != nil {
		return cfg, exit.Usagef("config %s: %v", key, err)
	}
	if err := yaml.UnmarshalStrict(b, &cfg); err != nil {
		return cfg, exit.Usagef("config %s: %s", key, table.Flatten(err.Error()))
	}
	return cfg, nil
}
