package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/chargeback"
	"github.com/seedance/seedance/profile"
)

// Schema 9 keeps the work the workloads' counters counted (docs/units.md,
// Over time): per bucket (seedance_work) and per day (seedance_work_day),
// node, workload, unit and model, with what the workload held on the node
// then, so that a report of any span sums the rows into unit figures
// (analyze.Units) without a join, as one analysis of the span would.
const workCols = `node TEXT NOT NULL, workload TEXT NOT NULL, unit TEXT NOT NULL, model TEXT NOT NULL, provisional INTEGER NOT NULL,
	work DOUBLE PRECISION NOT NULL, counted INTEGER NOT NULL, faulty INTEGER NOT NULL,
	held_s DOUBLE PRECISION NOT NULL, idle_s DOUBLE PRECISION NOT NULL, held_usd DOUBLE PRECISION NOT NULL, idle_usd DOUBLE PRECISION NOT NULL,
	energy_j DOUBLE PRECISION NOT NULL, energy_measured INTEGER NOT NULL`

var migration9 = `CREATE TABLE seedance_work (cluster TEXT NOT NULL, bucket BIGINT NOT NULL, ` + workCols + `,
	PRIMARY KEY (cluster, bucket, node, workload, unit, model, provisional));
CREATE TABLE seedance_work_day (cluster TEXT NOT NULL, day BIGINT NOT NULL, ` + workCols + `,
	PRIMARY KEY (cluster, day, node, workload, unit, model, provisional))`

// writeWork adds the cut's rows of work, hourly and daily.
func writeWork(ex *execer, r *rows) error {
	for _, w := range r.cuts.Work {
		if r.skip[w.Piece] {
			continue
		}
		for _, t := range []struct {
			table, col string
			key        int64
		}{{"seedance_work", "bucket", r.bucketOf[w.Piece]}, {"seedance_work_day", "day", day(r.bucketOf[w.Piece])}} {
			if t.col == "day" && r.provisional(w.Piece) == 1 {
				continue // the daily rollups hold settled rows only (migration12)
			}
			err := ex.add(`INSERT INTO `+t.table+` AS o (cluster, `+t.col+`, node, workload, unit, model, provisional, work, counted, faulty,
	held_s, idle_s, held_usd, idle_usd, energy_j, energy_measured)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
ON CONFLICT (cluster, `+t.col+`, node, workload, unit, model, provisional) DO UPDATE SET work = o.work + excluded.work,
	counted = CASE WHEN o.counted > excluded.counted THEN o.counted ELSE excluded.counted END,
	faulty = CASE WHEN o.faulty > excluded.faulty THEN o.faulty ELSE excluded.faulty END,
	held_s = o.held_s + excluded.held_s, idle_s = o.idle_s + excluded.idle_s, held_usd = o.held_usd + excluded.held_usd,
	idle_usd = o.idle_usd + excluded.idle_usd, energy_j = o.energy_j + excluded.energy_j,
	energy_measured = CASE WHEN o.energy_measured < excluded.energy_measured THEN o.energy_measured ELSE excluded.energy_measured END`,
				t.key, w.Node, w.Workload, w.Unit, w.Model, r.provisional(w.Piece), w.Work, b2i(w.Counted), b2i(w.Faulty),
				w.HeldS, w.IdleS, w.HeldUSD, w.IdleUSD, w.EnergyJ, b2i(w.EnergyMeasured))
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// undoWork takes a settled bucket's rows of work back: they are deleted,
// and their day's settled rollup is made again from the day's other
// buckets (its counted and faulty flags cannot be subtracted).
func undoWork(ex *execer, b int64) error {
	d := day(b)
	if err := ex.exec(`DELETE FROM seedance_work WHERE cluster = $1 AND bucket = $2 AND provisional = 0`, b); err != nil {
		return err
	}
	if err := ex.exec(`DELETE FROM seedance_work_day WHERE cluster = $1 AND day = $2 AND provisional = 0`, d); err != nil {
		return err
	}
	return ex.exec(`INSERT INTO seedance_work_day SELECT cluster, bucket - bucket % 86400, node, workload, unit, model, provisional, SUM(work),
	MAX(counted), MAX(faulty), SUM(held_s), SUM(idle_s), SUM(held_usd), SUM(idle_usd), SUM(energy_j), MIN(energy_measured)
FROM seedance_work WHERE cluster = $1 AND bucket >= $2 AND bucket < $2 + 86400 AND provisional = 0
GROUP BY cluster, bucket - bucket % 86400, node, workload, unit, model, provisional`, d)
}

// unitRows are the span's rows of work summed by cluster, node, workload,
// unit and model, with their workloads' names and labels.
func (l *Ledger) unitRows(ctx context.Context, tx *sql.Tx, sp span) ([]analyze.UnitRow, error) {
	rows, _, err := l.unitRowsBy(ctx, tx, sp, false)
	return rows, err
}

// unitRowsBy is unitRows, by UTC day when daily (each row's day beside it).
func (l *Ledger) unitRowsBy(ctx context.Context, tx *sql.Tx, sp span, daily bool) ([]analyze.UnitRow, []int64, error) {
	const rest = `node, workload, unit, model, work, counted, faulty, held_s, idle_s, held_usd, idle_usd, energy_j, energy_measured`
	cols, dayCols := `cluster, 0 AS d, `+rest, `cluster, 0 AS d, `+rest
	if daily {
		cols, dayCols = `cluster, bucket - bucket % 86400 AS d, `+rest, `cluster, day AS d, `+rest
	}
	q := `SELECT cluster, d, node, workload, unit, model, SUM(work), MAX(counted), MAX(faulty), SUM(held_s), SUM(idle_s), SUM(held_usd), SUM(idle_usd),
	SUM(energy_j), MIN(energy_measured) FROM (` + sp.rows("seedance_work", cols, dayCols) + `) x GROUP BY cluster, d, node, workload, unit, model
	ORDER BY d, cluster, node, workload, unit, model`
	rs, err := tx.QueryContext(ctx, q, sp.args()...)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrLedger, err)
	}
	defer rs.Close()
	var out []analyze.UnitRow
	var days []int64
	var held []workloadRow // each workload once, for its name and labels (describe)
	at := map[[2]string]int{}
	var of []int // out[i]'s workload in held
	for rs.Next() {
		var r analyze.UnitRow
		var cluster string
		var d int64
		var counted, faulty, measured int
		var heldS, idleS float64
		if err := rs.Scan(&cluster, &d, &r.Node, &r.Workload.ID, &r.Unit, &r.Model, &r.Work, &counted, &faulty, &heldS, &idleS,
			&r.CostUSD, &r.IdleCostUSD, &r.EnergyJ, &measured); err != nil {
			return nil, nil, fmt.Errorf("%w: %v", ErrLedger, err)
		}
		r.Trusted, r.EnergyMeasured = counted == 1 && faulty == 0, measured == 1
		r.HeldH, r.IdleH = heldS/3600, idleS/3600
		if heldS <= 0 {
			continue // it held no GPU there in the span: its counters would price work at nothing
		}
		out, days = append(out, r), append(days, d)
		k := [2]string{cluster, r.Workload.ID}
		i, ok := at[k]
		if !ok {
			i = len(held)
			at[k] = i
			held = append(held, workloadRow{cluster: cluster, w: profile.Workload{ID: r.Workload.ID}})
		}
		of = append(of, i)
	}
	if err := rs.Err(); err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrLedger, err)
	}
	if err := l.describe(ctx, tx, held, `last_bucket >= $1 AND first_bucket < $2 AND `+inList("cluster", 3, len(sp.clusters)),
		append([]any{sp.lo, sp.hi}, names(sp.clusters)...)...); err != nil {
		return nil, nil, err
	}
	for i := range out {
		h := held[of[i]]
		out[i].Workload = h.w
		if len(sp.clusters) > 1 {
			out[i].Node = h.cluster + "/" + out[i].Node
		}
	}
	return out, days, nil
}

// dailyUnits gives each day of r.Daily its fleet's unit figures.
func (l *Ledger) dailyUnits(ctx context.Context, tx *sql.Tx, sp span, r *Report) error {
	rows, days, err := l.unitRowsBy(ctx, tx, sp, true)
	if err != nil {
		return err
	}
	byDay := map[string][]analyze.UnitRow{}
	for i, row := range rows {
		d := time.Unix(days[i], 0).UTC().Format(time.DateOnly)
		byDay[d] = append(byDay[d], row)
	}
	for i := range r.Daily {
		if rs := byDay[r.Daily[i].Date]; len(rs) > 0 {
			r.Daily[i].Units = analyze.Units(rs, nil).Fleet
		}
	}
	return nil
}

// attachWork gives a period's charge lines their workloads' work (x_Work
// of the FOCUS export, docs/chargeback.md): each workload's work on a
// node in the period goes on its first line there (one per GPU model), so
// that no row counts it twice; a unit whose counter was faulty in the
// period is left out.
func attachWork(ctx context.Context, tx *sql.Tx, sp span, lines []chargeback.Line) error {
	if len(lines) == 0 {
		return nil
	}
	p := lines[0].Period.Unix()
	ds := sp
	ds.lo, ds.hi = max(sp.lo, p), min(sp.hi, p+86400)
	first := map[string]int{}
	for i := len(lines) - 1; i >= 0; i-- {
		first[lines[i].Cluster+"\x00"+lines[i].Node+"\x00"+lines[i].Workload] = i
	}
	const cols = `cluster, node, workload, unit, work, faulty`
	return scanRows(ctx, tx, func(rows *sql.Rows) error {
		var cluster, node, workload, unit string
		var work float64
		var faulty int
		if err := rows.Scan(&cluster, &node, &workload, &unit, &work, &faulty); err != nil {
			return err
		}
		i, ok := first[cluster+"\x00"+node+"\x00"+workload]
		if !ok || faulty == 1 {
			return nil
		}
		if lines[i].Work == nil {
			lines[i].Work = map[string]float64{}
		}
		lines[i].Work[unit] = analyze.Sig(work)
		return nil
	}, `SELECT cluster, node, workload, unit, SUM(work), MAX(faulty) FROM (`+ds.rows("seedance_work", cols, cols)+`) x
	GROUP BY cluster, node, workload, unit ORDER BY 1, 2, 3, 4`, ds.args()...)
}
