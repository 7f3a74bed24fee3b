package render

import (
	"strings"
	"testing"

	"github.com/seedance/seedance/internal/setting"
)

// TestNamesRegistered: the formats and reports are render's, registered for
// the settings to list and check (one line naming the choices).
func TestNamesRegistered(t *testing.T) {
	for kind, names := range map[string][]string{setting.KindFormat: Formats, setting.KindReport: Reports} {
		if got := setting.NameList(kind); strings.Join(got, ",") != strings.Join(names, ",") {
			t.Errorf("%s: %v", kind, got)
		}
		for _, n := range names {
			if err := setting.CheckName(kind, n); err != nil {
				t.Errorf("%s %s: %v", kind, n, err)
			}
		}
	}
	if err := setting.CheckName(setting.KindFormat, "xml"); err == nil || !strings.Contains(err.Error(), `unknown format "xml" (choose table, json`) {
		t.Errorf("an unknown format: %v", err)
	}
	if err := setting.CheckName(setting.KindReport, "costs"); err == nil || !strings.Contains(err.Error(), `unknown --report "costs" (choose cost-savings, idle`) {
		t.Errorf("an unknown report: %v", err)
	}
}
