package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/seedance/seedance/analyze"
)

// TestUnitsInEveryFormat: the unit figures are a section of the table,
// Markdown and HTML reports (with --report units), each row's figures
// written per unit's scale, null as n/a, and a group's name escaped as
// any name is.
func TestUnitsInEveryFormat(t *testing.T) {
	r := simReport(t, "")
	usd, share, busy, kwh, work := 0.4, 0.25, 0.3, 0.12, 2.5e6
	r.Units = map[string]analyze.UnitFigures{
		"output_tokens": {Unit: "output_tokens", Per: 1e6, Work: &work, HeldGPUHours: 4, CostUSD: 1, USDPer: &usd, IdleShare: &share, BusyUSDPer: &busy, KWhPer: &kwh},
		"requests":      {Unit: "requests", Per: 1e3, HeldGPUHours: 4, CostUSD: 1},
	}
	r.UnitGroups = []analyze.UnitGroup{{Key: []string{hostileControls}, Units: r.Units}}
	want := []string{"output_tokens", "2500000", "1M", "$0.4000", "25.0%", "$0.3000", "0.1200", "1k", "n/a"}
	for name, render := range map[string]Func{"table": Table, "markdown": Markdown, "html": HTML} {
		var b bytes.Buffer
		if err := render(&b, r, Options{Report: "units"}); err != nil {
			t.Fatal(err)
		}
		out := strings.ReplaceAll(b.String(), `\_`, "_") // Markdown escapes underscores
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: no %q in the unit costs", name, w)
			}
		}
		if strings.ContainsAny(out, "\u202e\x1b\x00") {
			t.Errorf("%s: a group's name written raw", name)
		}
	}
	for name, c := range map[string]struct {
		render Func
		want   string
	}{"csv": {CSV, "(fleet),output_tokens,1000000,0,2500000,4,0,1,n/a,0.4,n/a,0.3,0.25,0.12"},
		"prom": {Prom, `seedance_unit_cost_usd{unit="output_tokens",scale="million",model=""} 0.4`}} {
		var b bytes.Buffer
		if err := c.render(&b, r, Options{Report: "units"}); err != nil || !strings.Contains(b.String(), c.want) {
			t.Errorf("%s: %v, no %q in\n%s", name, err, c.want, b.String())
		}
	}
	var b bytes.Buffer
	if err := Table(&b, r, Options{Report: "cost-savings"}); err != nil || strings.Contains(b.String(), "Unit costs") {
		t.Errorf("the unit costs in the cost-savings report: %v", err)
	}
}
