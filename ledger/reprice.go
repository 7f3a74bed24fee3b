package ledger

import (
	"database/sql"
	"sort"
	"time"
)

// A piece is priced at the prices in force when its data was read: the
// pieces between the previous watermark and the previous data end were
// read, and priced, by the previous update (its provisional rows), so a
// price that changes between two updates applies from the data read after
// the change, not from the previous watermark (which lies up to the reach
// before it, in the previous bucket when an update ends on the hour).

// withCut adds t to the ascending cut times when it lies strictly inside
// them.
func withCut(at []time.Time, t time.Time) []time.Time {
	if len(at) < 2 || !t.After(at[0]) || !t.Before(at[len(at)-1]) {
		return at
	}
	i := sort.Search(len(at), func(i int) bool { return !at[i].Before(t) })
	if at[i].Equal(t) {
		return at
	}
	return append(at[:i], append([]time.Time{t}, at[i:]...)...)
}

// priceKey is a node's GPUs of one model in one bucket.
type priceKey struct {
	bucket      int64
	node, model string
}

// reprice prices the pieces the previous update read at the prices of its
// provisional rows: a GPU row's cost and the cost of the hold rows of the
// same node and model scale by the old price over the new (a node's GPUs
// of one model share a price).
func reprice(ex *execer, r *rows) error {
	if r.readBefore == 0 {
		return nil
	}
	type was struct {
		usd    float64
		source string
	}
	old := map[priceKey]was{}
	err := queryEach(ex, func(rows *sql.Rows) error {
		var k priceKey
		var w was
		err := rows.Scan(&k.bucket, &k.node, &k.model, &w.usd, &w.source)
		old[k] = w
		return err
	}, `SELECT bucket, node, model, price_usd_per_hour, price_source FROM seedance_gpu WHERE cluster = $1 AND bucket >= $2 AND provisional = 1`, r.from)
	if err != nil || len(old) == 0 {
		return err
	}
	factor := map[[2]any]float64{} // piece, node + model
	for i := range r.cuts.GPUs {
		g := &r.cuts.GPUs[i]
		w, ok := old[priceKey{r.bucketOf[g.Piece], g.Node, g.Model}]
		if g.Piece >= r.readBefore || !ok || g.PriceUSDPerHour <= 0 || w.usd == g.PriceUSDPerHour {
			continue
		}
		f := w.usd / g.PriceUSDPerHour
		factor[[2]any{g.Piece, g.Node + "\x00" + g.Model}] = f
		g.CostUSD *= f
		g.PriceUSDPerHour, g.PriceSource = w.usd, w.source
	}
	for i := range r.cuts.Holds {
		h := &r.cuts.Holds[i]
		if f, ok := factor[[2]any{h.Piece, h.Node + "\x00" + h.Model}]; ok {
			h.CostUSD *= f
		}
	}
	return nil
}
