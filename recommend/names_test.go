package recommend

import (
	"strings"
	"testing"

	"github.com/seedance/seedance/internal/setting"
	"github.com/seedance/seedance/settings"
)

// TestNamesRegistered: the command dialects are recommend's, registered for
// the settings to check (one line naming the choices), and the settings'
// default fragmentation ratio is the planner's.
func TestNamesRegistered(t *testing.T) {
	for _, d := range CommandDialects {
		if err := setting.CheckName(setting.KindDialect, d); err != nil {
			t.Errorf("%s: %v", d, err)
		}
	}
	err := setting.CheckName(setting.KindDialect, "ansible")
	if err == nil || !strings.Contains(err.Error(), `unknown --dialect "ansible" (choose kubectl, slurm or none)`) {
		t.Errorf("an unknown dialect: %v", err)
	}
	if settings.DefaultFragmentationRatio != DefaultFragmentationRatio {
		t.Errorf("analyze.fragmentation_ratio defaults to %v, the planner's threshold is %v", settings.DefaultFragmentationRatio, DefaultFragmentationRatio)
	}
}
