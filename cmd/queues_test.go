package cmd

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/internal/exit"
	"github.com/seedance/seedance/internal/testkit/schematest"
)

// TestQueuesReport (#58): the simulator's ClusterQueues give the queues
// report out of the box, in the report's schema; gates name a queue or a
// cohort (queues['platform'].hoarding) and fail with exit 3; the
// thresholds come from the configuration; a profile without queues has
// no queue section.
func TestQueuesReport(t *testing.T) {
	t.Parallel()
	r := run(t, nil, "analyze", "--source", "sim", "--duration", "1h", "--report", "queues", "-f", "json",
		"--gate", "queues['serving'].pending_gpu_hours > 0", "--gate", "cohorts['gpu-pool'].allocated_gpu_hours > 0")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	schematest.Validate(t, "report-v1.schema.json", []byte(r.out))
	var rep struct {
		Queues   map[string]analyze.QueueFigures `json:"queues"`
		Hoarding []analyze.Hoarding              `json:"hoarding"`
	}
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Queues) != 3 || rep.Queues["serving"].PendingWorkloads == nil || *rep.Queues["serving"].PendingWorkloads == 0 || rep.Queues["research"].NominalGPUs == nil {
		t.Errorf("queues: %+v", rep.Queues)
	}
	if len(rep.Hoarding) != 1 || rep.Hoarding[0].Queue != "platform" || rep.Hoarding[0].Waiting[0] != "serving" {
		t.Errorf("hoarding: %+v", rep.Hoarding)
	}
	if r := run(t, nil, "analyze", "--source", "sim", "--duration", "1h", "--report", "queues", "--gate", "queues['platform'].hoarding == false"); r.code != exit.GateFailed ||
		!strings.Contains(r.out+r.errOut, "FAIL: queues['platform'].hoarding == false (was true)") {
		t.Errorf("a failed gate over a queue: exit %d\n%s%s", r.code, r.out, r.errOut)
	}
	// A rule on queues.
	rules := writeConfig(t, "rules:\n  - name: hoarder\n    on: queue\n    when: hoarding && (contested_usd ?? 0) > 1\n    severity: critical\n    suggest: {text: '{name} held quota idle while others waited: ${contested_usd}'}\n")
	if r := run(t, nil, "analyze", "--source", "sim", "--duration", "1h", "--report", "queues", "--rules", rules, "-f", "json"); r.code != 0 ||
		!strings.Contains(r.out, `"kind": "rule:hoarder"`) || !strings.Contains(r.out, "platform held quota idle while others waited: $9.22") {
		t.Errorf("a rule on queues: exit %d %s\n%.3000s", r.code, r.errOut, r.out)
	}
	// Thresholds that no queue reaches: no verdict.
	cfg := writeConfig(t, "queues:\n  hoard_held_pct: 90\n")
	if r := run(t, nil, "analyze", "--source", "sim", "--duration", "1h", "--report", "queues", "--config", cfg, "--gate", "queues['platform'].hoarding == false"); r.code != 0 {
		t.Errorf("queues.hoard_held_pct 90: exit %d %s%s", r.code, r.out, r.errOut)
	}
	if r := run(t, nil, "analyze", "--source", "sim", "--duration", "1h", "--report", "queues", "--config", writeConfig(t, "queues:\n  hoard_used_pct: 120\n")); r.code != exit.Usage ||
		!strings.Contains(r.errOut, "hoard_used_pct") {
		t.Errorf("a threshold out of range: exit %d %s", r.code, r.errOut)
	}
}

// TestLedgerQueuesEqualOneAnalysis (#58): a simulated cluster's 3 hours
// counted into the ledger in three updates (one an hour, each overlapping
// the last by its context) give, from the hourly rows, the queue figures
// of one analysis of the whole: per queue and cohort every GPU-hour and
// dollar, the quota's, the hoarding verdict and the what-if (the
// simulator's reservations hold steady through each hour, so hourly means
// are exact); a span of several clusters names each queue by its cluster.
func TestLedgerQueuesEqualOneAnalysis(t *testing.T) {
	t.Parallel() // its settings are its own (testFactory)
	path := simProfile(t, "--interval", "60s", "--duration", "3h", "--sim-nodes", "4")
	led := filepath.Join(t.TempDir(), "l.db")
	if r := run(t, nil, "ledger", "update", "--ledger", led, "-i", path, "--ledger-step", "1h"); r.code != 0 {
		t.Fatal(r.errOut)
	}
	type doc struct {
		Queues      map[string]analyze.QueueFigures `json:"queues"`
		Cohorts     map[string]analyze.QueueFigures `json:"cohorts"`
		Hoarding    []analyze.Hoarding              `json:"hoarding"`
		QuotaWhatIf []analyze.QuotaChange           `json:"quota_what_if"`
	}
	read := func(r result) doc {
		t.Helper()
		var d doc
		if err := json.Unmarshal([]byte(r.out), &d); r.code != 0 || err != nil {
			t.Fatalf("exit %d %v: %s", r.code, err, r.errOut)
		}
		return d
	}
	led1 := read(run(t, nil, "ledger", "report", "--ledger", led, "--queues", "-f", "json"))
	// The ledger's timelines are hourly: so are the analysis' here.
	one := read(run(t, nil, "analyze", "-i", path, "--report", "queues", "-f", "json", "--config", writeConfig(t, "queues:\n  usage_sampling_interval: 1h\n")))
	if len(led1.Queues) != 3 || len(one.Queues) != 3 {
		t.Fatalf("queues: ledger %d, analysis %d", len(led1.Queues), len(one.Queues))
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(1, math.Abs(b)) }
	nearP := func(a, b *float64) bool { return a == nil && b == nil || a != nil && b != nil && near(*a, *b) }
	for name, want := range one.Queues {
		got := led1.Queues[name]
		for _, f := range []struct {
			name     string
			got, out float64
		}{{"allocated", deref(got.AllocatedGPUHours), deref(want.AllocatedGPUHours)}, {"used", deref(got.UsedGPUHours), deref(want.UsedGPUHours)},
			{"idle-held", deref(got.IdleHeldGPUHours), deref(want.IdleHeldGPUHours)}, {"pending", got.PendingGPUHours, want.PendingGPUHours},
			{"allocated $", deref(got.AllocatedUSD), deref(want.AllocatedUSD)}, {"used $", deref(got.UsedUSD), deref(want.UsedUSD)},
			{"idle-held $", deref(got.IdleHeldUSD), deref(want.IdleHeldUSD)}, {"pending $", got.PendingUSD, want.PendingUSD}, {"workloads", float64(got.Workloads), float64(want.Workloads)}} {
			if !near(f.got, f.out) {
				t.Errorf("%s %s: ledger %v, analysis %v", name, f.name, f.got, f.out)
			}
		}
		for _, f := range []struct {
			name     string
			got, out *float64
		}{{"allocated (known)", got.AllocatedGPUHours, want.AllocatedGPUHours}, {"nominal GPU-h", got.NominalGPUHours, want.NominalGPUHours}, {"reserved", got.ReservedGPUHours, want.ReservedGPUHours},
			{"borrowed", got.BorrowedGPUHours, want.BorrowedGPUHours}, {"lent", got.LentGPUHours, want.LentGPUHours},
			{"held of quota", got.HeldOfQuota, want.HeldOfQuota}, {"efficiency", got.Efficiency, want.Efficiency}, {"contested $", got.ContestedUSD, want.ContestedUSD},
			{"p95 used", got.UsedGPUsPercentile, want.UsedGPUsPercentile}, {"peak used", got.PeakUsedGPUs, want.PeakUsedGPUs},
			{"decayed used", got.DecayedUsedGPUs, want.DecayedUsedGPUs}, {"decayed reserved", got.DecayedReservedGPUs, want.DecayedReservedGPUs}} {
			if !nearP(f.got, f.out) {
				t.Errorf("%s %s: ledger %v, analysis %v", name, f.name, show(f.got), show(f.out))
			}
		}
		if got.Hoarding != want.Hoarding || got.PendingWorkloads != nil || got.LongestWaitS != nil {
			t.Errorf("%s: hoarding %v (analysis %v), pending workloads %v", name, got.Hoarding, want.Hoarding, got.PendingWorkloads)
		}
	}
	if fmt.Sprint(led1.QuotaWhatIf) != fmt.Sprint(one.QuotaWhatIf) || len(led1.QuotaWhatIf) == 0 {
		t.Errorf("what-if: ledger %+v\nanalysis %+v", led1.QuotaWhatIf, one.QuotaWhatIf)
	}
	if len(led1.Hoarding) != 1 || len(one.Hoarding) != 1 || led1.Hoarding[0].Queue != one.Hoarding[0].Queue || !nearP(led1.Hoarding[0].ContestedUSD, one.Hoarding[0].ContestedUSD) ||
		!nearP(led1.Cohorts["gpu-pool"].AllocatedUSD, one.Cohorts["gpu-pool"].AllocatedUSD) || led1.Cohorts["gpu-pool"].AllocatedUSD == nil {
		t.Errorf("hoarding %+v / %+v", led1.Hoarding, one.Hoarding)
	}
	if r := run(t, nil, "ledger", "report", "--ledger", led); r.code != 0 || strings.Contains(r.out, "Queues:") {
		t.Errorf("without --queues: exit %d %s", r.code, r.out)
	}
	if r := run(t, nil, "ledger", "report", "--ledger", led, "--queues"); r.code != 0 || !strings.Contains(r.out, "Queues over time") || !strings.Contains(r.out, "cohort gpu-pool") {
		t.Errorf("the table: exit %d %s", r.code, r.out)
	}
}

func show(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
