package render

import (
	"bytes"
	"encoding/csv"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/seedance/seedance/recommend"
	"github.com/seedance/seedance/report"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/seedance/seedance/internal/testkit/schematest"
	"github.com/seedance/seedance/source/sim"
)

// TestFragmentationSections renders the fragmented scenario's report in
// every format: each carries the pool's figures (6 of 13 free GPUs
// stranded, docs/simulator.md) and the memory held while idle.
func TestFragmentationSections(t *testing.T) {
	r := simScenarioReport(t, sim.ScenarioFragmented, recommend.DialectKubectl, true)
	f := r.Fragmentation
	if f == nil || len(f.Pools) != 1 || f.Pools[0].FreeGPUs != 13 || f.Pools[0].StrandedGPUs != 6 || !f.Pools[0].Above ||
		f.Pools[0].AfterPlan == nil || f.Pools[0].AfterPlan.Unstranded != 0 || len(r.StrandedMemory) == 0 {
		t.Fatalf("fragmentation: %+v, %d GPUs held memory while idle", f, len(r.StrandedMemory))
	}
	o := Options{Report: "fragmentation"}
	table := string(render(t, "table", r, o))
	for _, want := range []string{"Fragmentation (threshold 0.35", "1:6 2:1 5:1", "0.46", "6 (0.46)", "Memory held while idle", "fragmentation ratio 0.46, above 0.35"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	if strings.Contains(table, "Migration plan") || strings.Contains(table, "Attribution by") {
		t.Errorf("the fragmentation report has other sections:\n%s", table)
	}
	if md := string(render(t, "markdown", r, o)); !strings.Contains(md, "| NVIDIA H100 80GB HBM3 | 13 | 6 | 0.46 |") {
		t.Errorf("markdown:\n%s", md)
	}
	rows, err := csv.NewReader(bytes.NewReader(render(t, "csv", r, o))).ReadAll()
	if err != nil || len(rows) != 2 || rows[0][0] != "model" || rows[1][3] != "13" || rows[1][4] != "6" || rows[1][5] != "0.461538462" || rows[1][8] != "6" {
		t.Errorf("csv %q %v", rows, err)
	}
	prom := render(t, "prom", r, o)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(prom))
	if ratio := fams["seedance_pool_fragmentation_ratio"]; err != nil || ratio == nil || ratio.Metric[0].GetGauge().GetValue() != 0.461538462 ||
		fams["seedance_gpu_idle_memory_byte_seconds"] == nil {
		t.Errorf("prom: %v\n%s", err, prom)
	}
	if promtool, err := exec.LookPath("promtool"); err == nil {
		cmd := exec.Command(promtool, "check", "metrics")
		cmd.Stdin = bytes.NewReader(prom)
		if out, err := cmd.CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) != 0 {
			t.Errorf("promtool check metrics: %v\n%s", err, out)
		}
	} else if os.Getenv("CI") != "" {
		t.Error("promtool is not installed (.ci/run installs it)")
	}
	html := render(t, "html", r, Options{Report: "all"})
	if !bytes.Contains(html, []byte(`<table class="sortable" id="fragmentation">`)) || !bytes.Contains(html, []byte(`id="stranded-memory"`)) {
		t.Error("the HTML report has no fragmentation section")
	}
	schematest.Validate(t, "report-v1.schema.json", render(t, "json", r, o))
	// A gate on a pool, by its model.
	gates, err := report.Gates(r, []string{"fragmentation.pool['NVIDIA H100 80GB HBM3'].ratio <= 0.35"})
	if len(gates) != 1 || gates[0].Passed || gates[0].Error != "" || !errors.Is(err, report.ErrGateFailed) {
		t.Errorf("gates %+v: %v", gates, err)
	}
	// A pool that is not in the report is an invalid gate, never a pass.
	if _, err := report.Gates(r, []string{"fragmentation.pool['A100'].ratio <= 0.35"}); !errors.Is(err, report.ErrInvalidGate) {
		t.Errorf("gate on a missing pool: %v", err)
	}
}
