package queues

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/profile"
)

// TestFromMetrics (#58): Kueue's metrics by hand. research's GPU quota is
// its two flavors' (4 + 2; its CPU left out), its borrowing limit the one
// flavor's that is set (a100: 1; h100's +Inf is none), no lending limit,
// and its cohort the root kueue_cluster_queue_info names. Its
// reservations are the two flavors' series summed, each sample holding
// until the next or 5 minutes: h100 2 GPUs from 60 s before the window
// (to 240 s), 4 from 600 s (to 900 s: the next is 600 s later) and from
// 1,200 s (to 1,500 s); a100 2 from 900 s and 1,000 s (to 1,300 s); a +Inf
// sample counts nothing. An older series of a queue, flavor and resource
// (research's h100 quota of 8 while it was in cohort old; its root
// team-r, ended by a staleness marker) gives way to the latest. prod's
// quota is NaN: a warning and none. dev's cohort has no root in
// kueue_cluster_queue_info: a warning, and it keeps its own.
func TestFromMetrics(t *testing.T) {
	t0 := time.Date(2026, 12, 8, 10, 0, 0, 0, time.UTC)
	at := func(s float64, v float64) MetricSample { return MetricSample{t0.UnixMilli() + int64(s*1000), v} }
	series := func(labels string, ss ...MetricSample) MetricSeries {
		l := map[string]string{}
		for _, kv := range strings.Split(labels, ",") {
			k, v, _ := strings.Cut(kv, "=")
			l[k] = v
		}
		return MetricSeries{Labels: l, Samples: ss}
	}
	inf := math.Inf(1)
	m := KueueMetrics{
		Nominal: []MetricSeries{series("cluster_queue=research,cohort=team-r,flavor=h100,resource=nvidia.com/gpu", at(3500, 4)),
			series("cluster_queue=research,cohort=team-r,flavor=a100,resource=nvidia.com/gpu", at(3500, 2)),
			series("cluster_queue=research,cohort=team-r,flavor=h100,resource=cpu", at(3500, 64)),
			series("cluster_queue=prod,flavor=h100,resource=nvidia.com/gpu", at(3500, math.NaN())),
			series("flavor=h100,resource=nvidia.com/gpu", at(3500, 8)),
			series("cluster_queue=research,cohort=old,flavor=h100,resource=nvidia.com/gpu", at(3300, 8), at(3310, math.NaN())),
			series("cluster_queue=dev,cohort=lab,flavor=h100,resource=amd.com/gpu", at(3500, 1))},
		Borrowing: []MetricSeries{series("cluster_queue=research,flavor=h100,resource=nvidia.com/gpu", at(3500, inf)),
			series("cluster_queue=research,flavor=a100,resource=nvidia.com/gpu", at(3500, 1))},
		Lending: []MetricSeries{series("cluster_queue=research,flavor=h100,resource=nvidia.com/gpu", at(3500, inf))},
		Info: []MetricSeries{series("cluster_queue=research,parent_cohort=team-r,root_cohort=ml", at(3500, 1)),
			series("cluster_queue=research,parent_cohort=team-r,root_cohort=team-r", at(3300, 1), at(3505, math.NaN()))},
		Reserved: []MetricSeries{series("cluster_queue=research,flavor=h100,resource=nvidia.com/gpu", at(-60, 2), at(600, 4), at(1200, 4), at(2400, 0)),
			series("cluster_queue=research,flavor=a100,resource=nvidia.com/gpu", at(900, 2), at(1000, 2)),
			series("cluster_queue=research,flavor=h100,resource=cpu", at(0, 32)),
			series("cluster_queue=prod,flavor=h100,resource=nvidia.com/gpu", at(100, inf))},
		Pending: []MetricSeries{series("cluster_queue=research,resource=nvidia.com/gpu", at(3000, 3), at(3300, 3))},
	}
	qs, warnings := FromMetrics(m, t0, t0.Add(time.Hour))
	if len(qs) != 3 || qs[0].Name != "dev" || qs[1].Name != "prod" || qs[2].Name != "research" {
		t.Fatalf("queues %+v", qs)
	}
	r := qs[2]
	if r.Kind != profile.QueueKueue || r.Cohort != "ml" || !r.WorkloadsUnknown || r.NominalGPUs == nil || *r.NominalGPUs != 6 ||
		r.BorrowingLimitGPUs == nil || *r.BorrowingLimitGPUs != 1 || r.LendingLimitGPUs != nil || strings.Join(r.Flavors, ",") != "h100,a100" {
		t.Errorf("research: %+v", r)
	}
	want := []profile.QueueSpan{{GPUs: 2, StartS: 0, EndS: 240}, {GPUs: 4, StartS: 600, EndS: 900}, {GPUs: 2, StartS: 900, EndS: 1200},
		{GPUs: 6, StartS: 1200, EndS: 1300}, {GPUs: 4, StartS: 1300, EndS: 1500}}
	if fmt.Sprint(r.Admitted) != fmt.Sprint(want) {
		t.Errorf("research's reservations %v, want %v", r.Admitted, want)
	}
	if fmt.Sprint(r.Pending) != fmt.Sprint([]profile.QueueSpan{{GPUs: 3, StartS: 3000, EndS: 3600}}) {
		t.Errorf("research's waits %v", r.Pending)
	}
	p := qs[1]
	if p.NominalGPUs != nil || len(p.Admitted) != 0 || len(warnings) != 2 ||
		warnings[0] != "kueue_cluster_queue_nominal_quota of ClusterQueue prod flavor h100 nvidia.com/gpu is NaN, not a count of GPUs: its quota is unknown" {
		t.Errorf("prod: %+v, warnings %q", p, warnings)
	}
	if d := qs[0]; d.Cohort != "lab" || d.NominalGPUs == nil || *d.NominalGPUs != 1 || !strings.HasPrefix(warnings[1], "kueue_cluster_queue_info names no root cohort of ClusterQueue(s) dev (") {
		t.Errorf("dev: %+v, warnings %q", d, warnings)
	}
}
