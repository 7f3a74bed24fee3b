package render

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/seedance/seedance/report"

	dto "github.com/prometheus/client_model/go"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/internal/table"
	"github.com/seedance/seedance/recommend"
)

// maxStrandedRows bounds the GPUs the human formats list by stranded
// memory (the JSON report has them all).
const maxStrandedRows = 10

// ratioText is a 0–1 ratio with two decimals, or n/a.
func ratioText(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", *v)
}

// histogram writes FreePerNode as "0:3 1:2 4:1" (free GPUs: nodes).
func histogram(h []int) string {
	var parts []string
	for k, n := range h {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d:%d", k, n))
		}
	}
	return strings.Join(parts, " ")
}

// afterText is the pool's stranded GPUs after the plan, or "-".
func afterText(p recommend.FragPool) string {
	if p.AfterPlan == nil {
		return "-"
	}
	return fmt.Sprintf("%d (%s)", p.AfterPlan.StrandedGPUs, ratioText(p.AfterPlan.Ratio))
}

// fragmentationTable writes the pools' fragmentation, then the GPUs that
// held the most memory while idle.
func fragmentationTable(w io.Writer, ew *errWriter, r *report.Result) error {
	f := r.Fragmentation
	if f == nil {
		return nil
	}
	ew.printf("\nFragmentation (threshold %.2f; docs/analysis.md, Fragmentation)\n", f.ThresholdRatio)
	t := table.New(w, "POOL", "NODES", "GPUS", "FREE", "FREE PER NODE (GPUS:NODES)", "STRANDED", "RATIO", "FGD GPUS", "FGD RATIO", "AFTER PLAN")
	for _, p := range f.Pools {
		t.Row(p.Model, fmt.Sprint(p.Nodes), fmt.Sprint(p.GPUs), fmt.Sprint(p.FreeGPUs), histogram(p.FreePerNode), fmt.Sprint(p.StrandedGPUs),
			ratioText(p.Ratio), fmt.Sprintf("%.2f", p.FGDUnusableGPUs), ratioText(p.FGDRatio), afterText(p))
	}
	if err := t.Flush(); err != nil {
		return err
	}
	for _, p := range f.Pools {
		if p.Note != "" {
			ew.printf("note: %s: %s\n", table.Visible(p.Model), p.Note)
		}
	}
	if len(r.StrandedMemory) == 0 {
		return nil
	}
	ew.printf("\nMemory held while idle (GPU memory in use during counted idle runs)\n")
	t = table.New(w, "NODE", "GPU", "IDLE", "MEAN GIB HELD", "GIB-HOURS")
	for i, s := range r.StrandedMemory {
		if i == maxStrandedRows {
			break
		}
		t.Row(s.Node, fmt.Sprint(s.GPU), formatS(s.IdleS), fmt.Sprintf("%.1f", s.MeanGiB), fmt.Sprintf("%.2f", s.GiBHours))
	}
	if err := t.Flush(); err != nil {
		return err
	}
	if more := len(r.StrandedMemory) - maxStrandedRows; more > 0 {
		ew.printf("  … %d more GPUs in the JSON report\n", more)
	}
	return nil
}

func formatS(s float64) string { return analyze.FormatDuration(secondsDur(s)) }

// fragmentationMarkdown writes the pools as a Markdown table.
func fragmentationMarkdown(ew *errWriter, r *report.Result) {
	f := r.Fragmentation
	if f == nil {
		return
	}
	ew.printf("\n**Fragmentation** (threshold %.2f)\n\n| Pool | Free GPUs | Stranded | Ratio | FGD GPUs | After plan |\n|---|---:|---:|---:|---:|---:|\n", f.ThresholdRatio)
	for _, p := range f.Pools {
		ew.printf("| %s | %d | %d | %s | %.2f | %s |\n", mdEscape.Replace(p.Model), p.FreeGPUs, p.StrandedGPUs, ratioText(p.Ratio), p.FGDUnusableGPUs, afterText(p))
	}
	for _, p := range f.Pools {
		if p.Note != "" {
			ew.printf("\n%s: %s\n", mdEscape.Replace(p.Model), p.Note)
		}
	}
}

// fragmentationGauges writes a series per pool (labelled by model) and the
// memory each GPU held while idle.
func fragmentationGauges(p *promWriter, r *report.Result) {
	f := r.Fragmentation
	if f == nil {
		return
	}
	pool := func(name, help string, get func(recommend.FragPool) *float64) {
		gaugeEach(p, name, help, f.Pools, func(x recommend.FragPool) []string { return []string{"model", x.Model} }, get)
	}
	num := func(v float64) *float64 { return &v }
	pool("pool_free_gpus", "Whole GPUs of the pool that no running workload holds.", func(x recommend.FragPool) *float64 { return num(float64(x.FreeGPUs)) })
	pool("pool_stranded_gpus", "Free GPUs that no workload shape seen can use without a move.", func(x recommend.FragPool) *float64 { return num(float64(x.StrandedGPUs)) })
	pool("pool_fragmentation_ratio", "Stranded over free GPUs, 0 to 1; absent when nothing is free.", func(x recommend.FragPool) *float64 { return x.Ratio })
	pool("pool_fgd_unusable_gpus", "The FGD paper's fragmentation: free GPU capacity the next workload, drawn from the shapes seen, is expected not to be able to use.", func(x recommend.FragPool) *float64 { return num(x.FGDUnusableGPUs) })
	var ms []*dto.Metric
	for _, s := range r.StrandedMemory {
		ms = append(ms, val(s.GiBHours*3600*(1<<30), "node", s.Node, "gpu", strconv.Itoa(s.GPU), "uuid", s.UUID))
	}
	p.gauge("gpu_idle_memory_byte_seconds", "GPU memory in use during the GPU's counted idle runs, integrated over time.", ms...)
}

// fragmentationCSV writes one row per pool.
func fragmentationCSV(cw *csv.Writer, f *recommend.Fragmentation) error {
	rows := [][]string{{"model", "nodes", "gpus", "free_gpus", "stranded_gpus", "ratio", "fgd_unusable_gpus", "fgd_ratio", "stranded_after_plan"}}
	for _, p := range f.Pools {
		after := ""
		if p.AfterPlan != nil {
			after = strconv.Itoa(p.AfterPlan.StrandedGPUs)
		}
		rows = append(rows, []string{cell(p.Model), strconv.Itoa(p.Nodes), strconv.Itoa(p.GPUs), strconv.Itoa(p.FreeGPUs), strconv.Itoa(p.StrandedGPUs),
			optNum(p.Ratio), num(p.FGDUnusableGPUs), optNum(p.FGDRatio), after})
	}
	if err := cw.WriteAll(rows); err != nil {
		return err
	}
	return cw.Error()
}
