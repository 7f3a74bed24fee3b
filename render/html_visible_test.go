package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/seedance/seedance/internal/table"
)

// hostileControls is a name with a bidi override, an escape sequence and
// a NUL: html/template escapes markup, not these.
const hostileControls = "gpu\u202e1-edon\x1b[31mred\x00nul\u2066x"

// TestHTMLControlsVisible (#56): the analysis and ledger pages show a
// name's bidi and control characters as visible escapes, as the terminal
// does (table.Visible), and write none of them raw.
func TestHTMLControlsVisible(t *testing.T) {
	r := simReport(t, "kubectl")
	r.Nodes[0].Name = hostileControls
	r.Suggestions[0].Text = hostileControls
	page := string(render(t, "html", r, Options{}))
	var ledger bytes.Buffer
	m := monthOfWaste(2, 3)
	m.DailyWaste[0].Key = []string{hostileControls}
	if err := ledgerHTML(&ledger, m); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"analysis": page, "ledger": ledger.String()} {
		for _, raw := range []string{"\u202e", "\x1b", "\x00", "\u2066"} {
			if strings.Contains(out, raw) {
				t.Errorf("%s page: %q written raw", name, raw)
			}
		}
		if !strings.Contains(out, table.Visible(hostileControls)) {
			t.Errorf("%s page: the name is not shown as the terminal shows it (%s)", name, table.Visible(hostileControls))
		}
	}
}

// TestVisibleLayout: tabs and line ends stay (markup is made of them),
// every other invisible character is escaped as Visible escapes it.
func TestVisibleLayout(t *testing.T) {
	if got := table.VisibleLayout("a\tb\nc\r\n\u202ed\x1b"); got != "a\tb\nc\r\n\\u202ed\\x1b" {
		t.Errorf("got %q", got)
	}
}
