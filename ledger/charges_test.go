package ledger

import (
	"context"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/chargeback"
	"github.com/seedance/seedance/pricing"
	"github.com/seedance/seedance/profile"
)

// chargeProfile is an hour of two nodes of two GPUs at $2 an hour
// (docs/chargeback.md, the worked example): on node a, two H100s, team
// x's pod holds GPU 0 at 50 % and GPU 1 is held by no workload; on node b,
// two A100s, team y's pod holds GPU 0 at 100 % and team x's second pod
// GPU 1 at 0 %.
func chargeProfile() *profile.Profile {
	t0 := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	n := 3600 / 30
	series := func(util float64) profile.Series {
		s := profile.Series{T: make(profile.Values, n), GPUUtilPct: make(profile.Values, n)}
		for i := range n {
			s.T[i], s.GPUUtilPct[i] = float64(30*i), util
		}
		return s
	}
	gpus := func(node, model string, u0, u1 float64) []profile.GPU {
		return []profile.GPU{{Index: 0, UUID: node + "-0", Model: model, Series: series(u0)}, {Index: 1, UUID: node + "-1", Model: model, Series: series(u1)}}
	}
	pod := func(id, ns string, gpu int) profile.Workload {
		return profile.Workload{ID: ns + "/" + id, Kind: profile.KindPod, GPUs: []int{gpu}, Labels: map[string]string{"namespace": ns}}
	}
	return &profile.Profile{SchemaVersion: profile.SchemaVersion, StartedAt: t0, EndedAt: t0.Add(time.Hour), IntervalS: 30, Complete: true,
		Nodes: []profile.Node{
			{Name: "a", GPUs: gpus("a", "NVIDIA H100 80GB HBM3", 50, 0), Workloads: []profile.Workload{pod("p1", "x", 0)}},
			{Name: "b", GPUs: gpus("b", "NVIDIA A100-SXM4-80GB", 100, 0), Workloads: []profile.Workload{pod("p2", "y", 0), pod("p3", "x", 1)}},
		}}
}

// TestChargebackByHand: every sharing mode and scope on chargeProfile,
// against the hand computation of docs/chargeback.md. The bill is 4 GPU-h
// × $2 = $8.00; x reserved $4.00 (used $1.00), y $2.00 (used $2.00), and
// $2.00 was held by no workload, on node a.
func TestChargeback(t *testing.T) {
	l := openDSN(t, t.TempDir()+"/l.db")
	ctx := context.Background()
	p := params()
	p.Pricer = pricing.New(map[string]float64{"H100": 2, "A100": 2}, 2)
	if _, err := l.Update(ctx, UpdateSpec{Inputs: []*profile.Profile{chargeProfile()}, Params: p}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		mode          chargeback.Mode
		scope         chargeback.Scope
		x, y, unalloc float64
	}{
		{chargeback.None, chargeback.ScopeNode, 4, 2, 2},
		{chargeback.Weighted, chargeback.ScopeNode, 6, 2, 0},          // node a's $2 to x, its only holder
		{chargeback.Even, chargeback.ScopeNode, 6, 2, 0},              // the same: one group on node a
		{chargeback.Even, chargeback.ScopePool, 6, 2, 0},              // the H100 pool's $2: x alone holds H100s
		{chargeback.Weighted, chargeback.ScopeCluster, 5.33, 2.67, 0}, // $2 × 4/6 and × 2/6
		{chargeback.Even, chargeback.ScopeCluster, 5, 3, 0},           // $1 each
	} {
		r, err := l.Report(ctx, Query{GroupBy: []string{"namespace"}, ShareIdle: c.mode, ShareIdleBy: c.scope})
		if err != nil {
			t.Fatal(err)
		}
		cb := r.Chargeback
		if len(cb.Rows) != 2 || cb.Rows[0].Key[0] != "x" || cb.Rows[1].Key[0] != "y" {
			t.Fatalf("%s/%s: rows %+v", c.mode, c.scope, cb.Rows)
		}
		x, y := cb.Rows[0], cb.Rows[1]
		if x.CostUSD != c.x || y.CostUSD != c.y || cb.Unallocated.CostUSD != c.unalloc || cb.Total.CostUSD != 8 {
			t.Errorf("%s/%s: x %v, y %v, unallocated %v, total %v; want %v, %v, %v, 8", c.mode, c.scope, x.CostUSD, y.CostUSD, cb.Unallocated.CostUSD, cb.Total.CostUSD, c.x, c.y, c.unalloc)
		}
		if x.ReservedCostUSD != 4 || x.UsedCostUSD != 1 || x.UnusedReservedCostUSD != 3 || x.ReservedGPUHours != 2 || x.UsedGPUHours != 0.5 ||
			y.ReservedCostUSD != 2 || y.UsedCostUSD != 2 || y.UnusedReservedCostUSD != 0 {
			t.Errorf("%s/%s: reserved vs used: x %+v, y %+v", c.mode, c.scope, x, y)
		}
		if math.Abs(x.CostUSD+y.CostUSD+cb.Unallocated.CostUSD-cb.Total.CostUSD) > 1e-9 {
			t.Errorf("%s/%s: rows sum to %v, total %v", c.mode, c.scope, x.CostUSD+y.CostUSD+cb.Unallocated.CostUSD, cb.Total.CostUSD)
		}
	}
}

// TestChargesAddUp: on a simulated cluster whose workloads come and go, for
// every sharing mode and scope and every grouping, the rows' charges,
// unallocated included, sum to the GPUs' cost to the cent, and each row
// reserved at least what it used.
func TestChargesAddUp(t *testing.T) {
	l := openDSN(t, t.TempDir()+"/l.db")
	ctx := context.Background()
	if _, err := l.Update(ctx, UpdateSpec{Inputs: []*profile.Profile{cluster(t)}, Params: params()}); err != nil {
		t.Fatal(err)
	}
	bill := 0.0
	for _, by := range [][]string{{"namespace"}, {"workload"}, {"cluster", "namespace"}, {"controller"}} {
		for _, mode := range []chargeback.Mode{chargeback.None, chargeback.Weighted, chargeback.Even} {
			for _, scope := range []chargeback.Scope{chargeback.ScopeNode, chargeback.ScopePool, chargeback.ScopeCluster} {
				r, err := l.Report(ctx, Query{GroupBy: by, ShareIdle: mode, ShareIdleBy: scope})
				if err != nil {
					t.Fatal(err)
				}
				cb := r.Chargeback
				var cents int64
				for _, row := range append(cb.Rows, cb.Unallocated) {
					cents += int64(math.Round(row.CostUSD * 100))
					if row.UsedGPUHours > row.ReservedGPUHours*(1+1e-9) || row.UsedCostUSD > row.ReservedCostUSD+0.01 {
						t.Errorf("%v %s/%s: %v used more than it reserved: %+v", by, mode, scope, row.Key, row)
					}
				}
				if bill == 0 {
					bill = cb.Total.ReservedCostUSD
				}
				if cents != int64(math.Round(cb.Total.CostUSD*100)) || cb.Total.CostUSD != bill || bill == 0 {
					t.Errorf("%v %s/%s: rows sum to %d cents, total %v, the GPUs' cost %v", by, mode, scope, cents, cb.Total.CostUSD, bill)
				}
				if mode != chargeback.None && cb.Unallocated.CostUSD >= bill/10 && scope == chargeback.ScopeCluster {
					t.Errorf("%v %s/%s: %v left unallocated of %v", by, mode, scope, cb.Unallocated.CostUSD, bill)
				}
			}
		}
	}
}

// TestEmissionsByHand: jobsProfile's GPUs draw 100 W and 200 W for three
// hours (09:00–12:00) under a grid of 100, 200 and 300 gCO2e/kWh: GPU 0
// emits 0.1 kWh × (100 + 200 + 300) g = 0.06 kg, GPU 1 0.12 kg. Account a's
// jobs held GPU 0 for 09:00–09:30 and 10:00–10:30: 0.05 kWh × 100 g + 0.05
// kWh × 200 g = 0.015 kg; what no workload held of it, the idle energy,
// 0.045 kg. An hour missing from the grid makes the figures over it null.
func TestEmissionsByHand(t *testing.T) {
	l := openDSN(t, t.TempDir()+"/l.db")
	ctx := context.Background()
	if _, err := l.Update(ctx, UpdateSpec{Inputs: []*profile.Profile{jobsProfile()}, Params: params()}); err != nil {
		t.Fatal(err)
	}
	grid := "datetime,zone,gco2e_per_kwh\n2026-01-05T09:00:00Z,default,100\n2026-01-05T10:00:00Z,default,200\n"
	for _, full := range []bool{true, false} {
		doc := grid
		if full {
			doc += "2026-01-05T11:00:00Z,default,300\n"
		}
		in, err := chargeback.ReadIntensity(strings.NewReader(doc), "grid.csv")
		if err != nil {
			t.Fatal(err)
		}
		r, err := l.Report(ctx, Query{GroupBy: []string{"account"}, Carbon: in})
		if err != nil {
			t.Fatal(err)
		}
		cb := r.Chargeback
		var a *chargeback.Row
		for i := range cb.Rows {
			if cb.Rows[i].Key[0] == "a" {
				a = &cb.Rows[i]
			}
		}
		if a == nil || a.EmissionsKgCO2e == nil || math.Abs(*a.EmissionsKgCO2e-0.015) > 1e-9 {
			t.Fatalf("full grid %v: account a %+v", full, a)
		}
		switch got := cb.Total.EmissionsKgCO2e; {
		case full && (got == nil || math.Abs(*got-0.18) > 1e-9 || cb.Unallocated.EmissionsKgCO2e == nil || math.Abs(*cb.Unallocated.EmissionsKgCO2e-0.045) > 1e-9):
			t.Errorf("total %v, unallocated %v; want 0.18 and 0.045", got, cb.Unallocated.EmissionsKgCO2e)
		case !full && (got != nil || cb.Unallocated.EmissionsKgCO2e != nil):
			t.Errorf("an hour without intensity: total %v, unallocated %v; want null", *got, cb.Unallocated.EmissionsKgCO2e)
		}
	}
}

// sameChargeDays checks that the per-day charges rollup equals its settled
// hourly rows (hold rows at their GPUs' prices) row for row: every write,
// the provisional rows' replacement and a backfill's recount keep it; and
// that no daily rollup holds a provisional row (migration12).
func sameChargeDays(t testing.TB, l *Ledger) {
	t.Helper()
	read := func(q string) map[string][]float64 {
		out := map[string][]float64{}
		rows, err := l.db.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var c, n, m, w string
			var d, p int64
			v := make([]float64, 8)
			if err := rows.Scan(&c, &d, &n, &m, &w, &p, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]); err != nil {
				t.Fatal(err)
			}
			out[strings.Join([]string{c, n, m, w}, "/")+time.Unix(d, 0).UTC().Format(" 2006-01-02")+map[int64]string{0: "", 1: " provisional"}[p]] = v
		}
		return out
	}
	rollup := read(`SELECT cluster, day, node, model, workload, provisional, held_s, used_s, idle_s, held_usd, used_usd, cost_usd, energy_j, price_usd_per_hour FROM seedance_charge_day`)
	hourly := read(`SELECT cluster, d, node, model, workload, provisional, SUM(a), SUM(b), SUM(c), SUM(e), SUM(f), SUM(k), SUM(m), MAX(p) FROM (SELECT h.cluster, h.bucket - h.bucket % 86400 AS d, h.node, h.model, h.workload, h.provisional,
	h.held_s AS a, h.used_s AS b, h.idle_s AS c, h.held_s * g.price_usd_per_hour / 3600 AS e, h.used_s * g.price_usd_per_hour / 3600 AS f, h.cost_usd AS k, COALESCE(h.energy_j, 0) AS m, g.price_usd_per_hour AS p
	FROM seedance_hold h JOIN seedance_gpu g ON g.cluster = h.cluster AND g.bucket = h.bucket AND g.node = h.node AND g.model = h.model AND g.provisional = h.provisional
	WHERE h.provisional = 0) x
	GROUP BY cluster, d, node, model, workload, provisional`)
	if len(hourly) == 0 && len(rollup) > 0 {
		t.Fatal("no settled hold rows, but rollup rows")
	}
	for _, table := range []string{"seedance_gpu_day", "seedance_hold_day", "seedance_owner_hold_day", "seedance_charge_day", "seedance_work_day"} {
		var n int
		if err := l.db.QueryRow(`SELECT COUNT(*) FROM ` + table + ` WHERE provisional = 1`).Scan(&n); err != nil || n > 0 {
			t.Errorf("%s: %d provisional rows (%v); the daily rollups hold settled rows only", table, n, err)
		}
	}
	for k, want := range hourly {
		got, ok := rollup[k]
		for i := 0; ok && i < len(want); i++ {
			ok = math.Abs(got[i]-want[i]) <= 1e-6*math.Max(1, math.Abs(want[i]))
		}
		if !ok {
			t.Errorf("charges of %s: rollup %v, hourly rows %v", k, got, want)
		}
	}
	for k, got := range rollup {
		if _, ok := hourly[k]; !ok && math.Abs(got[0])+math.Abs(got[3]) > 1e-6 {
			t.Errorf("charges of %s: rollup %v, no hourly rows", k, got)
		}
	}
	// Provisional rows lie from the watermark's bucket on only: an update
	// deletes them from there (dropProvisional).
	for _, tc := range provisionalTables {
		wm := `(s.watermark_ms / 1000 - (s.watermark_ms / 1000) % s.bucket_s)`
		var early int
		err := l.db.QueryRow(`SELECT COUNT(*) FROM ` + tc.table + ` x JOIN seedance_state s ON s.cluster = x.cluster WHERE x.provisional = 1 AND x.` + tc.col + ` < ` + wm).Scan(&early)
		if err != nil || early > 0 {
			t.Errorf("%s: %d provisional rows before the watermark's %s (%v)", tc.table, early, tc.col, err)
		}
	}
	// Each row carries its workload's owner, as the workload's row has it
	// now (moved with it), 0 for what no workload held.
	var wrong int
	if err := l.db.QueryRow(`SELECT COUNT(*) FROM seedance_charge_day c WHERE c.owner <> ` + workloadOwner("c")).Scan(&wrong); err != nil || wrong > 0 {
		t.Errorf("%d rows of the charges' rollup have another owner than their workload's (%v)", wrong, err)
	}
}

// TestLedgerRefusesAPlantedLink: a ledger path that is a symbolic link to
// nothing is refused by a writer, which would create the link's target;
// a link to an existing ledger is followed.
func TestLedgerRefusesAPlantedLink(t *testing.T) {
	dir := t.TempDir()
	target, link := dir+"/planted.db", dir+"/ledger.db"
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), link, Options{}); err == nil || !strings.Contains(err.Error(), "symbolic link to nothing") {
		t.Fatalf("a dangling link: %v", err)
	}
	if _, err := os.Stat(target); err == nil {
		t.Fatal("the link's target was created")
	}
	ledgerPath := dir + "/real.db"
	openDSN(t, ledgerPath).Close()
	good := dir + "/good.db"
	if err := os.Symlink(ledgerPath, good); err != nil {
		t.Fatal(err)
	}
	l, err := Open(context.Background(), good, Options{})
	if err != nil {
		t.Fatalf("a link to a ledger: %v", err)
	}
	l.Close()
}
