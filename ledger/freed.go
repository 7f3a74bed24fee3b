package ledger

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/seedance/seedance/ledger/history"
	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/reclaim"
)

// FreedCapacity measures what became of the GPUs reclaim's acted episodes
// freed, over the whole buckets from each action to its restore or to,
// and from from on (docs/reclaim.md, What it saved): on the nodes the
// target held in the bucket before its action, GPU time other workloads
// held beyond what they held in that bucket was reused, GPU time no longer
// observed there (a node scaled away) was released, the rest stayed idle;
// each bucket's three add up to the GPUs freed. An episode whose nodes the
// ledger does not know (no hold rows of its target before the action) is
// left out, and counted in Unknown.
func (l *Ledger) FreedCapacity(ctx context.Context, eps []reclaim.Episode, from, to time.Time) (*history.FreedCapacity, error) {
	bucket, err := l.Bucket(ctx, 0)
	if err != nil {
		return nil, err
	}
	out := &history.FreedCapacity{}
	targets := map[string]map[reclaim.Target][]string{} // by cluster
	for _, ep := range eps {
		if targets[ep.Cluster] == nil {
			if targets[ep.Cluster], err = l.workloadsByTarget(ctx, ep.Cluster); err != nil {
				return nil, err
			}
		}
		ok, err := l.freedBy(ctx, ep, targets[ep.Cluster][ep.Target], from, to, bucket, out)
		if err != nil {
			return nil, err
		}
		if !ok {
			out.Unknown++
		}
	}
	return out, nil
}

// freedBy adds one episode's buckets to out; false when its nodes are not
// known.
func (l *Ledger) freedBy(ctx context.Context, ep reclaim.Episode, ids []string, from, to time.Time, bucket time.Duration, out *history.FreedCapacity) (bool, error) {
	if len(ids) == 0 {
		return false, nil
	}
	before := ep.ActedAt.Add(-time.Millisecond).Truncate(bucket)
	nodes, err := l.heldNodes(ctx, ep.Cluster, before.Unix(), ids)
	if err != nil || len(nodes) == 0 {
		return false, err
	}
	end := to
	if !ep.RestoredAt.IsZero() && ep.RestoredAt.Before(end) {
		end = ep.RestoredAt
	}
	start := ep.ActedAt
	if start.Before(from) {
		start = from
	}
	if t := start.Truncate(bucket); t.Before(start) {
		start = t.Add(bucket)
	}
	other, seen, err := l.nodeBuckets(ctx, ep.Cluster, before.Unix(), end.Unix(), nodes, ids)
	if err != nil {
		return false, err
	}
	baseOther, baseSeen := other[before.Unix()], seen[before.Unix()]
	for b := start; !b.Add(bucket).After(end); b = b.Add(bucket) {
		freed := float64(ep.GPUs) * bucket.Seconds()
		reused := min(max(other[b.Unix()]-baseOther, 0), freed)
		released := min(max(baseSeen-seen[b.Unix()], 0), freed-reused)
		out.GPUHours += freed / 3600
		out.ReusedGPUHours += reused / 3600
		out.ReleasedGPUHours += released / 3600
		out.IdleGPUHours += (freed - reused - released) / 3600
	}
	return true, nil
}

// workloadsByTarget are the ids of the cluster's workloads by the target
// they make up (reclaim.TargetOf of each).
func (l *Ledger) workloadsByTarget(ctx context.Context, cluster string) (map[reclaim.Target][]string, error) {
	rows, err := l.db.QueryContext(ctx, `SELECT id, kind, labels FROM seedance_workload WHERE cluster = $1`, cluster)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	ids := map[reclaim.Target][]string{}
	for rows.Next() {
		var w profile.Workload
		var labels string
		if err := rows.Scan(&w.ID, &w.Kind, &labels); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(labels), &w.Labels); err != nil {
			return nil, fmt.Errorf("workload %s: labels: %v", w.ID, err)
		}
		t := reclaim.TargetOf(w)
		ids[t] = append(ids[t], w.ID)
	}
	return ids, rows.Err()
}

// heldNodes are the nodes the workloads held GPUs on in the bucket.
func (l *Ledger) heldNodes(ctx context.Context, cluster string, bucket int64, ids []string) ([]string, error) {
	rows, err := l.db.QueryContext(ctx, `SELECT DISTINCT node FROM seedance_hold WHERE cluster = $1 AND bucket = $2 AND workload IN (`+list(3, len(ids))+`) AND held_s > 0 ORDER BY node`,
		append([]any{cluster, bucket}, anys(ids)...)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// nodeBuckets are, on the nodes, each bucket's GPU-seconds held by
// workloads other than ids, and observed, over [from, to).
func (l *Ledger) nodeBuckets(ctx context.Context, cluster string, from, to int64, nodes, ids []string) (other, seen map[int64]float64, err error) {
	args := append([]any{cluster, from, to}, anys(nodes)...)
	if seen, err = l.sumsByBucket(ctx, `SELECT bucket, SUM(observed_s) FROM seedance_gpu WHERE cluster = $1 AND bucket >= $2 AND bucket < $3
AND node IN (`+list(4, len(nodes))+`) GROUP BY bucket`, args); err != nil {
		return nil, nil, err
	}
	other, err = l.sumsByBucket(ctx, `SELECT bucket, SUM(held_s) FROM seedance_hold WHERE cluster = $1 AND bucket >= $2 AND bucket < $3
AND node IN (`+list(4, len(nodes))+`) AND workload <> '' AND workload NOT IN (`+list(4+len(nodes), len(ids))+`) GROUP BY bucket`, append(args, anys(ids)...))
	return other, seen, err
}

func (l *Ledger) sumsByBucket(ctx context.Context, q string, args []any) (map[int64]float64, error) {
	rows, err := l.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]float64{}
	for rows.Next() {
		var b int64
		var v float64
		if err := rows.Scan(&b, &v); err != nil {
			return nil, err
		}
		out[b] = v
	}
	return out, rows.Err()
}

// list is n placeholders from $first: "$3, $4, $5".
func list(first, n int) string {
	ps := make([]string, n)
	for i := range ps {
		ps[i] = fmt.Sprintf("$%d", first+i)
	}
	return strings.Join(ps, ", ")
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
