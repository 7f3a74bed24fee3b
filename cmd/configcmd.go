package cmd

import (
	"fmt"

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
			file := f.configFile
			if file == "" {
				file = "(none)"
			}
			fmt.Fprintf(f.IO.Out, "config file: %s\n\n", file)
			t := table.New(f.IO.Out, "KEY", "VALUE", "SOURCE")
			for _, key := range sortedKeys() {
				t.Row(key, fmt.Sprint(f.viper.Get(key)), settingSource(f.viper, key, c.Flags(), f.configFile, f.Getenv))
			}
			return t.Flush()
		},
	})
	return c
}
