package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"strings"
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
	sp := v.span(lo, hi)
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
// time: each day is read apart, with its workloads' keys, so that memory
// holds a day whatever the span. It returns the bill: the GPUs' observed
// time at its prices.
func (l *Ledger) chargeLines(ctx context.Context, tx *sql.Tx, sp span, q Query, each func([]chargeback.Line) error) (float64, error) {
	lr := &lineReader{q: q, bucket: sp.bucket, each: each}
	for d := day(sp.lo); d < sp.hi; d += 86400 {
		ds := sp
		ds.lo, ds.hi = max(sp.lo, d), min(sp.hi, d+86400)
		if err := l.chargeDay(ctx, tx, ds, lr); err != nil {
			return 0, err
		}
	}
	var bill float64
	err := tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(o * p), 0) / 3600 FROM (`+sp.rows("seedance_gpu", "observed_s AS o, price_usd_per_hour AS p", "observed_s, price_usd_per_hour")+`) x`, sp.args()...).Scan(&bill)
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrLedger, err)
	}
	return bill, nil
}

// chargeDay reads one day's (part of a day's) lines into lr, gives them
// their workloads' keys and hands them on: a whole day from the per-day
// rollup, a part of one from its hourly rows, every bucket apart with a
// grid intensity.
func (l *Ledger) chargeDay(ctx context.Context, tx *sql.Tx, ds span, lr *lineReader) error {
	in := len(ds.clusters)
	hourly := append([]any{ds.lo, ds.hi, ds.maxProv}, names(ds.clusters)...)
	var err error
	switch {
	case lr.q.Carbon != nil:
		err = scanRows(ctx, tx, lr.scan, hourCharges(in, "h.bucket"), hourly...)
	case ds.hi-ds.lo == 86400:
		err = scanRows(ctx, tx, lr.scan, `SELECT day, cluster, node, model, workload, 0, SUM(held_s), SUM(used_s), SUM(idle_s), SUM(held_usd), SUM(used_usd), SUM(cost_usd),
	SUM(energy_j), MAX(price_usd_per_hour)
FROM seedance_charge_day WHERE day = $1 AND provisional <= $2 AND `+inList("cluster", 3, in)+` GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5`,
			append([]any{ds.lo, ds.maxProv}, names(ds.clusters)...)...)
	default:
		err = scanRows(ctx, tx, lr.scan, hourCharges(in, "0"), hourly...)
	}
	if err == nil {
		err = l.keysOf(ctx, tx, lr)
	}
	if err == nil {
		err = priceSources(ctx, tx, ds, lr.day)
	}
	if err != nil {
		return err
	}
	return lr.flush()
}

// priceSources gives the day's lines the sources of their GPUs' prices
// (docs/pricing.md): each node and model's, the day's sources joined by
// "+" where it changed within the day.
func priceSources(ctx context.Context, tx *sql.Tx, ds span, day []chargeback.Line) error {
	if len(day) == 0 {
		return nil
	}
	sources := map[[3]string][]string{}
	err := scanRows(ctx, tx, func(rows *sql.Rows) error {
		var c, n, m, s string
		err := rows.Scan(&c, &n, &m, &s)
		k := [3]string{c, n, m}
		sources[k] = append(sources[k], s)
		return err
	}, `SELECT DISTINCT cluster, node, model, price_source FROM seedance_gpu WHERE bucket >= $1 AND bucket < $2 AND provisional <= $3 AND `+inList("cluster", 4, len(ds.clusters))+`
ORDER BY 1, 2, 3, 4`, append([]any{ds.lo, ds.hi, ds.maxProv}, names(ds.clusters)...)...)
	for i := range day {
		l := &day[i]
		l.PriceSource = strings.Join(sources[[3]string{l.Cluster, l.Node, l.Model}], "+")
	}
	return err
}

// hourCharges sums a span's hold rows at their GPUs' prices by day,
// cluster, node, model, workload and bucket (the bucket column given:
// "h.bucket", or "0" for every bucket of a day together), in that order:
// the rows of a line one after the other.
func hourCharges(clusters int, bucket string) string {
	return `SELECT h.bucket - h.bucket % 86400, h.cluster, h.node, h.model, h.workload, ` + bucket + `, SUM(h.held_s), SUM(h.used_s), SUM(h.idle_s),
	SUM(h.held_s * g.price_usd_per_hour) / 3600, SUM(h.used_s * g.price_usd_per_hour) / 3600, SUM(h.cost_usd), SUM(COALESCE(h.energy_j, 0)), MAX(g.price_usd_per_hour)
FROM seedance_hold h JOIN seedance_gpu g ON g.cluster = h.cluster AND g.bucket = h.bucket AND g.node = h.node AND g.model = h.model AND g.provisional = h.provisional
WHERE h.bucket >= $1 AND h.bucket < $2 AND h.provisional <= $3 AND ` + inList("h.cluster", 4, clusters) + `
GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6`
}

// lineReader makes charge lines of the charge queries' rows, a day at a
// time.
type lineReader struct {
	q      Query
	bucket time.Duration
	each   func([]chargeback.Line) error
	day    []chargeback.Line
}

func (lr *lineReader) scan(rows *sql.Rows) error {
	var c chargeback.Line
	var d, bucket int64
	var held, used, idle, energy float64
	if err := rows.Scan(&d, &c.Cluster, &c.Node, &c.Model, &c.Workload, &bucket, &held, &used, &idle, &c.HeldUSD, &c.UsedUSD, &c.IdleUSD, &energy, &c.PriceUSDPerHour); err != nil {
		return err
	}
	c.Period = time.Unix(d, 0).UTC()
	c.HeldH, c.UsedH, c.IdleH, c.EnergyKWh = held/3600, used/3600, idle/3600, energy/3.6e6
	if lr.q.Carbon != nil {
		g, ok := lr.q.Carbon.For(c.Cluster, time.Unix(bucket, 0), lr.bucket)
		if c.EmissionsUnknown = !ok && c.EnergyKWh > 0; ok {
			c.EmissionsKg = c.EnergyKWh * g / 1000
		}
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

// keysOf gives the day's lines their workloads' group keys, reading the
// workloads they name by key, a few hundred at a time.
func (l *Ledger) keysOf(ctx context.Context, tx *sql.Tx, lr *lineReader) error {
	ids := map[string][]any{} // cluster → its workloads' ids
	seen := map[[2]string]bool{}
	for _, c := range lr.day {
		if k := [2]string{c.Cluster, c.Workload}; !c.Unallocated() && !seen[k] {
			seen[k] = true
			ids[c.Cluster] = append(ids[c.Cluster], c.Workload)
		}
	}
	keys := make(map[[2]string][]string, len(seen))
	parsed := map[string]map[string]string{} // workloads share their labels: parse each set once
	scan := func(rows *sql.Rows) error {
		var r workloadRow
		var labels string
		if err := rows.Scan(&r.cluster, &r.w.ID, &r.w.Name, &r.w.Kind, &labels); err != nil {
			return err
		}
		m, ok := parsed[labels]
		if !ok {
			if err := json.Unmarshal([]byte(labels), &m); err != nil {
				return fmt.Errorf("workload %s's labels: %v", r.w.ID, err)
			}
			parsed[labels] = m
		}
		r.w.Labels = m
		keys[[2]string{r.cluster, r.w.ID}] = r.keys(lr.q.GroupBy)
		return nil
	}
	for cluster, all := range ids {
		for len(all) > 0 {
			batch := all[:min(len(all), 500)]
			all = all[len(batch):]
			q := `SELECT cluster, id, name, kind, labels FROM seedance_workload WHERE cluster = $1 AND ` + inList("id", 2, len(batch))
			if err := scanRows(ctx, tx, scan, q, append([]any{cluster}, batch...)...); err != nil {
				return err
			}
		}
	}
	for i := range lr.day {
		if c := &lr.day[i]; !c.Unallocated() {
			c.Group, c.GroupLevels = keys[[2]string{c.Cluster, c.Workload}], lr.q.GroupBy
		}
	}
	return nil
}

// budgets are the budgets' status for the month of the ledger's data end
// (the latest of the clusters'): each group's charges of the month so far,
// by the query's sharing rule, and the forecast, each cluster's part
// carried from its own data end (a budget by cluster: the cluster's whole
// bill, its unallocated cost included). A budget whose key matches no
// group of the month is an error (ErrBudgets): a misspelt key would
// otherwise read "ok, 0.00 USD"; one in force only from a later day says
// so.
func (l *Ledger) budgets(ctx context.Context, tx *sql.Tx, v *view, q Query) ([]chargeback.Status, error) {
	var through time.Time
	for _, end := range v.ends {
		through = later(through, end)
	}
	month := through.Add(-time.Millisecond).UTC()
	month = time.Date(month.Year(), month.Month(), 1, 0, 0, 0, 0, time.UTC)
	inForce := chargeback.InForce(q.Budgets, through.Add(-time.Millisecond))
	parts := map[[2]string][]chargeback.Part{} // by budget level and key
	for _, level := range chargeback.Levels(inForce) {
		for _, c := range v.clusters {
			p := chargeback.Part{Cluster: c, Since: later(month, v.firsts[c]), Through: earlier(v.ends[c], month.AddDate(0, 1, 0))}
			p.Lag, _ = v.lag(c, q, true)
			lq := q
			lq.GroupBy = []string{level}
			cb, err := l.chargeback(ctx, tx, span{month.Unix(), month.AddDate(0, 1, 0).Unix(), 1, []string{c}, v.bucket}, lq)
			if err != nil {
				return nil, err
			}
			if level == "cluster" {
				p.ActualUSD = cb.Total.CostUSD
				parts[[2]string{level, c}] = append(parts[[2]string{level, c}], p)
				continue
			}
			for _, r := range cb.Rows {
				p.ActualUSD = r.CostUSD
				parts[[2]string{level, r.Key[0]}] = append(parts[[2]string{level, r.Key[0]}], p)
			}
		}
	}
	var out []chargeback.Status
	for _, b := range inForce {
		ps, ok := parts[[2]string{b.By, b.Key}]
		if !ok && len(q.Clusters) == 0 {
			return nil, fmt.Errorf("%w: budget by %s, key %s: no group of the ledger's %s has that key: a misspelt key?", chargeback.ErrBudgets, b.By, b.Key, month.Format("2006-01"))
		}
		if ok {
			out = append(out, chargeback.NewStatusOf(b, month, ps, q.MinObserved))
		}
	}
	return append(out, notYet(q.Budgets, inForce, month)...), nil
}

// notYet are the statuses of the budgets of groups none of whose entries
// is in force yet.
func notYet(all, inForce []chargeback.Budget, month time.Time) []chargeback.Status {
	var out []chargeback.Status
	seen := map[[2]string]bool{}
	for _, b := range inForce {
		seen[[2]string{b.By, b.Key}] = true
	}
	for _, b := range all {
		if k := [2]string{b.By, b.Key}; !seen[k] {
			seen[k] = true
			out = append(out, chargeback.Status{Budget: b, Month: month.Format("2006-01"), NotYet: true})
		}
	}
	return out
}

func earlier(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
