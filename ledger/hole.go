package ledger

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/seedance/seedance/profile"
)

// A hole is a stretch of a cluster's data in which no GPU has a sample: a
// scrape outage, a Prometheus down, hours an update jumped. The update
// that counts across it warns, and keeps the warning with the hole's
// buckets, so that every report of a window that holds it repeats it; a
// backfill that counts those buckets again takes it back.

// holePrefix begins a hole's warning (the notes a backfill takes back).
const holePrefix = "no sample of any GPU from "

// minHole is the shortest stretch without a sample that is a hole: five
// minutes, or ten sample intervals where they are longer (a missed scrape
// or two is not one).
func minHole(interval time.Duration) time.Duration { return max(5*time.Minute, 10*interval) }

// hole is a stretch [from, to) without a sample; reach is how far past a
// bucket a read must reach to count it whole (margin).
type hole struct {
	from, to time.Time
	reach    time.Duration
}

// holes are the stretches longer than minHole between consecutive samples
// of any GPU of the tail and the fresh data (the tail's last sample
// before the fresh data's first included).
func holes(tail, fresh *profile.Profile, interval, reach time.Duration) []hole {
	var ms []int64
	for _, p := range []*profile.Profile{tail, fresh} {
		if p == nil {
			continue
		}
		base := float64(p.StartedAt.UnixMilli())
		for _, n := range p.Nodes {
			for _, g := range n.GPUs {
				for _, t := range g.Series.T {
					ms = append(ms, int64(base+math.Round(t*1000)))
				}
			}
		}
	}
	slices.Sort(ms)
	ms = slices.Compact(ms)
	var out []hole
	for i := 1; i < len(ms); i++ {
		if time.Duration(ms[i]-ms[i-1])*time.Millisecond > minHole(interval) {
			out = append(out, hole{time.UnixMilli(ms[i-1]).UTC(), time.UnixMilli(ms[i]).UTC(), reach})
		}
	}
	return out
}

// note is the hole's warning, with the backfill that fills it: its range
// covers the buckets next to the hole and the reach around them, so that
// they are counted again with the hole's data (the bucket after it must
// be: backfill.go). The cluster's name is letters, digits and ._-:/
// (CheckCluster): nothing a shell reads apart.
func (h hole) note(cluster string, bucket time.Duration) string {
	ts := func(t time.Time) string { return t.Format(time.RFC3339) }
	from := h.from.Truncate(bucket).Add(-bucket - h.reach).Truncate(time.Second)
	to := h.to.Truncate(bucket).Add(bucket + h.reach + time.Second).Truncate(time.Second)
	return fmt.Sprintf("%s%s to %s in cluster %s: a hole in its data (fill it from a source that holds it: seedance ledger update --cluster %s --start %s --end %s)",
		holePrefix, ts(h.from), ts(h.to), cluster, cluster, ts(from), ts(to))
}

// buckets are the buckets the hole lies in.
func (h hole) buckets(bucket time.Duration) []int64 {
	var out []int64
	for b := h.from.Truncate(bucket); b.Before(h.to); b = b.Add(bucket) {
		out = append(out, b.Unix())
	}
	return out
}

// putHoles keeps each hole's warning with its buckets.
func putHoles(ex *execer, hs []hole, bucket time.Duration) error {
	for _, h := range hs {
		n := h.note(ex.cluster, bucket)
		for _, b := range h.buckets(bucket) {
			if err := ex.exec(`INSERT INTO seedance_note (cluster, bucket, note) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, b, n); err != nil {
				return err
			}
		}
	}
	return nil
}

// takeBackHoles removes the hole warnings of the buckets a backfill
// counts again (their data is there now).
func takeBackHoles(ex *execer, r *rows) error {
	for i, b := range r.bucketOf {
		if r.skip[i] {
			continue
		}
		if err := ex.exec(`DELETE FROM seedance_note WHERE cluster = $1 AND bucket = $2 AND note LIKE $3`, b, strings.ReplaceAll(holePrefix, "%", "")+"%"); err != nil {
			return err
		}
	}
	return nil
}
