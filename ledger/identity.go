package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"time"

	"github.com/seedance/seedance/profile"
)

// A cluster's identity comes from its data, not only from its name
// (schema 6). The ledger keeps each cluster's GPUs (by UUID, with the node
// and the first and last sample counted) and the origins its updates read
// (a Prometheus server's address and selector). Before counting, an
// update is refused, with one line naming both clusters and the way out,
// when
//
//   - a GPU of its inputs is another cluster's for a time the inputs also
//     cover: one cluster under two names (--cluster Alpha beside alpha),
//     which would count its GPUs twice; or
//   - it names no cluster (no --cluster, no cluster label), its origin is
//     one the cluster has not been read from, and none of its nodes is
//     one of the cluster's: a second cluster that fell back to the same
//     name (two Prometheus servers without a cluster label, both counted
//     as "default"), whose updates would each go on from the other's data
//     end and halve both.
//
// A GPU that moves to another cluster (a node moved) is not refused: the
// times do not overlap.

// migration6 adds the tables of the clusters' GPUs and origins.
const migration6 = `
CREATE TABLE seedance_cluster_gpu (cluster TEXT NOT NULL, uuid TEXT NOT NULL, node TEXT NOT NULL,
	first_ms BIGINT NOT NULL, last_ms BIGINT NOT NULL, PRIMARY KEY (cluster, uuid));
CREATE INDEX seedance_cluster_gpu_uuid ON seedance_cluster_gpu (uuid);
CREATE TABLE seedance_cluster_origin (cluster TEXT NOT NULL, origin TEXT NOT NULL, PRIMARY KEY (cluster, origin))
`

// gpuSpan is one GPU of an update's inputs: its node and its first and
// last sample (Unix ms).
type gpuSpan struct {
	node        string
	first, last int64
}

// gpuSpans are the inputs' GPUs with samples in their windows, by UUID.
func gpuSpans(inputs []*profile.Profile) map[string]gpuSpan {
	out := map[string]gpuSpan{}
	for _, p := range inputs {
		base, span := float64(p.StartedAt.UnixMilli()), p.EndedAt.Sub(p.StartedAt).Seconds()
		for _, n := range p.Nodes {
			for _, g := range n.GPUs {
				lo, hi := window(g.Series.T, span)
				if g.UUID == "" || lo >= hi {
					continue
				}
				first := int64(base + math.Round(g.Series.T[lo]*1000))
				last := int64(base + math.Round(g.Series.T[hi-1]*1000))
				if s, ok := out[g.UUID]; ok {
					first, last = min(first, s.first), max(last, s.last)
				}
				out[g.UUID] = gpuSpan{node: n.Name, first: first, last: last}
			}
		}
	}
	return out
}

// window is the part [lo, hi) of a series' times within the profile's
// window [0, span]: its context samples are left out.
func window(t profile.Values, span float64) (lo, hi int) {
	lo, hi = 0, len(t)
	for lo < hi && t[lo] < 0 {
		lo++
	}
	for hi > lo && t[hi-1] > span {
		hi--
	}
	return lo, hi
}

// checkIdentity refuses an update that another cluster's GPUs, or another
// cluster under the fallen-back name, would be counted by (above). named:
// the update's cluster was given (--cluster, or every input's label).
func checkIdentity(ctx context.Context, tx *sql.Tx, st *state, named bool, origin string, spans map[string]gpuSpan) error {
	if err := overlapElsewhere(ctx, tx, st.cluster, spans); err != nil || named || origin == "" || st.fresh {
		return err
	}
	var origins int
	var known bool
	err := scanRows(ctx, tx, func(rows *sql.Rows) error {
		var o string
		err := rows.Scan(&o)
		origins++
		known = known || o == origin
		return err
	}, `SELECT origin FROM seedance_cluster_origin WHERE cluster = $1`, st.cluster)
	if err != nil || known || origins == 0 {
		return err
	}
	nodes := map[string]bool{}
	err = scanRows(ctx, tx, func(rows *sql.Rows) error {
		var n string
		err := rows.Scan(&n)
		nodes[n] = true
		return err
	}, `SELECT DISTINCT node FROM seedance_cluster_gpu WHERE cluster = $1`, st.cluster)
	if err != nil || len(nodes) == 0 {
		return err
	}
	for _, s := range spans {
		if nodes[s.node] {
			return nil
		}
	}
	return fmt.Errorf("%w: this update names no cluster, so it would count as cluster %s, but none of its nodes is one of %s's and %s was never read for it: "+
		"another cluster under the same name? give each cluster its own name (--cluster, ledger.cluster, or a cluster external label)", ErrLedger, st.cluster, st.cluster, origin)
}

// overlapElsewhere refuses GPUs that another cluster counted for a time
// the inputs also cover: it looks the inputs' GPUs up by UUID, a few
// hundred at a time, not the other clusters' every GPU.
func overlapElsewhere(ctx context.Context, tx *sql.Tx, cluster string, spans map[string]gpuSpan) error {
	var other, uuid, node string
	var first, last int64
	found := false
	scan := func(rows *sql.Rows) error {
		var c, u, n string
		var f, l int64
		if err := rows.Scan(&c, &u, &n, &f, &l); err != nil {
			return err
		}
		if s := spans[u]; !found && s.first <= l && f <= s.last {
			other, uuid, node, first, last, found = c, u, n, max(f, s.first), min(l, s.last), true
		}
		return nil
	}
	var others int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT 1 FROM seedance_cluster_gpu WHERE cluster <> $1 LIMIT 1) o`, cluster).Scan(&others); err != nil || others == 0 {
		return err // no other cluster's GPU to overlap: a ledger of one cluster looks none up
	}
	ids := sortedIDs(spans)
	for len(ids) > 0 && !found {
		batch := ids[:min(len(ids), 500)]
		ids = ids[len(batch):]
		q := `SELECT cluster, uuid, node, first_ms, last_ms FROM seedance_cluster_gpu WHERE cluster <> $1 AND ` + inList("uuid", 2, len(batch)) + ` ORDER BY cluster, uuid`
		if err := scanRows(ctx, tx, scan, q, append([]any{cluster}, names(batch)...)...); err != nil {
			return err
		}
	}
	if !found {
		return nil
	}
	at := func(ms int64) string { return time.UnixMilli(ms).UTC().Format(time.RFC3339) }
	return fmt.Errorf("%w: GPU %s (node %s) is counted already as cluster %s's from %s to %s, and this update would count it as cluster %s's too: "+
		"one cluster under two names? count it under one (--cluster %s), or rename one (seedance ledger rename-cluster)",
		ErrLedger, uuid, node, other, at(first), at(last), cluster, other)
}

// noteIdentity adds the update's GPUs and origin to its cluster's.
func noteIdentity(ex *execer, origin string, spans map[string]gpuSpan) error {
	for _, uuid := range sortedIDs(spans) {
		s := spans[uuid]
		err := ex.add(`INSERT INTO seedance_cluster_gpu AS o (cluster, uuid, node, first_ms, last_ms) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (cluster, uuid) DO UPDATE SET node = excluded.node,
first_ms = CASE WHEN excluded.first_ms < o.first_ms THEN excluded.first_ms ELSE o.first_ms END,
last_ms = CASE WHEN excluded.last_ms > o.last_ms THEN excluded.last_ms ELSE o.last_ms END`, uuid, s.node, s.first, s.last)
		if err != nil {
			return err
		}
	}
	if origin == "" {
		return nil
	}
	return ex.exec(`INSERT INTO seedance_cluster_origin (cluster, origin) VALUES ($1, $2) ON CONFLICT DO NOTHING`, origin)
}

// fillIdentity (migration 6) takes each cluster's GPUs from its carried
// samples: the ledger kept no other record of them.
func fillIdentity(ctx context.Context, tx *sql.Tx, _ string) error {
	tails := map[string][]byte{}
	err := scanRows(ctx, tx, func(rows *sql.Rows) error {
		var c string
		var tail []byte
		err := rows.Scan(&c, &tail)
		tails[c] = tail
		return err
	}, `SELECT cluster, tail FROM seedance_state`)
	if err != nil {
		return err
	}
	for _, c := range sortedIDs(tails) {
		if len(tails[c]) == 0 {
			continue
		}
		p, err := readTail(tails[c])
		if err != nil {
			return fmt.Errorf("cluster %s's carried samples: %v", c, err)
		}
		ex := newExecer(ctx, tx, c, false)
		if err = noteIdentity(ex, "", gpuSpans([]*profile.Profile{p})); err == nil {
			err = ex.flush()
		}
		ex.close()
		if err != nil {
			return err
		}
	}
	return nil
}
