package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/seedance/seedance/chargeback"
	"github.com/seedance/seedance/profile"
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
	return l.chargeLines(ctx, tx, sp, q, false, func(day []chargeback.Line) error {
		// The export names each price's source (x_PriceSource); the
		// reports' charges do not read them.
		if err := priceSources(ctx, tx, sp, day); err != nil {
			return err
		}
		if err := attachWork(ctx, tx, sp, day); err != nil {
			return err
		}
		return each(day)
	})
}

// chargeback is the window's charges by the query's groups.
func (l *Ledger) chargeback(ctx context.Context, tx *sql.Tx, sp span, q Query) (*chargeback.Report, error) {
	sum := chargeback.NewSummer()
	bill, err := l.chargeLines(ctx, tx, sp, q, !slices.Contains(q.GroupBy, "workload"), func(day []chargeback.Line) error {
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
// holds a day whatever the span. byOwner reads a whole day's lines per
// owner instead of per workload (a grouping without the workload level:
// the two give every group the same sums). It returns the bill: the GPUs'
// observed time at its prices.
func (l *Ledger) chargeLines(ctx context.Context, tx *sql.Tx, sp span, q Query, byOwner bool, each func([]chargeback.Line) error) (float64, error) {
	lr := &lineReader{q: q, bucket: sp.bucket, each: each, byOwner: byOwner}
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
		err = scanRows(ctx, tx, lr.scan, withWorkload(hourCharges(in, "h.bucket")), hourly...)
	case ds.hi-ds.lo == 86400 && ds.daily(ds.lo) && lr.byOwner:
		if lr.owners == nil { // before the rows: one statement at a time on a connection
			if lr.owners, err = readOwners(ctx, tx, nil); err != nil {
				return err
			}
		}
		err = scanRows(ctx, tx, lr.scanOwner, `SELECT day, cluster, node, model, owner, SUM(held_s), SUM(used_s), SUM(idle_s), SUM(held_usd), SUM(used_usd), SUM(cost_usd),
	SUM(energy_j), MAX(price_usd_per_hour), COUNT(DISTINCT CASE WHEN held_s > 0 THEN workload END)
FROM seedance_charge_day WHERE day = $1 AND provisional <= $2 AND `+inList("cluster", 3, in)+` GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5`,
			append([]any{ds.lo, ds.maxProv}, names(ds.clusters)...)...)
	case ds.hi-ds.lo == 86400 && ds.daily(ds.lo):
		err = scanRows(ctx, tx, lr.scan, withWorkload(`SELECT day AS d, cluster, node, model, workload, 0 AS b, SUM(held_s), SUM(used_s), SUM(idle_s), SUM(held_usd), SUM(used_usd),
	SUM(cost_usd), SUM(energy_j), MAX(price_usd_per_hour)
FROM seedance_charge_day WHERE day = $1 AND provisional <= $2 AND `+inList("cluster", 3, in)+` GROUP BY 1, 2, 3, 4, 5`),
			append([]any{ds.lo, ds.maxProv}, names(ds.clusters)...)...)
	default:
		err = scanRows(ctx, tx, lr.scan, withWorkload(hourCharges(in, "0")), hourly...)
	}
	if err != nil {
		return err
	}
	return lr.flush()
}

// withWorkload is a charge query (its lines by day, cluster, node, model,
// workload and bucket) with each line's workload's name, kind and labels,
// in that order: one query a day, its workloads read by their key in the
// same statement (a line no workload held, or one of a workload the
// ledger does not know, has none).
func withWorkload(lines string) string {
	return `SELECT x.*, w.name, w.kind, w.labels FROM (` + lines + `) x
LEFT JOIN seedance_workload w ON w.cluster = x.cluster AND w.id = x.workload ORDER BY 1, 2, 3, 4, 5, 6`
}

// priceSources gives a day's lines the sources of their GPUs' prices
// (docs/pricing.md): each node and model's, the day's sources joined by
// "+" where it changed within the day. sp is the export's span, cut here
// to the lines' day; a whole day settled in the daily rollups is read from
// them (a day of 1,000 nodes: 1,000 rows instead of 24,000).
func priceSources(ctx context.Context, tx *sql.Tx, sp span, lines []chargeback.Line) error {
	if len(lines) == 0 {
		return nil
	}
	ds := sp
	ds.lo, ds.hi = max(sp.lo, lines[0].Period.Unix()), min(sp.hi, lines[0].Period.Unix()+86400)
	from := `seedance_gpu WHERE bucket >= $1 AND bucket < $2`
	if d := day(ds.lo); ds.lo == d && ds.hi == d+86400 && ds.daily(d) {
		from = `seedance_gpu_day WHERE day >= $1 AND day < $2` // a whole day: its rollup's rows, not its hours'
	}
	sources := map[[3]string][]string{}
	err := scanRows(ctx, tx, func(rows *sql.Rows) error {
		var c, n, m, s string
		err := rows.Scan(&c, &n, &m, &s)
		k := [3]string{c, n, m}
		sources[k] = append(sources[k], s)
		return err
	}, `SELECT DISTINCT cluster, node, model, price_source FROM `+from+` AND provisional <= $3 AND `+inList("cluster", 4, len(ds.clusters))+`
ORDER BY 1, 2, 3, 4`, append([]any{ds.lo, ds.hi, ds.maxProv}, names(ds.clusters)...)...)
	for i := range lines {
		l := &lines[i]
		l.PriceSource = strings.Join(sources[[3]string{l.Cluster, l.Node, l.Model}], "+")
	}
	return err
}

// hourCharges sums a span's hold rows at their GPUs' prices by day,
// cluster, node, model, workload and bucket (the bucket column given:
// "h.bucket", or "0" for every bucket of a day together); withWorkload
// orders them so, the rows of a line one after the other.
func hourCharges(clusters int, bucket string) string {
	return `SELECT h.bucket - h.bucket % 86400 AS d, h.cluster, h.node, h.model, h.workload, ` + bucket + ` AS b, SUM(h.held_s), SUM(h.used_s), SUM(h.idle_s),
	SUM(h.held_s * g.price_usd_per_hour) / 3600, SUM(h.used_s * g.price_usd_per_hour) / 3600, SUM(h.cost_usd), SUM(COALESCE(h.energy_j, 0)), MAX(g.price_usd_per_hour)
FROM seedance_hold h JOIN seedance_gpu g ON g.cluster = h.cluster AND g.bucket = h.bucket AND g.node = h.node AND g.model = h.model AND g.provisional = h.provisional
WHERE h.bucket >= $1 AND h.bucket < $2 AND h.provisional <= $3 AND ` + inList("h.cluster", 4, clusters) + `
GROUP BY 1, 2, 3, 4, 5, 6`
}

// lineReader makes charge lines of the charge queries' rows, a day at a
// time.
type lineReader struct {
	q       Query
	bucket  time.Duration
	each    func([]chargeback.Line) error
	day     []chargeback.Line
	byOwner bool
	// owners are the ledger's owners (the lines per owner's), read once.
	owners map[int64]*owner
	// keys are each workload's group keys; labels each label set
	// parsed (workloads share them): a day's, so that memory holds a
	// day's workloads whatever the window.
	keys   map[[2]string][]string
	labels map[string]map[string]string
}

func (lr *lineReader) scan(rows *sql.Rows) error {
	var c chargeback.Line
	var d, bucket int64
	var held, used, idle, energy float64
	var name, kind, labels sql.NullString
	if err := rows.Scan(&d, &c.Cluster, &c.Node, &c.Model, &c.Workload, &bucket, &held, &used, &idle, &c.HeldUSD, &c.UsedUSD, &c.IdleUSD, &energy, &c.PriceUSDPerHour,
		&name, &kind, &labels); err != nil {
		return err
	}
	if !c.Unallocated() && labels.Valid {
		keys, err := lr.keysOf(c.Cluster, c.Workload, name.String, kind.String, labels.String)
		if err != nil {
			return err
		}
		c.Group, c.GroupLevels = keys, lr.q.GroupBy
	}
	lineFigures(&c, d, held, used, idle, energy)
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

// scanOwner reads a line per owner: its owner's group keys, the number of
// workloads that held (Line.Holders). Owner 0 is what no workload held;
// -1 the workloads the ledger has no row of (no keys, as a workload line
// without its workload has).
func (lr *lineReader) scanOwner(rows *sql.Rows) error {
	var c chargeback.Line
	var d, id int64
	var held, used, idle, energy float64
	if err := rows.Scan(&d, &c.Cluster, &c.Node, &c.Model, &id, &held, &used, &idle, &c.HeldUSD, &c.UsedUSD, &c.IdleUSD, &energy, &c.PriceUSDPerHour, &c.Holders); err != nil {
		return err
	}
	if id < 0 {
		c.Workload = "owner -1"
	}
	if id > 0 {
		o := lr.owners[id]
		if o == nil {
			return fmt.Errorf("%w: charges of owner %d, which the ledger does not have", ErrLedger, id)
		}
		r := workloadRow{cluster: c.Cluster, w: o.w, owner: o}
		c.Workload, c.Group, c.GroupLevels = "owner "+strconv.FormatInt(id, 10), r.keys(lr.q.GroupBy), lr.q.GroupBy
	}
	lineFigures(&c, d, held, used, idle, energy)
	lr.day = append(lr.day, c)
	return nil
}

// lineFigures sets a line's day and its figures from a charge query's: seconds
// to hours, joules to kWh.
func lineFigures(c *chargeback.Line, d int64, held, used, idle, energy float64) {
	c.Period = time.Unix(d, 0).UTC()
	c.HeldH, c.UsedH, c.IdleH, c.EnergyKWh = held/3600, used/3600, idle/3600, energy/3.6e6
}

// keysOf is a workload's group keys, from its name, kind and labels.
func (lr *lineReader) keysOf(cluster, id, name, kind, labels string) ([]string, error) {
	k := [2]string{cluster, id}
	if keys, ok := lr.keys[k]; ok {
		return keys, nil
	}
	if lr.keys == nil {
		lr.keys, lr.labels = map[[2]string][]string{}, map[string]map[string]string{}
	}
	m, ok := lr.labels[labels]
	if !ok {
		if err := json.Unmarshal([]byte(labels), &m); err != nil {
			return nil, fmt.Errorf("workload %s's labels: %v", id, err)
		}
		lr.labels[labels] = m
	}
	r := workloadRow{cluster: cluster, w: profile.Workload{ID: id, Name: name, Kind: kind, Labels: m}}
	lr.keys[k] = r.keys(lr.q.GroupBy)
	return lr.keys[k], nil
}

// flush shares the day's lines and hands them on.
func (lr *lineReader) flush() error {
	if len(lr.day) == 0 {
		return nil
	}
	chargeback.Share(lr.day, lr.q.ShareIdle, lr.q.ShareIdleBy)
	err := lr.each(lr.day)
	lr.day, lr.keys, lr.labels = lr.day[:0], nil, nil
	return err
}

// budgets are the budgets' status for the month of the ledger's data end
// (the latest of the clusters'): each group's charges of the month so far,
// by the query's sharing rule, and the forecast, each cluster's part
// carried from its own data end (a budget by cluster: the cluster's whole
// bill, its unallocated cost included). The month's lines are read once a
// budget level, grouped by cluster and that level. A budget whose key
// matches no group of the month is an error (ErrBudgets): a misspelt key
// would otherwise read "ok, 0.00 USD"; one in force only from a later day
// says so.
func (l *Ledger) budgets(ctx context.Context, tx *sql.Tx, v *view, q Query) ([]chargeback.Status, error) {
	month := v.last.Add(-time.Millisecond).UTC()
	month = time.Date(month.Year(), month.Month(), 1, 0, 0, 0, 0, time.UTC)
	inForce := chargeback.InForce(q.Budgets, v.last.Add(-time.Millisecond))
	actual := map[[3]string]float64{} // level, key, cluster
	for _, level := range chargeback.Levels(inForce) {
		lq := q
		lq.GroupBy = []string{"cluster", level}
		if level == "cluster" {
			lq.GroupBy = []string{"cluster"}
		}
		_, err := l.chargeLines(ctx, tx, v.span(month, month.AddDate(0, 1, 0)), lq, level != "workload", func(day []chargeback.Line) error {
			for i := range day {
				c := &day[i]
				switch {
				case level == "cluster": // every line: the cluster's whole bill
					actual[[3]string{level, c.Cluster, c.Cluster}] += c.CostUSD()
				case !c.Unallocated():
					actual[[3]string{level, c.Group[1], c.Cluster}] += c.CostUSD()
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	var out []chargeback.Status
	for _, b := range inForce {
		var parts []chargeback.Part
		for _, c := range v.clusters {
			cost, ok := actual[[3]string{b.By, b.Key, c}]
			if ok || b.By == "cluster" && b.Key == c { // a cluster's budget has its part, charged or not
				p := chargeback.Part{Cluster: c, Since: later(month, v.firsts[c]), Through: earlier(v.ends[c], month.AddDate(0, 1, 0)), ActualUSD: cost}
				p.Lag, _ = v.lag(c, q, true)
				parts = append(parts, p)
			}
		}
		switch {
		case len(parts) > 0:
			out = append(out, chargeback.NewStatusOf(b, month, parts, q.MinObserved))
		case len(q.Clusters) == 0:
			return nil, fmt.Errorf("%w: budget by %s, key %s: no group of the ledger's %s has that key: a misspelt key?", chargeback.ErrBudgets, b.By, b.Key, month.Format("2006-01"))
		}
	}
	return append(out, notYet(q.Budgets, inForce, month)...), nil
}

// Budgets is the budgets' status (Query.Budgets) without the rest of a
// report, and a warning for each cluster whose data lags the latest
// cluster's or now (what ledger check says).
func (l *Ledger) Budgets(ctx context.Context, q Query) ([]chargeback.Status, []string, error) {
	tx, err := l.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true, Isolation: l.snapshot()})
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrLedger, err)
	}
	defer func() { _ = tx.Rollback() }()
	v, err := l.view(ctx, tx, q.Clusters)
	if err != nil {
		return nil, nil, err
	}
	statuses, err := l.budgets(ctx, tx, v, q)
	if err != nil {
		return nil, nil, err
	}
	var warnings []string
	for _, c := range v.clusters {
		if w := v.lagWarning(c, q, true); w != "" {
			warnings = append(warnings, w)
		}
	}
	return statuses, warnings, nil
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
