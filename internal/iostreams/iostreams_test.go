package iostreams

import "testing"

// TestColorEnv: NO_COLOR turns colour off, CLICOLOR_FORCE on where
// standard output is not a terminal (as under go test); NO_COLOR wins.
func TestColorEnv(t *testing.T) {
	for _, tt := range []struct {
		noColor, force string
		want           bool
	}{{"", "", false}, {"", "1", true}, {"", "0", false}, {"1", "1", false}} {
		t.Run(tt.noColor+"/"+tt.force, func(t *testing.T) {
			t.Setenv("CLICOLOR_FORCE", tt.force)
			if tt.noColor != "" {
				t.Setenv("NO_COLOR", tt.noColor)
			}
			if got := System().ColorEnabled(); got != tt.want && !System().IsStdoutTTY() {
				t.Errorf("NO_COLOR=%q CLICOLOR_FORCE=%q: colour %v, want %v", tt.noColor, tt.force, got, tt.want)
			}
		})
	}
}
