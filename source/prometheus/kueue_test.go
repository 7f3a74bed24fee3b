package prometheus

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/testkit/dcgmtest"
	"github.com/seedance/seedance/internal/testkit/promtest"
	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source/sim"
)

// TestKueueMetricsThroughPrometheus (#58): Kueue's ClusterQueue metrics
// in a real Prometheus beside dcgm-exporter's, read without the API
// server. The leader's series count; a follower replica's (replica_role
// "follower": a quota of 4 and a reservation of 8 all along) do not. The
// leader scraped every 15 s says research (quota 4, cohort team-r under
// root ml) reserved 4 GPUs from 120 s to 420 s, and prod (quota 2, no
// cohort) waited for 2 from 300 s to the end (600 s): one span each,
// naming no workload, and the queues' workloads unknown.
func TestKueueMetricsThroughPrometheus(t *testing.T) {
	p := recordSim(t, 1, sim.ScenarioBusy, 1, 10*time.Minute)
	var om bytes.Buffer
	if err := dcgmtest.WriteOpenMetrics(&om, p); err != nil {
		t.Fatal(err)
	}
	doc := strings.TrimSuffix(om.String(), "# EOF\n")
	var k strings.Builder
	series := func(metric, labels string, v func(s int) float64) {
		for s := 0; s < 600; s += 15 {
			fmt.Fprintf(&k, "%s{%s} %g %d\n", metric, labels, v(s), p.StartedAt.Unix()+int64(s))
		}
	}
	const lead, follow = `replica_role="leader"`, `replica_role="follower"`
	k.WriteString("# TYPE kueue_cluster_queue_nominal_quota gauge\n")
	series("kueue_cluster_queue_nominal_quota", `cluster_queue="research",cohort="team-r",flavor="h100",resource="nvidia.com/gpu",`+lead, func(int) float64 { return 4 })
	series("kueue_cluster_queue_nominal_quota", `cluster_queue="research",cohort="team-r",flavor="h100",resource="nvidia.com/gpu",`+follow, func(int) float64 { return 4 })
	series("kueue_cluster_queue_nominal_quota", `cluster_queue="prod",cohort="",flavor="h100",resource="nvidia.com/gpu",`+lead, func(int) float64 { return 2 })
	k.WriteString("# TYPE kueue_cluster_queue_info gauge\n")
	series("kueue_cluster_queue_info", `cluster_queue="research",parent_cohort="team-r",root_cohort="ml",`+lead, func(int) float64 { return 1 })
	k.WriteString("# TYPE kueue_cluster_queue_resource_reservation gauge\n")
	series("kueue_cluster_queue_resource_reservation", `cluster_queue="research",cohort="team-r",flavor="h100",resource="nvidia.com/gpu",`+lead, func(s int) float64 {
		return map[bool]float64{true: 4}[s >= 120 && s < 420]
	})
	series("kueue_cluster_queue_resource_reservation", `cluster_queue="research",cohort="team-r",flavor="h100",resource="nvidia.com/gpu",`+follow, func(int) float64 { return 8 })
	k.WriteString("# TYPE kueue_cluster_queue_resource_pending gauge\n")
	series("kueue_cluster_queue_resource_pending", `cluster_queue="prod",resource="nvidia.com/gpu",`+lead, func(s int) float64 { return map[bool]float64{true: 2}[s >= 300] })
	srv := promtest.Start(t, []byte(doc+k.String()+"# EOF\n"))
	got, err := Read(context.Background(), promOptions(srv.URL, p))
	if err != nil {
		t.Fatal(err)
	}
	want := []profile.Queue{
		{Name: "prod", Kind: profile.QueueKueue, NominalGPUs: ptr(2.0), Flavors: []string{"h100"}, WorkloadsUnknown: true,
			Pending: []profile.QueueSpan{{GPUs: 2, StartS: 300, EndS: 600}}},
		{Name: "research", Kind: profile.QueueKueue, Cohort: "ml", NominalGPUs: ptr(4.0), Flavors: []string{"h100"}, WorkloadsUnknown: true,
			Admitted: []profile.QueueSpan{{GPUs: 4, StartS: 120, EndS: 420}}},
	}
	if fmt.Sprintf("%+v", deref(got.Queues)) != fmt.Sprintf("%+v", deref(want)) || !strings.Contains(strings.Join(got.Notes, "\n"), "queues from Kueue's metrics (2 ClusterQueues") {
		t.Errorf("queues\n%+v\nwant\n%+v\nnotes %q", deref(got.Queues), deref(want), got.Notes)
	}
}

func ptr(v float64) *float64 { return &v }

// deref shows each queue's quota by value.
func deref(qs []profile.Queue) []string {
	var out []string
	for _, q := range qs {
		out = append(out, fmt.Sprintf("%s %s %q quota %v %v %+v %+v unknown %v", q.Name, q.Kind, q.Cohort, *q.NominalGPUs, q.Flavors, q.Admitted, q.Pending, q.WorkloadsUnknown))
	}
	return out
}
