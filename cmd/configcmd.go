package cmd

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/seedance/seedance/internal/exit"
	"github.com/seedance/seedance/settings"

	"github.com/spf13/cobra"

	"github.com/seedance/seedance/internal/table"
	"github.com/seedance/seedance/internal/yamlout"
)

func newConfigCmd(f *Factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "config",
		Short: "Inspect seedance's configuration",
	}
	var format string
	view := &cobra.Command{
		Use:   "view",
		Short: "Print the effective configuration and where each value came from",
		Long: `Print every setting, its effective value, and its source: a flag, an
environment variable (SEEDANCE_*), the config file, or the default.
Precedence is flag > env > file > default.`,
		Example: "  seedance config view\n  seedance config view --format json\n  SEEDANCE_SIM_NODES=32 seedance config view --config ./seedance.yaml",
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if _, err := f.Config(); err != nil {
				return err // a value out of its range is named, as at any start-up
			}
			if format != "table" {
				return structured(f.IO.Out, format, "table", configDoc(f, c))
			}
			file := f.configFile
			if file == "" {
				file = "(none)"
			}
			fmt.Fprintf(f.IO.Out, "config file: %s\n\n", file)
			t := table.New(f.IO.Out, "KEY", "VALUE", "SOURCE")
			for _, key := range settings.SortedKeys(f.viper) {
				t.Row(key, redactSetting(key, f.viper.Get(key)), settingSource(f.viper, key, c.Flags(), f.configFile, f.Getenv))
			}
			return t.Flush()
		},
	}
	view.Flags().StringVarP(&format, "format", "f", "table", "table, json or yaml")
	completeValues(view, "format", []string{"table", "json", "yaml"})
	c.AddCommand(view)
	return c
}

// viewLine is one line of config view in JSON or YAML.
type viewLine struct {
	Key    string `json:"key"`
	Value  any    `json:"value"`
	Source string `json:"source"`
}

// configDoc is config view as a document: the file and every setting, its
// value (secrets redacted, durations as "15s") and where it came from.
func configDoc(f *Factory, c *cobra.Command) any {
	doc := struct {
		ConfigFile *string    `json:"config_file"`
		Settings   []viewLine `json:"settings"`
	}{Settings: []viewLine{}}
	if f.configFile != "" {
		doc.ConfigFile = &f.configFile
	}
	for _, key := range settings.SortedKeys(f.viper) {
		last := key[strings.LastIndex(key, ".")+1:]
		doc.Settings = append(doc.Settings, viewLine{key, plainValue(redactValue(f.viper.Get(key), isSecretKey(last))),
			settingSource(f.viper, key, c.Flags(), f.configFile, f.Getenv)})
	}
	return doc
}

// plainValue writes durations as Go writes them ("15s"), not as
// nanoseconds.
func plainValue(v any) any {
	if d, ok := v.(time.Duration); ok {
		return d.String()
	}
	return v
}

// structured writes doc as indented JSON or as YAML; plain is the name of
// the command's own format, for the message of an unknown one.
func structured(w io.Writer, format, plain string, doc any) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(doc)
	case "yaml":
		return yamlout.Write(w, doc)
	}
	return exit.Usagef("unknown --format %q (choose %s, json or yaml)", format, plain)
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
