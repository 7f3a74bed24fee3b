package cmd

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/seedance/seedance/source/gpu"
)

// Set at build time with -ldflags "-X github.com/seedance/seedance/cmd.version=…".
var (
	version = ""
	commit  = ""
	date    = ""
)

// BuildInfo describes the seedance binary.
type BuildInfo struct {
	Version, Commit, Date, GoVersion string
}

// buildInfo returns the ldflags values, falling back to what the Go toolchain
// recorded in the binary.
func buildInfo() BuildInfo {
	b := BuildInfo{Version: version, Commit: commit, Date: date, GoVersion: runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if b.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			b.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision" && b.Commit == "":
				b.Commit = s.Value
			case s.Key == "vcs.time" && b.Date == "":
				b.Date = s.Value
			}
		}
	}
	if b.Version == "" {
		b.Version = "dev"
	}
	if b.Commit == "" {
		b.Commit = "unknown"
	}
	if b.Date == "" {
		b.Date = "unknown"
	}
	return b
}

func newVersionCmd(f *Factory) *cobra.Command {
	var format string
	c := &cobra.Command{
		Use:   "version",
		Short: "Print seedance's version, build and the NVML library version",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			b := f.Build
			out := f.IO.Out
			if format != "text" {
				return structured(out, format, "text", struct {
					Version   string `json:"version"`
					Commit    string `json:"commit"`
					Built     string `json:"built"`
					GoVersion string `json:"go"`
					NVML      string `json:"nvml"`
				}{b.Version, b.Commit, b.Date, b.GoVersion, nvmlVersion(f)})
			}
			fmt.Fprintf(out, "seedance %s\ncommit:  %s\nbuilt:   %s\ngo:      %s\n", b.Version, b.Commit, b.Date, b.GoVersion)
			fmt.Fprintf(out, "nvml:    %s\n", nvmlVersion(f))
			return nil
		},
	}
	c.Flags().StringVarP(&format, "format", "f", "text", "text, json or yaml")
	completeValues(c, "format", []string{"text", "json", "yaml"})
	return c
}

// nvmlVersion reports the NVML library and driver versions, or why there are
// none.
func nvmlVersion(f *Factory) string {
	lib, err := f.NVML()
	if err != nil {
		return "not in this build (built without cgo)"
	}
	return gpu.Versions(lib)
}
