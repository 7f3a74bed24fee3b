package prometheus

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source/queues"
)

// Kueue's own metrics, read where the API server is not (no
// --kubeconfig): its ClusterQueues' quota, reservations and waits, with
// no workload named (docs/queues.md, Kueue, from its metrics). A
// follower replica's series are left out (Kueue v0.19's replica_role):
// the leader's, or a lone replica's, count once.

// kueueQueries is how many queries readKueueMetrics runs.
const kueueQueries = 6

// kueueMetrics is what readKueueMetrics found: the queues' series, and a
// note when Kueue exports no resource metrics or a query failed.
type kueueMetrics struct {
	m    *queues.KueueMetrics
	note string
}

// readKueueMetrics reads Kueue's ClusterQueue metrics over [start, end]:
// the raw samples of each one's quota and cohort in the range's last
// MetricsHold (queues.FromMetrics keeps each one's latest series), and of
// its reservations and pending requests from MetricsHold before start (a
// sample just before the range holds into it).
func readKueueMetrics(ctx context.Context, c *promClient, matchers string, start, end time.Time, tick func()) kueueMetrics {
	sel := strings.TrimPrefix(matchers+`,replica_role!="follower"`, ",")
	lastW := min(end.Sub(start), queues.MetricsHold).Milliseconds()
	rawW := end.Sub(start.Add(-queues.MetricsHold)).Milliseconds()
	m := &queues.KueueMetrics{}
	steps := []struct {
		metric string
		w      int64
		into   *[]queues.MetricSeries
	}{
		{"kueue_cluster_queue_nominal_quota", lastW, &m.Nominal},
		{"kueue_cluster_queue_borrowing_limit", lastW, &m.Borrowing},
		{"kueue_cluster_queue_lending_limit", lastW, &m.Lending},
		{"kueue_cluster_queue_info", lastW, &m.Info},
		{"kueue_cluster_queue_resource_reservation", rawW, &m.Reserved},
		{"kueue_cluster_queue_resource_pending", rawW, &m.Pending},
	}
	for i, s := range steps {
		ans, err := c.query(ctx, fmt.Sprintf("%s{%s}[%dms]", s.metric, sel, s.w), end)
		tick()
		if err != nil {
			for range steps[i+1:] {
				tick()
			}
			return kueueMetrics{note: "Kueue's metrics not read: " + err.Error()}
		}
		*s.into = metricSeries(ans.Series)
		if i == 0 && len(m.Nominal) == 0 {
			for range steps[1:] {
				tick()
			}
			return kueueMetrics{note: noResourceMetrics(ctx, c, sel, end.Sub(start).Milliseconds(), end)}
		}
	}
	return kueueMetrics{m: m}
}

// noResourceMetrics says, when Kueue's metrics are there without its
// ClusterQueues' resource metrics, how to turn them on; "" when Kueue's
// metrics are not there at all.
func noResourceMetrics(ctx context.Context, c *promClient, sel string, w int64, end time.Time) string {
	ans, err := c.query(ctx, fmt.Sprintf("count(last_over_time(kueue_cluster_queue_status{%s}[%dms]))", sel, w), end)
	if err != nil || len(ans.Series) == 0 {
		return ""
	}
	return "Kueue's metrics are there without its ClusterQueues' quota in the range's last 5 minutes (Kueue's configuration sets metrics.enableClusterQueueResources: true, and Kueue is scraped until the range's end): its queues are not read"
}

func metricSeries(ss []promSeries) []queues.MetricSeries {
	out := make([]queues.MetricSeries, len(ss))
	for i, s := range ss {
		out[i].Labels = s.Labels
		out[i].Samples = make([]queues.MetricSample, len(s.Pairs))
		for j, p := range s.Pairs {
			out[i].Samples[j] = queues.MetricSample{TMillis: p.TMillis, V: p.V}
		}
	}
	return out
}

// kueueQueues are the queues of Kueue's metrics placed in the profile's
// range, and the warnings of the read.
func (k *kube) kueueQueues(p *profile.Profile) ([]profile.Queue, []string) {
	var notes []string
	if k.kueue.note != "" {
		notes = append(notes, k.kueue.note)
	}
	if k.kueue.m == nil {
		return nil, notes
	}
	qs, warnings := queues.FromMetrics(*k.kueue.m, p.StartedAt, p.EndedAt)
	notes = append(notes, warnings...)
	if len(qs) > 0 {
		notes = append(notes, fmt.Sprintf("queues from Kueue's metrics (%d ClusterQueues; no --kubeconfig): which workloads each admitted is not known, so what they held and used is not either", len(qs)))
	}
	return qs, notes
}
