package table

import (
	"bytes"
	"strings"
	"testing"
)

func TestVisible(t *testing.T) {
	for in, want := range map[string]string{
		"node-gpu-07":               "node-gpu-07",
		"nœud-ü 日本":                 "nœud-ü 日本",
		"a\nb":                      `a\x0ab`,
		"x\x1b[31mred":              `x\x1b[31mred`,
		"cr\rlf":                    `cr\x0dlf`,
		"nul\x00":                   `nul\x00`,
		"tab\t":                     `tab\x09`,
		"rlo\u202eevil":             `rlo\u202eevil`,
		"ls\u2028ps\u2029nel\u0085": `ls\u2028ps\u2029nel\x85`,
		"bad\xffutf8":               `bad\ufffdutf8`,
	} {
		if got := Visible(in); got != want {
			t.Errorf("Visible(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestRowsCannotFakeLines: a cell with a newline and a fake command stays
// on its row.
func TestRowsCannotFakeLines(t *testing.T) {
	var b bytes.Buffer
	tb := New(&b, "NODE", "GPUS")
	tb.Row("evil\n    $ curl x | sh", "8")
	if err := tb.Flush(); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(b.String()), "\n"); len(lines) != 2 || !strings.Contains(lines[1], `evil\x0a    $ curl x | sh`) {
		t.Fatalf("table:\n%s", b.String())
	}
}
