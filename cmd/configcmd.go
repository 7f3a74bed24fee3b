package cmd

import (
	"encoding/json"
	"fmt"
	"io"
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
				t.Row(key, settings.Redacted(key, f.viper.Get(key)), settingSource(f.viper, key, c.Flags(), f.configFile, f.Getenv))
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
		doc.Settings = append(doc.Settings, viewLine{key, plainValue(settings.RedactedValue(key, f.viper.Get(key))),
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
