package cmd

import (
	"encoding/json"
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
