package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"time"

	"github.com/seedance/seedance/chargeback"
)

// Charges hands the window (whole buckets) to begin, then each UTC day of
// its charge lines to each, in order, shared by the query's rule: a day of
// lines at a time, whatever the window. It returns the bill: the GPUs'
// observed hours at their prices, which the lines' costs sum to.
func (l *Ledger) Charges(ctx context.Context, q Query, begin func(Window) error, each func([]chargeback.Line) error) (float64, error) {
	if err := checkGroupBy(q.GroupBy); err != nil {
		return 0, err
	}
	tx, err := l.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true, Isolation: l.snapshot()})
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrLedger, err)
	}
	defer func() { _ = tx.Rollback() }()
	v, err := l.view(ctx, tx, q.Clusters)
	if err != nil {
		return 0, err
	}
	lo, hi, err := l.bounds(ctx, tx, v, q.Since, q.Until)
	if err != nil {
		return 0, err
	}
	if err := begin(Window{Start: lo.UTC(), End: hi.UTC(), BucketS: int64(v.bucket / time.Second)}); err != nil {
		return 0, err
	}
	sp := span{lo.Unix(), hi.Unix(), 1, v.clusters, v.bucket}
	if q.Settled {
		sp.maxProv = 0
	}
	return l.chargeLines(ctx, tx, sp, q, each)
}

// chargeback is the window's charges by the query's groups.
func (l *Ledger) chargeback(ctx context.Context, tx *sql.Tx, sp span, q Query) (*chargeback.Report, error) {
	sum := chargeback.NewSummer()
	bill, err := l.chargeLines(ctx, tx, sp, q, func(day []chargeback.Line) error {
		sum.Add(day)
		return nil
	})
	if err != nil {
		return nil, err
	}
	r := sum.Report(q.ShareIdle, q.ShareIdleBy, q.GroupBy, q.Carbon != nil)
	if math.Abs(r.Total.CostUSD-bill) > 0.01+1e-9*bill {
		// The hold rows do not cover the GPUs' time: a damaged ledger.
		return nil, fmt.Errorf("%w: the charges sum to %.2f USD, the GPUs' time to %.2f USD: the ledger's rows disagree", ErrLedger, r.Total.CostUSD, bill)
	}
	return r, nil
}

// chargeLines reads the span's hold rows at their GPUs' prices, a line per
// day, cluster, node, model and workload, and hands them on a day at a
// time. It returns the bill: the GPUs' observed time at its prices.
func (l *Ledger) chargeLines(ctx context.Context, tx *sql.Tx, sp span, q Query, each func([]chargeback.Line) error) (float64, error) {
	keys, err := l.groupKeys(ctx, tx, sp, q.GroupBy)
	if err != nil {
		return 0, err
	}
	args := append([]any{sp.lo, sp.hi, sp.maxProv}, names(sp.clusters)...)
	lr := &lineReader{q: q, keys: keys, bucket: sp.bucket, each: each}
	err = scanRows(ctx, tx, lr.scan, chargeQuery(q.Carbon != nil, len(sp.clusters)), args...)
	if err == nil {
		err = lr.flush()
	}
	if err != nil {
		return 0, err
	}
	var bill float64
	err = tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(observed_s * price_usd_per_hour), 0) / 3600 FROM seedance_gpu WHERE bucket >= $1 AND bucket < $2 AND provisional <= $3 AND `+inList("cluster", 4, len(sp.clusters)), args...).Scan(&bill)
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrLedger, err)
	}
	return bill, nil
}

// chargeQuery sums the hold rows at their GPUs' prices by day, cluster,
// node, model and workload; byBucket keeps each bucket apart (in order,
// the rows of a line one after the other), for the grid intensity of its
// hours.
func chargeQuery(byBucket bool, clusters int) string {
	bucket, group := "0", "1, 2, 3, 4, 5"
	if byBucket {
		bucket, group = "h.bucket", "1, 2, 3, 4, 5, 6"
	}
	return `SELECT h.bucket - h.bucket % 86400, h.cluster, h.node, h.model, h.workload, ` + bucket + `, SUM(h.held_s), SUM(h.used_s), SUM(h.idle_s),
	SUM(h.held_s * g.price_usd_per_hour), SUM(h.used_s * g.price_usd_per_hour), SUM(h.cost_usd), SUM(COALESCE(h.energy_j, 0)), MAX(g.price_usd_per_hour)
FROM seedance_hold h JOIN seedance_gpu g ON g.cluster = h.cluster AND g.bucket = h.bucket AND g.node = h.node AND g.model = h.model AND g.provisional = h.provisional
WHERE h.bucket >= $1 AND h.bucket < $2 AND h.provisional <= $3 AND ` + inList("h.cluster", 4, clusters) + `
GROUP BY ` + group + ` ORDER BY ` + group
}

// lineReader makes charge lines of chargeQuery's rows, a day at a time.
type lineReader struct {
	q      Query
	keys   map[[2]string][]string
	bucket time.Duration
	each   func([]chargeback.Line) error
	day    []chargeback.Line
}

func (lr *lineReader) scan(rows *sql.Rows) error {
	var c chargeback.Line
	var d, bucket int64
	var held, used, idle, heldCost, usedCost, energy float64
	if err := rows.Scan(&d, &c.Cluster, &c.Node, &c.Model, &c.Workload, &bucket, &held, &used, &idle, &heldCost, &usedCost, &c.IdleUSD, &energy, &c.PriceUSDPerHour); err != nil {
		return err
	}
	c.Period = time.Unix(d, 0).UTC()
	if len(lr.day) > 0 && !lr.day[0].Period.Equal(c.Period) {
		if err := lr.flush(); err != nil {
			return err
		}
	}
	c.HeldH, c.UsedH, c.IdleH, c.HeldUSD, c.UsedUSD, c.EnergyKWh = held/3600, used/3600, idle/3600, heldCost/3600, usedCost/3600, energy/3.6e6
	if lr.q.Carbon != nil {
		g, ok := lr.q.Carbon.For(c.Cluster, time.Unix(bucket, 0), lr.bucket)
		c.EmissionsKg, c.EmissionsUnknown = c.EnergyKWh*g/1000, !ok && c.EnergyKWh > 0
		if c.EmissionsUnknown {
			c.EmissionsKg = 0
		}
	}
	if !c.Unallocated() {
		c.Group, c.GroupLevels = lr.keys[[2]string{c.Cluster, c.Workload}], lr.q.GroupBy
	}
	if k := len(lr.day) - 1; k >= 0 && lr.day[k].SameAs(&c) {
		lr.day[k].Merge(&c) // the line's next bucket
		return nil
	}
	lr.day = append(lr.day, c)
	return nil
}

// flush shares the day's lines and hands them on.
func (lr *lineReader) flush() error {
	if len(lr.day) == 0 {
		return nil
	}
	chargeback.Share(lr.day, lr.q.ShareIdle, lr.q.ShareIdleBy)
	err := lr.each(lr.day)
	lr.day = lr.day[:0]
	return err
}

// groupKeys are the group keys, by the levels, of every workload that held
// GPUs in the span, by cluster and workload.
func (l *Ledger) groupKeys(ctx context.Context, tx *sql.Tx, sp span, levels []string) (map[[2]string][]string, error) {
	var ws []workloadRow
	err := scanRows(ctx, tx, func(rows *sql.Rows) error {
		var r workloadRow
		if err := rows.Scan(&r.cluster, &r.w.ID); err != nil {
			return err
		}
		ws = append(ws, r)
		return nil
	}, `SELECT DISTINCT cluster, workload FROM seedance_hold WHERE bucket >= $1 AND bucket < $2 AND workload <> '' AND `+inList("cluster", 3, len(sp.clusters)),
		append([]any{sp.lo, sp.hi}, names(sp.clusters)...)...)
	if err != nil {
		return nil, err
	}
	if err := l.describe(ctx, tx, ws, `last_bucket >= $1 AND first_bucket < $2 AND `+inList("cluster", 3, len(sp.clusters)), append([]any{sp.lo, sp.hi}, names(sp.clusters)...)...); err != nil {
		return nil, err
	}
	out := make(map[[2]string][]string, len(ws))
	for i := range ws {
		out[[2]string{ws[i].cluster, ws[i].w.ID}] = ws[i].keys(levels)
	}
	return out, nil
}

// budgets are the budgets' status for the month of the ledger's data end
// (the latest of the clusters'): each group's charges of the month so far,
// by the query's sharing rule, and the forecast.
func (l *Ledger) budgets(ctx context.Context, tx *sql.Tx, v *view, q Query) ([]chargeback.Status, error) {
	var through time.Time
	for _, end := range v.ends {
		if end.After(through) {
			through = end
		}
	}
	month := through.Add(-time.Millisecond).UTC()
	month = time.Date(month.Year(), month.Month(), 1, 0, 0, 0, 0, time.UTC)
	sp := span{month.Unix(), month.AddDate(0, 1, 0).Unix(), 1, v.clusters, v.bucket}
	inForce := chargeback.InForce(q.Budgets, through.Add(-time.Millisecond))
	var out []chargeback.Status
	for _, level := range chargeback.Levels(inForce) {
		if err := checkGroupBy([]string{level}); err != nil {
			return nil, fmt.Errorf("%w (a budget's by)", err)
		}
		lq := q
		lq.GroupBy = []string{level}
		cb, err := l.chargeback(ctx, tx, sp, lq)
		if err != nil {
			return nil, err
		}
		for _, b := range inForce {
			if b.By != level {
				continue
			}
			actual := 0.0
			for _, r := range cb.Rows {
				if r.Key[0] == b.Key {
					actual = r.CostUSD
				}
			}
			out = append(out, chargeback.NewStatus(b, month, later(month, v.first), through, actual))
		}
	}
	return out, nil
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
