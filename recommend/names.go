package recommend

import (
	"fmt"
	"slices"

	"github.com/seedance/seedance/internal/setting"
)

// CommandDialects are the dialects of the commands in an analysis'
// suggestions (analyze --dialect); recommend registers them, and package
// settings validates --dialect with them (internal/setting).
var CommandDialects = []string{DialectKubectl, DialectSlurm, DialectNone}

func init() {
	setting.RegisterNames(setting.KindDialect, setting.Names{List: func() []string { return CommandDialects }, Check: func(d string) error {
		if !slices.Contains(CommandDialects, d) {
			return fmt.Errorf("unknown --dialect %q (choose %s)", d, setting.OrList(CommandDialects))
		}
		return nil
	}})
}
