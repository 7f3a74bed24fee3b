package ledger

import "database/sql"

// Schema 5 adds seedance_charge_day: the hold rows of each day, node,
// model and workload summed at their GPUs' prices, kept by every write as
// the other rollups are. The charges and the FOCUS export of a month read
// its ~150,000 rows for 1,000 nodes instead of joining 3.6 M hold rows
// with their GPUs' prices hour by hour (docs/performance.md).
const chargeDayTable = `CREATE TABLE seedance_charge_day (cluster TEXT NOT NULL, day BIGINT NOT NULL, node TEXT NOT NULL, model TEXT NOT NULL,
	workload TEXT NOT NULL, provisional INTEGER NOT NULL,
	held_s DOUBLE PRECISION NOT NULL, used_s DOUBLE PRECISION NOT NULL, idle_s DOUBLE PRECISION NOT NULL,
	held_usd DOUBLE PRECISION NOT NULL, used_usd DOUBLE PRECISION NOT NULL, cost_usd DOUBLE PRECISION NOT NULL,
	energy_j DOUBLE PRECISION NOT NULL, price_usd_per_hour DOUBLE PRECISION NOT NULL,
	PRIMARY KEY (cluster, day, node, model, workload, provisional))`

// holdAtPrice is the hold rows joined with their GPUs' price: the columns
// of seedance_charge_day after its key, for the rows the WHERE that
// follows selects (h is seedance_hold, g seedance_gpu).
const holdAtPrice = `h.held_s, h.used_s, h.idle_s, h.held_s * g.price_usd_per_hour / 3600, h.used_s * g.price_usd_per_hour / 3600, h.cost_usd,
	COALESCE(h.energy_j, 0), g.price_usd_per_hour
FROM seedance_hold h JOIN seedance_gpu g ON g.cluster = h.cluster AND g.bucket = h.bucket AND g.node = h.node AND g.model = h.model AND g.provisional = h.provisional`

// migration5 makes the table and fills it from the hourly rows.
var migration5 = chargeDayTable + `;
INSERT INTO seedance_charge_day SELECT cluster, d, node, model, workload, provisional, SUM(a), SUM(b), SUM(c), SUM(e), SUM(f), SUM(k), SUM(m), MAX(p)
FROM (SELECT h.cluster, h.bucket - h.bucket % 86400 AS d, h.node, h.model, h.workload, h.provisional,
	h.held_s AS a, h.used_s AS b, h.idle_s AS c, h.held_s * g.price_usd_per_hour / 3600 AS e, h.used_s * g.price_usd_per_hour / 3600 AS f, h.cost_usd AS k,
	COALESCE(h.energy_j, 0) AS m, g.price_usd_per_hour AS p
FROM seedance_hold h JOIN seedance_gpu g ON g.cluster = h.cluster AND g.bucket = h.bucket AND g.node = h.node AND g.model = h.model AND g.provisional = h.provisional) x
GROUP BY cluster, d, node, model, workload, provisional;
`

// Schema 8 gives each row of seedance_charge_day its workload's owner
// (owner.go; 0 for what no workload held, -1 for a workload the ledger
// has no row of), kept equal to the workload's as its owner moves
// (moveOwner): a report grouped by anything but the
// workload reads the charges per owner, node and day, summed by the
// database without a join, instead of a line per workload
// (docs/performance.md).
//
// It also keys the workloads' last-bucket index by cluster first: an
// update finds its cluster's provisional workloads by it (undoProvisional)
// instead of reading all of the cluster's workloads, so that an update's
// cost does not grow with the ledger's age (docs/performance.md).
var migration8 = `ALTER TABLE seedance_charge_day ADD COLUMN owner BIGINT NOT NULL DEFAULT 0;
UPDATE seedance_charge_day SET owner = ` + workloadOwner("seedance_charge_day") + `;
DROP INDEX seedance_workload_last;
CREATE INDEX seedance_workload_last ON seedance_workload (cluster, last_bucket)`

// workloadOwner is the owner of the workload of table t's row (its
// cluster and workload columns): 0 for what no workload held, -1 for a
// workload the ledger has no row of.
func workloadOwner(t string) string {
	return `COALESCE((SELECT w.owner FROM seedance_workload w WHERE w.cluster = ` + t + `.cluster AND w.id = ` + t + `.workload),
	CASE WHEN ` + t + `.workload = '' THEN 0 ELSE -1 END)`
}

// chargeDay is one row's addition to seedance_charge_day, which holds
// settled rows only (migration12).
type chargeDay struct {
	day                                int64
	node, model, workload              string
	owner                              int64
	held, used, idle, heldUSD, usedUSD float64
	cost, energy, price                float64
}

// putChargeDay adds c to its day's row. A row's owner is set when it is
// made; moveOwner moves it (before an update's rows are put).
func putChargeDay(ex *execer, c chargeDay) error {
	return ex.add(`INSERT INTO seedance_charge_day AS o (cluster, day, node, model, workload, provisional, held_s, used_s, idle_s, held_usd, used_usd, cost_usd, energy_j, price_usd_per_hour, owner)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
ON CONFLICT (cluster, day, node, model, workload, provisional) DO UPDATE SET held_s = o.held_s + excluded.held_s, used_s = o.used_s + excluded.used_s,
idle_s = o.idle_s + excluded.idle_s, held_usd = o.held_usd + excluded.held_usd, used_usd = o.used_usd + excluded.used_usd, cost_usd = o.cost_usd + excluded.cost_usd,
energy_j = o.energy_j + excluded.energy_j, price_usd_per_hour = CASE WHEN o.price_usd_per_hour > excluded.price_usd_per_hour THEN o.price_usd_per_hour ELSE excluded.price_usd_per_hour END`,
		c.day, c.node, c.model, c.workload, 0, c.held, c.used, c.idle, c.heldUSD, c.usedUSD, c.cost, c.energy, c.price, c.owner)
}

// undoChargeDay takes a settled bucket's hold rows back out of their
// day's charges (a backfill counts the bucket again).
func undoChargeDay(ex *execer, bucket int64) error {
	var cs []chargeDay
	err := queryEach(ex, func(rows *sql.Rows) error {
		c := chargeDay{day: day(bucket)}
		err := rows.Scan(&c.node, &c.model, &c.workload, &c.owner, &c.held, &c.used, &c.idle, &c.heldUSD, &c.usedUSD, &c.cost, &c.energy, &c.price)
		c.held, c.used, c.idle, c.heldUSD, c.usedUSD, c.cost, c.energy = -c.held, -c.used, -c.idle, -c.heldUSD, -c.usedUSD, -c.cost, -c.energy
		cs = append(cs, c)
		return err
	}, `SELECT h.node, h.model, h.workload, `+workloadOwner("h")+`, `+holdAtPrice+`
WHERE h.cluster = $1 AND h.bucket = $2 AND h.provisional = 0`, bucket)
	for i := 0; err == nil && i < len(cs); i++ {
		err = putChargeDay(ex, cs[i])
	}
	return err
}
