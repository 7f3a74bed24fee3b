package render

import (
	"fmt"
	"strings"

	"github.com/seedance/seedance/internal/setting"
)

// The report and format names are render's: it registers them, and package
// settings validates --report and --format with them (internal/setting).
func init() {
	setting.RegisterNames(setting.KindFormat, setting.Names{List: func() []string { return Formats }, Check: func(f string) error {
		_, err := For(f)
		return err
	}})
	setting.RegisterNames(setting.KindReport, setting.Names{List: func() []string { return Reports }, Check: func(r string) error {
		if !ValidReport(r) {
			return fmt.Errorf("unknown --report %q (choose %s)", r, strings.Join(Reports, ", "))
		}
		return nil
	}})
}
