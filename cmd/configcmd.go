package cmd

import (
	"fmt"
	"net/url"
	"regexp"

	"github.com/spf13/cobra"

	"github.com/seedance/seedance/internal/table"
)

func newConfigCmd(f *Factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "config",
		Short: "Inspect seedance's configuration",
	}
	c.AddCommand(&cobra.Command{
		Use:   "view",
		Short: "Print the effective configuration and where each value came from",
		Long: `Print every setting, its effective value, and its source: a flag, an
environment variable (SEEDANCE_*), the config file, or the default.
Precedence is flag > env > file > default.`,
		Example: "  seedance config view\n  SEEDANCE_SIM_NODES=32 seedance config view --config ./seedance.yaml",
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if _, err := f.Config(); err != nil {
				return err // a value out of its range is named, as at any start-up
			}
			file := f.configFile
			if file == "" {
				file = "(none)"
			}
			fmt.Fprintf(f.IO.Out, "config file: %s\n\n", file)
			t := table.New(f.IO.Out, "KEY", "VALUE", "SOURCE")
			for _, key := range sortedKeys(f.viper) {
				t.Row(key, redactSetting(f.viper.Get(key)), settingSource(f.viper, key, c.Flags(), f.configFile, f.Getenv))
			}
			return t.Flush()
		},
	})
	return c
}

// secretKey matches settings that hold a secret (the *_file variants name a
// file, which is not secret).
var secretKey = regexp.MustCompile(`(?i)(password|token|secret|credentials|client_secret|api_key)$`)

// redactSetting prints a setting's value with secrets replaced by <secret>:
// passwords and tokens in nested HTTP settings, and user:password@ in URLs.
func redactSetting(v any) string {
	return fmt.Sprint(redactValue("", v))
}

func redactValue(key string, v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = redactValue(k, e)
		}
		return out
	case string:
		if key != "" && secretKey.MatchString(key) && x != "" {
			return "<secret>"
		}
		if u, err := url.Parse(x); err == nil && u.User != nil {
			return u.Redacted()
		}
		return x
	}
	if key != "" && secretKey.MatchString(key) {
		return "<secret>"
	}
	return v
}
