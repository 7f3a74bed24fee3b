package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/seedance/seedance/analyze"
)

// TestQueuesInEveryFormat (#58): the queue figures in the table,
// Markdown, HTML, CSV and Prometheus formats, a null as n/a (or no
// series), a hostile queue name escaped, and only in the reports that
// ask for them.
func TestQueuesInEveryFormat(t *testing.T) {
	r := simReport(t, "")
	nominal, nominalH, reserved, held, eff, contested := 4.0, 4.0, 5.0, 1.25, 0.1, 9.72
	r.Queues = map[string]analyze.QueueFigures{
		"research": {Kind: "kueue", Cohort: "ml", Workloads: 2, NominalGPUs: &nominal, NominalGPUHours: &nominalH, ReservedGPUHours: &reserved,
			AllocatedGPUHours: ptr(5.0), UsedGPUHours: ptr(0.5), IdleHeldGPUHours: ptr(4.5), AllocatedUSD: ptr(18.0), UsedUSD: ptr(1.8), IdleHeldUSD: ptr(16.2),
			HeldOfQuota: &held, Efficiency: &eff, Hoarding: true, ContestedUSD: &contested},
		// Kueue's metrics alone: what its workloads held and used unknown.
		"seen":          {Kind: "kueue", NominalGPUs: &nominal, ReservedGPUHours: &reserved, PendingGPUHours: 2, USDPerGPUHour: 3.6, PendingUSD: 7.2},
		hostileControls: {Workloads: 1, AllocatedGPUHours: ptr(1.0), IdleHeldUSD: ptr(3.6), PendingGPUHours: 3, HeldPendingGPUHours: 1, LongestWaitS: ptr(1800.0)},
	}
	r.Cohorts = map[string]analyze.QueueFigures{"ml": r.Queues["research"]}
	r.QuotaWhatIf = []analyze.QuotaChange{{Queue: "research", Kind: "kueue", NominalGPUs: 4, ProposedGPUs: 2, Why: "p95 of its used GPUs 0.60", ProposedPendingWithinQuotaGPUHours: 1.5}}
	want := []string{"research", "4.00", "5.00", "$16.20", "125.0%", "10.0%", "hoarding: $9.72 others waited for", "cohort ml", "n/a", "30m",
		"p95 of its used GPUs 0.60", "0.00 → 1.50", "3.00 (1.00 held)"}
	for name, render := range map[string]Func{"table": Table, "markdown": Markdown, "html": HTML} {
		var b bytes.Buffer
		if err := render(&b, r, Options{Report: "queues"}); err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: no %q in the queues", name, w)
			}
		}
		if strings.ContainsAny(b.String(), "\u202e\x1b\x00") {
			t.Errorf("%s: a queue's name written raw", name)
		}
	}
	for name, c := range map[string]struct {
		render Func
		want   string
	}{"csv": {CSV, "research,kueue,ml,2,4,4,5,n/a,n/a,5,0.5,4.5,0,n/a,n/a,1.25,0.1,0,n/a,18,1.8,16.2,0,true,n/a,9.72"},
		"csv, unknown use": {CSV, "\nseen,kueue,,0,4,n/a,5,n/a,n/a,n/a,n/a,n/a,2,n/a,n/a,n/a,n/a,3.6,n/a,n/a,n/a,n/a,7.2,false,"},
		"prom":             {Prom, `seedance_queue_hoarding{queue="research",cohort="ml"} 1`}} {
		var b bytes.Buffer
		if err := c.render(&b, r, Options{Report: "queues"}); err != nil || !strings.Contains(b.String(), c.want) {
			t.Errorf("%s: %v, no %q in\n%s", name, err, c.want, b.String())
		}
	}
	var b bytes.Buffer
	if err := Prom(&b, r, Options{Report: "queues"}); err != nil || strings.Count(b.String(), "seedance_queue_nominal_gpus{") != 2 ||
		strings.Contains(b.String(), `seedance_queue_allocated_gpu_hours{queue="seen"`) || !strings.Contains(b.String(), `seedance_queue_allocated_gpu_hours{queue="research"`) {
		t.Errorf("a null quota or allocation has a series: %v", err)
	}
	b.Reset()
	if err := Table(&b, r, Options{Report: "cost-savings"}); err != nil || strings.Contains(b.String(), "Queues:") {
		t.Errorf("the queues in the cost-savings report: %v", err)
	}
}
