package shell

import (
	"os/exec"
	"testing"
)

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"node-gpu-07": "node-gpu-07",
		"":            "''",
		"a b":         "'a b'",
		"it's":        `'it'\''s'`,
		"$(reboot)":   "'$(reboot)'",
		"x;rm -rf /":  "'x;rm -rf /'",
		"`id`":        "'`id`'",
		"line\nbreak": "'line\nbreak'",
		"nœud-ü":      "'nœud-ü'",
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestQuotedWordsSurviveTheShell runs each quoted string through sh and
// checks that it comes back as one word, unchanged, with nothing executed.
func TestQuotedWordsSurviveTheShell(t *testing.T) {
	hostile := []string{"$(touch /tmp/seedance-pwned)", "a;b", "it's", "`id`", "x\ny", "naïve", `"dq"`, "$HOME", "a b  c", "-rf"}
	for _, s := range hostile {
		out, err := exec.Command("sh", "-c", "printf '%s' "+Quote(s)).Output()
		if err != nil || string(out) != s {
			t.Errorf("%q came back as %q (%v)", s, out, err)
		}
	}
}
