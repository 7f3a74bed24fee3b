package ledger

import (
	"math"
	"testing"
)

// sameRollups compares what two ledgers of the same data hold in their
// running sums, row by row under natural keys (owner and workload ids may
// differ): each workload's settled sums, each day's hold rows, each day's
// owner rows. A backfill undoes and redoes these, and the reports do not
// read all of them.
func sameRollups(t testing.TB, got, want *Ledger) {
	t.Helper()
	queries := map[string]string{
		"workload": `SELECT cluster || ' ' || id, held_s, used_s, idle_s, cost_usd, energy_j, energy_unknown FROM seedance_workload`,
		"hold_day": `SELECT cluster || ' ' || CAST(day AS TEXT) || ' ' || workload || ' ' || CAST(provisional AS TEXT), held_s, used_s, idle_s, cost_usd, COALESCE(energy_j, -1), 0 FROM seedance_hold_day`,
		"owner_hold_day": `SELECT h.cluster || ' ' || CAST(h.day AS TEXT) || ' ' || o.kind || ' ' || o.controller || ' ' || o.labels || ' ' || CAST(h.provisional AS TEXT),
	h.held_s, h.used_s, h.idle_s, h.cost_usd, h.energy_j, h.energy_unknown FROM seedance_owner_hold_day h JOIN seedance_owner o ON o.id = h.owner`,
	}
	for name, q := range queries {
		g, w := rollupRows(t, got, q), rollupRows(t, want, q)
		if len(g) != len(w) {
			t.Errorf("%s: %d rows, want %d", name, len(g), len(w))
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok {
				t.Errorf("%s %s: missing", name, k)
				continue
			}
			for i := range wv {
				if math.Abs(gv[i]-wv[i]) > 1e-6*math.Max(1, math.Abs(wv[i])) {
					t.Errorf("%s %s: column %d = %v, want %v", name, k, i+1, gv[i], wv[i])
				}
			}
		}
	}
}

func rollupRows(t testing.TB, l *Ledger, q string) map[string][6]float64 {
	t.Helper()
	rows, err := l.db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string][6]float64{}
	for rows.Next() {
		var k string
		var v [6]float64
		if err := rows.Scan(&k, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]); err != nil {
			t.Fatal(err)
		}
		if _, dup := out[k]; dup {
			t.Fatalf("rollup key %q twice", k)
		}
		out[k] = v
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
