package ledger

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/profile"
)

// Schema 10 keeps the queues (docs/queues.md, Over time): per bucket and
// queue (seedance_queue) its quota, the GPU-seconds its workloads
// reserved and waited for, and what they held and used and its cost;
// seedance_queue_member says which workloads a queue admitted, and when.
// A report of any span sums them into queue figures (analyze.QueuesOf).
const migration10 = `CREATE TABLE seedance_queue (cluster TEXT NOT NULL, bucket BIGINT NOT NULL, queue TEXT NOT NULL, provisional INTEGER NOT NULL,
	kind TEXT NOT NULL, cohort TEXT NOT NULL, quota_ref TEXT NOT NULL, nominal_gpus DOUBLE PRECISION, largest_gpus DOUBLE PRECISION NOT NULL,
	reserved_s DOUBLE PRECISION NOT NULL, pending_s DOUBLE PRECISION NOT NULL, held_s DOUBLE PRECISION NOT NULL, used_s DOUBLE PRECISION NOT NULL,
	held_usd DOUBLE PRECISION NOT NULL, used_usd DOUBLE PRECISION NOT NULL,
	PRIMARY KEY (cluster, bucket, queue, provisional));
CREATE TABLE seedance_queue_member (cluster TEXT NOT NULL, queue TEXT NOT NULL, workload TEXT NOT NULL, first_bucket BIGINT NOT NULL, last_bucket BIGINT NOT NULL,
	PRIMARY KEY (cluster, queue, workload))`

// migration14 keeps what Slurm counted against a queue's GPU-minute
// budget when it was read (profile.BudgetUse) with its hourly rows, as its
// budget: NULL where it was not read.
const migration14 = `ALTER TABLE seedance_queue ADD COLUMN budget_used_gpu_minutes DOUBLE PRECISION;
ALTER TABLE seedance_queue ADD COLUMN budget_running_gpu_minutes DOUBLE PRECISION`

// migration15 keeps whether the source knew which workloads a queue
// admitted (profile.Queue.WorkloadsUnknown: Kueue's metrics alone) with
// its hourly rows: 1 where it did not, and what the queue held and used is
// then unknown (NULL: known, as every row before it); and the part of its
// waits its workloads' own limits or holds kept waiting
// (profile.QueueSpan.HeldBy; 0 in the rows before it).
const migration15 = `ALTER TABLE seedance_queue ADD COLUMN workloads_unknown INTEGER;
ALTER TABLE seedance_queue ADD COLUMN held_pending_s DOUBLE PRECISION NOT NULL DEFAULT 0`

// readings are a budget use's two readings, nil (NULL) when it was not
// read.
func readings(u *profile.BudgetUse) (used, running *float64) {
	if u == nil {
		return nil, nil
	}
	return &u.UsedGPUMinutes, &u.RunningGPUMinutes
}

// queueKey is one queue in one piece.
type queueKey struct {
	piece int
	queue string
}

// queueSums are a queue's GPU-seconds and dollars in one piece.
type queueSums struct {
	kind, cohort, ref                                        string
	nominal, budget, lend                                    *float64
	use                                                      *profile.BudgetUse
	reserved, pending, held, used, heldUSD, usedUSD, largest float64
	heldPending                                              float64
	unknown                                                  *int64 // 1: workloads unknown; nil: known
}

// writeQueues adds the cut's queues, and what their workloads held and
// used, priced at each piece's node's and model's price, to the hourly
// rows; and the queues' members.
func writeQueues(ex *execer, r *rows, price map[priceKey]float64) error {
	sums := map[queueKey]*queueSums{}
	var order []queueKey
	members := map[[2]string][2]int64{} // queue, workload → first and last bucket
	var memberOrder [][2]string
	at := func(k queueKey) *queueSums {
		if sums[k] == nil {
			sums[k] = &queueSums{}
			order = append(order, k)
		}
		return sums[k]
	}
	for _, q := range r.cuts.Queues {
		s := at(queueKey{q.Piece, q.Queue})
		s.kind, s.cohort, s.ref, s.nominal, s.reserved, s.pending, s.largest = q.Kind, q.Cohort, q.QuotaRef, q.NominalGPUs, q.ReservedS, q.PendingS, q.LargestGPUs
		s.budget, s.lend, s.use, s.heldPending = q.BudgetGPUMinutes, q.LendingLimitGPUs, q.BudgetUse, q.HeldPendingS
		if q.WorkloadsUnknown {
			s.unknown = new(int64)
			*s.unknown = 1
		}
	}
	for _, h := range r.cuts.Holds {
		if h.Workload == nil || h.Workload.Queue == "" || r.skip[h.Piece] {
			continue
		}
		s := at(queueKey{h.Piece, h.Workload.Queue})
		p := price[priceKey{int64(h.Piece), h.Node, h.Model}]
		s.held, s.used, s.heldUSD, s.usedUSD = s.held+h.HeldS, s.used+h.UsedS, s.heldUSD+h.HeldS*p/3600, s.usedUSD+h.UsedS*p/3600
		m := [2]string{h.Workload.Queue, h.Workload.ID}
		b := r.bucketOf[h.Piece]
		_, seen := members[m]
		if !seen {
			members[m] = [2]int64{b, b}
			memberOrder = append(memberOrder, m)
		}
		members[m] = [2]int64{min(members[m][0], b), max(members[m][1], b)}
	}
	for _, m := range memberOrder { // once per workload, not per hold row
		err := ex.add(`INSERT INTO seedance_queue_member AS o (cluster, queue, workload, first_bucket, last_bucket) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (cluster, queue, workload) DO UPDATE SET first_bucket = CASE WHEN o.first_bucket < excluded.first_bucket THEN o.first_bucket ELSE excluded.first_bucket END,
last_bucket = CASE WHEN o.last_bucket > excluded.last_bucket THEN o.last_bucket ELSE excluded.last_bucket END`, m[0], m[1], members[m][0], members[m][1])
		if err != nil {
			return err
		}
	}
	for _, k := range order {
		if r.skip[k.piece] {
			continue
		}
		s := sums[k]
		used, running := readings(s.use)
		err := ex.add(`INSERT INTO seedance_queue AS o (cluster, bucket, queue, provisional, kind, cohort, quota_ref, nominal_gpus, largest_gpus,
	reserved_s, pending_s, held_s, used_s, held_usd, used_usd, budget_gpu_minutes, lending_limit_gpus, budget_used_gpu_minutes, budget_running_gpu_minutes, workloads_unknown, held_pending_s)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)
ON CONFLICT (cluster, bucket, queue, provisional) DO UPDATE SET
kind = CASE WHEN excluded.kind = '' THEN o.kind ELSE excluded.kind END, cohort = CASE WHEN excluded.kind = '' THEN o.cohort ELSE excluded.cohort END,
quota_ref = CASE WHEN excluded.kind = '' THEN o.quota_ref ELSE excluded.quota_ref END,
nominal_gpus = CASE WHEN excluded.kind = '' THEN o.nominal_gpus ELSE excluded.nominal_gpus END,
budget_gpu_minutes = CASE WHEN excluded.kind = '' THEN o.budget_gpu_minutes ELSE excluded.budget_gpu_minutes END,
lending_limit_gpus = CASE WHEN excluded.kind = '' THEN o.lending_limit_gpus ELSE excluded.lending_limit_gpus END,
budget_used_gpu_minutes = CASE WHEN excluded.kind = '' THEN o.budget_used_gpu_minutes ELSE excluded.budget_used_gpu_minutes END,
budget_running_gpu_minutes = CASE WHEN excluded.kind = '' THEN o.budget_running_gpu_minutes ELSE excluded.budget_running_gpu_minutes END,
workloads_unknown = CASE WHEN o.workloads_unknown = 1 OR excluded.workloads_unknown = 1 THEN 1 ELSE NULL END,
largest_gpus = CASE WHEN o.largest_gpus > excluded.largest_gpus THEN o.largest_gpus ELSE excluded.largest_gpus END,
reserved_s = o.reserved_s + excluded.reserved_s, pending_s = o.pending_s + excluded.pending_s, held_pending_s = o.held_pending_s + excluded.held_pending_s,
held_s = o.held_s + excluded.held_s,
used_s = o.used_s + excluded.used_s, held_usd = o.held_usd + excluded.held_usd, used_usd = o.used_usd + excluded.used_usd`,
			r.bucketOf[k.piece], k.queue, r.provisional(k.piece), s.kind, s.cohort, s.ref, s.nominal, s.largest, s.reserved, s.pending, s.held, s.used, s.heldUSD, s.usedUSD, s.budget, s.lend, used, running, s.unknown, s.heldPending)
		if err != nil {
			return err
		}
	}
	return nil
}

// queueSections are the span's queue figures (analyze.QueuesOf): a queue
// of a span of several clusters is named cluster/queue.
func (l *Ledger) queueSections(ctx context.Context, tx *sql.Tx, sp span, bucketS int64, qp analyze.QueueParams) (*analyze.QueueSections, error) {
	var rows []analyze.QueueRow
	err := scanRows(ctx, tx, func(rs *sql.Rows) error {
		var r analyze.QueueRow
		var cluster string
		var bucket int64
		var used, running sql.NullFloat64
		var unknown sql.NullInt64
		if err := rs.Scan(&cluster, &bucket, &r.Queue, &r.Kind, &r.Cohort, &r.QuotaRef, &r.NominalGPUs, &r.LargestGPUs, &r.ReservedS, &r.PendingS, &r.HeldS, &r.UsedS,
			&r.HeldUSD, &r.UsedUSD, &r.BudgetGPUMinutes, &r.LendingLimitGPUs, &used, &running, &unknown, &r.HeldPendingS); err != nil { // a NULL leaves a pointer nil
			return err
		}
		r.WorkloadsUnknown = unknown.Valid && unknown.Int64 == 1
		if used.Valid && running.Valid {
			r.BudgetUse = &profile.BudgetUse{UsedGPUMinutes: used.Float64, RunningGPUMinutes: running.Float64}
		}
		r.Bucket, r.Queue = int((bucket-sp.lo)/bucketS), queueName(sp, cluster, r.Queue)
		rows = append(rows, r)
		return nil
	}, `SELECT cluster, bucket, queue, kind, cohort, quota_ref, nominal_gpus, largest_gpus, reserved_s, pending_s, held_s, used_s, held_usd, used_usd, budget_gpu_minutes, lending_limit_gpus,
	budget_used_gpu_minutes, budget_running_gpu_minutes, workloads_unknown, held_pending_s FROM seedance_queue
WHERE bucket >= $1 AND bucket < $2 AND provisional <= $3 AND `+inList("cluster", 4, len(sp.clusters))+` ORDER BY bucket, cluster, queue, provisional DESC`,
		append([]any{sp.lo, sp.hi, sp.maxProv}, names(sp.clusters)...)...)
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	members := map[string]int{}
	err = scanRows(ctx, tx, func(rs *sql.Rows) error {
		var cluster, queue string
		var n int
		if err := rs.Scan(&cluster, &queue, &n); err != nil {
			return err
		}
		members[queueName(sp, cluster, queue)] += n
		return nil
	}, `SELECT cluster, queue, COUNT(*) FROM seedance_queue_member WHERE first_bucket < $2 AND last_bucket >= $1 AND `+inList("cluster", 3, len(sp.clusters))+` GROUP BY cluster, queue`,
		append([]any{sp.lo, sp.hi}, names(sp.clusters)...)...)
	if err != nil {
		return nil, err
	}
	var held, heldUSD float64
	for _, r := range rows {
		held, heldUSD = held+r.HeldS/3600, heldUSD+r.HeldUSD
	}
	fleetPrice := 0.0
	if held > 0 {
		fleetPrice = heldUSD / held
	}
	n := int((sp.hi - sp.lo + bucketS - 1) / bucketS)
	s := analyze.QueuesOf(rows, n, float64(bucketS), members, fleetPrice, qp)
	return &s, nil
}

// queueName is a queue's name in a report of the span.
func queueName(sp span, cluster, queue string) string {
	if len(sp.clusters) > 1 {
		return fmt.Sprintf("%s/%s", cluster, queue)
	}
	return queue
}

// undoQueues takes a settled bucket's queue rows back (a backfill counts
// it again).
func undoQueues(ex *execer, b int64) error {
	return ex.exec(`DELETE FROM seedance_queue WHERE cluster = $1 AND bucket = $2 AND provisional = 0`, b)
}
