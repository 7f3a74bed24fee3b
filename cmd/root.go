// Package cmd is seedance's command-line glue: it turns flags, environment and
// the config file into options, calls one package function, and hands the
// result to a renderer. Business logic lives in profile/, analyze/ and
// recommend/.
package cmd

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/seedance/seedance/internal/exit"
	"github.com/seedance/seedance/settings"

	nvmlsrc "github.com/seedance/seedance/source/nvml"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"github.com/seedance/seedance/internal/iostreams"
	"github.com/seedance/seedance/internal/table"
	"github.com/seedance/seedance/source/gpu"
)

// Factory holds the dependencies of the commands. Only Main wires the real
// ones; tests build their own.
type Factory struct {
	IO     *iostreams.IOStreams
	NVML   func() (gpu.NVML, error)
	Now    func() time.Time
	Getenv func(string) string
	Build  BuildInfo

	viper      *viper.Viper
	configFile string
	// overlays are the command line's entries of map settings
	// (--gpu-price), by key.
	overlays map[string][]string
	// started is set once cobra has parsed the command line; an error before
	// that (unknown command, bad arguments) is a usage error.
	started bool
}

// NewFactory returns a Factory wired to the real system.
func NewFactory() *Factory {
	return &Factory{
		IO:     iostreams.System(),
		NVML:   nvmlsrc.New,
		Now:    time.Now,
		Getenv: os.Getenv,
		Build:  buildInfo(),
	}
}

// Config returns the effective configuration.
func (f *Factory) Config() (*settings.Config, error) { return settings.Decode(f.viper) }

// PricedConfig is the effective configuration with its prices complete:
// the --gpu-price entries over the file's, and the price file read.
func (f *Factory) PricedConfig() (*settings.Config, error) {
	cfg, err := f.Config()
	if err != nil {
		return nil, err
	}
	if cfg.Pricing, err = cfg.Pricing.WithFlags(f.overlays["pricing.gpu_hour_usd"]); err != nil {
		return nil, err
	}
	return cfg, nil
}

// NewRootCmd builds the seedance command tree.
func NewRootCmd(f *Factory) *cobra.Command {
	f.viper = settings.NewViper()
	var configFlag string
	root := &cobra.Command{
		Use:   "seedance",
		Short: "Find and price wasted GPU capacity",
		Long: `seedance samples GPUs (NVML on this node, or a simulated cluster) into a
profile, and turns profiles into reports of idle capacity and its cost.

Exit statuses: 0 ok; 1 runtime failure; 2 usage error or bad input;
3 a CI gate failed; 130 interrupted (what was collected was written).`,
		SilenceErrors:     true,
		DisableAutoGenTag: true,
		SilenceUsage:      true,
		PersistentPreRunE: func(c *cobra.Command, args []string) error {
			f.started = true
			if err := bindFlags(f.viper, c.Flags()); err != nil {
				return err
			}
			settings.ApplyEnv(f.viper, f.Getenv, c.Flags())
			f.overlays = overlays(c.Flags())
			path, err := settings.Load(f.viper, configFlag, f.Getenv)
			f.configFile = path
			return err
		},
	}
	root.SetUsageTemplate(usageTemplate)
	root.Version = f.Build.Version
	root.SetVersionTemplate("seedance {{.Version}}\n")
	root.PersistentFlags().StringVar(&configFlag, "config", "", "config file (default $SEEDANCE_CONFIG, $XDG_CONFIG_HOME/seedance/config.yaml, /etc/seedance/config.yaml)")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &exit.UsageError{Err: fmt.Errorf("%w (see '%s --help')", err, c.CommandPath())}
	})
	root.SetIn(f.IO.In)
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	root.AddCommand(
		newProfileCmd(f, nil),
		newVersionCmd(f),
		newConfigCmd(f),
		newAnalyzeCmd(f),
		newTopoCmd(f, nil),
		newRecommendCmd(f, nil),
		newLedgerCmd(f),
		newReclaimCmd(f),
		newManCmd(f),
	)
	// Cobra's own `completion` command (bash, zsh, fish, powershell), added
	// now rather than at Execute so that the CLI reference lists it.
	root.InitDefaultCompletionCmd()
	return root
}

// Main runs seedance with the process's arguments and returns its exit status.
func Main() exit.Code {
	f := NewFactory()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Run(ctx, f, os.Args[1:])
}

// Run executes the command line args and prints any error as one line.
func Run(ctx context.Context, f *Factory, args []string) exit.Code {
	root := NewRootCmd(f)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	code := exitCodeFor(err)
	if err != nil && !f.started {
		code = exit.Usage
	}
	if err != nil {
		if ee, ok := err.(*exit.Error); !ok || ee.Err != nil {
			fmt.Fprintf(f.IO.ErrOut, "seedance: %s\n", table.Visible(table.Flatten(err.Error())))
		}
	}
	return code
}
