package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/seedance/seedance/analyze"
)

// ownerRows sums the window's rows per owner (owner 0: what no workload
// held), with how many workloads of each have rows in the window.
func (l *Ledger) ownerRows(ctx context.Context, tx *sql.Tx, sp span) ([]workloadRow, error) {
	cols := `cluster, owner, held_s, used_s, idle_s, cost_usd, energy_j, energy_unknown`
	rows, err := tx.QueryContext(ctx, `SELECT cluster, owner, SUM(held_s), SUM(used_s), SUM(idle_s), SUM(cost_usd), SUM(energy_j), SUM(energy_unknown)
FROM (`+sp.rows("seedance_owner_hold", cols, cols)+`) x GROUP BY cluster, owner`, sp.args()...)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrLedger, err)
	}
	var out []workloadRow
	ids := map[int64]bool{}
	for rows.Next() {
		var r workloadRow
		var id, unknown int64
		if err := rows.Scan(&r.cluster, &id, &r.held, &r.used, &r.idle, &r.cost, &r.energy, &unknown); err != nil {
			rows.Close()
			return nil, fmt.Errorf("%w: %v", ErrLedger, err)
		}
		r.energyKnown = unknown == 0
		r.owner = &owner{id: id}
		ids[id] = true
		out = append(out, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrLedger, err)
	}
	counts, err := l.ownerCounts(ctx, tx, sp)
	if err != nil {
		return nil, err
	}
	return describeOwners(ctx, tx, out, ids, counts)
}

// describeOwners fills in the rows' owners and workload counts; an owner
// no workload of the window has is left out (a relabelled workload's
// history leaves its old owner's sums at zero).
func describeOwners(ctx context.Context, tx *sql.Tx, out []workloadRow, ids map[int64]bool, counts map[clusterOwner]int) ([]workloadRow, error) {
	owners, err := readOwners(ctx, tx, ids)
	if err != nil {
		return nil, err
	}
	kept := out[:0]
	for _, r := range out {
		if r.owner.id == 0 {
			r.owner, r.n = nil, 0
			kept = append(kept, r)
			continue
		}
		if r.n = counts[clusterOwner{r.cluster, r.owner.id}]; r.n == 0 {
			continue
		}
		if r.owner = owners[r.owner.id]; r.owner == nil {
			return nil, fmt.Errorf("%w: an owner without its row", ErrLedger)
		}
		r.w.Kind, r.w.Labels, r.w.ID = r.owner.kind, r.owner.w.Labels, fmt.Sprintf("owner %d", r.owner.id)
		kept = append(kept, r)
	}
	sort.Slice(kept, func(i, j int) bool {
		a, b := kept[i], kept[j]
		return a.cluster < b.cluster || a.cluster == b.cluster && a.w.ID < b.w.ID
	})
	return kept, nil
}

// ownerCounts is how many workloads of each owner have rows in the span:
// those whose buckets overlap it, less those whose buckets have a hole
// (gappy) and who have no row in it.
func (l *Ledger) ownerCounts(ctx context.Context, tx *sql.Tx, sp span) (map[clusterOwner]int, error) {
	last := "last_bucket"
	if sp.maxProv == 0 {
		last = "settled_last"
	}
	overlap := `first_bucket < $2 AND ` + last + ` >= $1 AND ` + inList("cluster", 3, len(sp.clusters))
	args := append([]any{sp.lo, sp.hi}, names(sp.clusters)...)
	counts := map[clusterOwner]int{}
	err := scanRows(ctx, tx, func(rows *sql.Rows) error {
		var k clusterOwner
		var n int
		if err := rows.Scan(&k.cluster, &k.owner, &n); err != nil {
			return err
		}
		counts[k] = n
		return nil
	}, `SELECT cluster, owner, COUNT(*) FROM seedance_workload WHERE `+overlap+` GROUP BY cluster, owner`, args...)
	if err != nil {
		return nil, err
	}
	gappy := map[[2]string]clusterOwner{}
	err = scanRows(ctx, tx, func(rows *sql.Rows) error {
		var id string
		var k clusterOwner
		err := rows.Scan(&k.cluster, &id, &k.owner)
		gappy[[2]string{k.cluster, id}] = k
		return err
	}, `SELECT cluster, id, owner FROM seedance_workload WHERE gappy = 1 AND `+overlap, args...)
	if err != nil || len(gappy) == 0 {
		return counts, err
	}
	err = scanRows(ctx, tx, func(rows *sql.Rows) error {
		var k [2]string
		err := rows.Scan(&k[0], &k[1])
		delete(gappy, k) // present
		return err
	}, `SELECT DISTINCT cluster, workload FROM (`+sp.rows("seedance_hold", "cluster, workload", "cluster, workload")+`) x`, sp.args()...)
	for _, k := range gappy {
		counts[k]--
	}
	return counts, err
}

// finishedOwners sums per cluster and owner the workloads whose last
// bucket is in [sp.lo, hi) (all settled: hi is at most the watermark's
// bucket), over their whole tenure: their own rows' settled sums.
func (l *Ledger) finishedOwners(ctx context.Context, tx *sql.Tx, sp span, hi int64) ([]workloadRow, error) {
	var out []workloadRow
	ids := map[int64]bool{}
	counts := map[clusterOwner]int{}
	err := scanRows(ctx, tx, func(rows *sql.Rows) error {
		var r workloadRow
		var id int64
		if err := rows.Scan(&r.cluster, &id, &r.n, &r.held, &r.measured, &r.measuredEnergy); err != nil {
			return err
		}
		r.owner, ids[id], counts[clusterOwner{r.cluster, id}] = &owner{id: id}, true, r.n
		out = append(out, r)
		return nil
	}, `SELECT cluster, owner, COUNT(*), SUM(held_s), SUM(CASE WHEN energy_unknown = 0 AND energy_j > 0 THEN 1 ELSE 0 END),
SUM(CASE WHEN energy_unknown = 0 AND energy_j > 0 THEN energy_j ELSE 0 END)
FROM seedance_workload WHERE last_bucket >= $1 AND last_bucket < $2 AND `+inList("cluster", 3, len(sp.clusters))+` GROUP BY cluster, owner`,
		append([]any{sp.lo, hi}, names(sp.clusters)...)...)
	if err != nil {
		return nil, err
	}
	return describeOwners(ctx, tx, out, ids, counts)
}

// clusterOwner is an owner's rows in one cluster.
type clusterOwner struct {
	cluster string
	owner   int64
}

// scanRows runs q and hands each row to scan.
func scanRows(ctx context.Context, tx *sql.Tx, scan func(*sql.Rows) error, q string, args ...any) error {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrLedger, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return fmt.Errorf("%w: %v", ErrLedger, err)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%w: %v", ErrLedger, err)
	}
	return nil
}

// dailyWaste is each day's waste by group: the owners' idle-held cost per
// UTC day, keyed as the window's rows (those of owners without a workload
// in the window, and what no workload held, are left out), in date order
// and then by key.
func (l *Ledger) dailyWaste(ctx context.Context, tx *sql.Tx, sp span, window []workloadRow, levels []string) ([]DayWaste, error) {
	keys := map[clusterOwner]string{}
	for i := range window {
		r := &window[i]
		if r.owner == nil || r.unallocated() {
			continue
		}
		keys[clusterOwner{r.cluster, r.owner.id}] = strings.Join(r.keys(levels), "\x00")
	}
	rows, err := tx.QueryContext(ctx, `SELECT d, cluster, owner, SUM(cost_usd) FROM (`+
		sp.rows("seedance_owner_hold", "bucket - bucket % 86400 AS d, cluster, owner, cost_usd", "day AS d, cluster, owner, cost_usd")+`) x GROUP BY d, cluster, owner`, sp.args()...)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrLedger, err)
	}
	defer rows.Close()
	sums := map[[2]string]float64{}
	for rows.Next() {
		var d int64
		var id clusterOwner
		var cost float64
		if err := rows.Scan(&d, &id.cluster, &id.owner, &cost); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrLedger, err)
		}
		if k, ok := keys[id]; ok && cost != 0 {
			sums[[2]string{time.Unix(d, 0).UTC().Format(time.DateOnly), k}] += cost
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrLedger, err)
	}
	out := make([]DayWaste, 0, len(sums))
	for k, c := range sums {
		out = append(out, DayWaste{Date: k[0], Key: strings.Split(k[1], "\x00"), WasteCostUSD: analyze.Sig(c)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Date != out[j].Date {
			return out[i].Date < out[j].Date
		}
		return slices.Compare(out[i].Key, out[j].Key) < 0
	})
	return out, nil
}
