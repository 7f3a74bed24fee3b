package cmd

import (
	"os"

	"github.com/seedance/seedance/internal/exit"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// newManCmd writes the man pages of every command (section 1), for the
// deb and rpm packages (.goreleaser.yaml). Hidden: packagers run it, users
// read the pages.
func newManCmd(f *Factory) *cobra.Command {
	var dir string
	c := &cobra.Command{
		Use:    "man --dir DIR",
		Short:  "Write the man pages of every command into DIR",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if dir == "" {
				return exit.Usagef("--dir DIR is required")
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			root := c.Root()
			root.DisableAutoGenTag = true
			// The date comes from SOURCE_DATE_EPOCH when set (reproducible packages).
			return doc.GenManTree(root, &doc.GenManHeader{Title: "SEEDANCE", Section: "1", Source: "seedance " + f.Build.Version, Manual: "seedance manual"}, dir)
		},
	}
	c.Flags().StringVar(&dir, "dir", "", "directory to write the pages into")
	return c
}
