package cmd

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"

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
				t.Row(key, redactSetting(key, f.viper.Get(key)), settingSource(f.viper, key, c.Flags(), f.configFile, f.Getenv))
			}
			return t.Flush()
		},
	})
	return c
}

// secretKey matches settings that hold a secret (the *_file variants name a
// file, which is not secret).
var secretKey = regexp.MustCompile(`(?i)(password|token|secrets?|credentials|client_secret|api_key)$`)

// redactSetting prints a setting's value with secrets replaced by <secret>:
// by key (passwords, tokens, credentials, secrets, and everything under a
// proxy_connect_header, whose values are all secrets in prometheus/common),
// at any depth, in lists too; and user:password@ in URLs anywhere.
func redactSetting(key string, v any) string {
	last := key[strings.LastIndex(key, ".")+1:]
	return fmt.Sprint(redactValue(v, isSecretKey(last)))
}

func isSecretKey(k string) bool {
	return secretKey.MatchString(k) || strings.EqualFold(k, "proxy_connect_header")
}

func redactValue(v any, secret bool) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = redactValue(e, secret || isSecretKey(k))
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = redactValue(e, secret)
		}
		return out
	case []string:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = redactValue(e, secret)
		}
		return out
	case string:
		if secret && x != "" {
			return "<secret>"
		}
		return redactURL(x)
	case nil:
		return v
	}
	if secret {
		return "<secret>"
	}
	return v
}

// redactURL hides the password of a URL anywhere in a setting ("u:p@host"
// without a scheme too).
func redactURL(s string) string {
	raw := s
	if !strings.Contains(s, "://") && strings.Contains(s, "@") {
		raw = "http://" + s
	}
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return s
	}
	if _, has := u.User.Password(); !has {
		u.User = url.User("<secret>") // a token may stand as the user name
	}
	out := u.Redacted()
	if raw != s {
		out = strings.TrimPrefix(out, "http://")
	}
	return out
}
