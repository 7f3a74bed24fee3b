package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/profile"
)

// bucketTables are the tables whose settled rows a bucket's close writes
// once (the daily rollups add each closed bucket to their day).
var bucketTables = []string{"seedance_gpu", "seedance_hold", "seedance_owner_hold", "seedance_work", "seedance_queue"}

// settledRows is every settled row of the hourly tables, as text.
func settledRows(t *testing.T, l *Ledger) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, table := range bucketTables {
		rows, err := l.db.Query(`SELECT * FROM ` + table + ` WHERE provisional = 0`)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			v := make([]any, len(cols))
			p := make([]any, len(cols))
			for i := range v {
				p[i] = &v[i]
			}
			if err := rows.Scan(p...); err != nil {
				t.Fatal(err)
			}
			out[table+fmt.Sprint(v...)] = true
		}
		rows.Close()
	}
	return out
}

// TestFiveMinuteUpdatesSettleOnce (#56): three hours counted by
// five-minute updates. An update writes no settled row of the bucket its
// watermark lies in, changes no settled row written before, and adds
// settled rows only to the buckets it closed; the ledger equals one
// analysis, and so does its settled part over the closed buckets.
func TestFiveMinuteUpdatesSettleOnce(t *testing.T) {
	p := cluster(t)
	want := oneAnalysis(t, p, []string{"namespace"})
	l := ledgers(t, "sqlite")()
	ctx := context.Background()
	from := p.StartedAt.Add(-time.Millisecond)
	closed := 0
	var wm time.Time
	for to := p.StartedAt.Add(5 * time.Minute); from.Before(p.EndedAt); to = to.Add(5 * time.Minute) {
		to = minTime(to, p.EndedAt)
		before := settledRows(t, l)
		up, err := l.Update(ctx, UpdateSpec{Inputs: []*profile.Profile{profile.Join([]*profile.Profile{p}, from, to, false)}, Params: params()})
		if err != nil {
			t.Fatal(err)
		}
		after := settledRows(t, l)
		for r := range before {
			if !after[r] {
				t.Fatalf("update to %s: a settled row was rewritten or dropped: %s", to.Format(time.TimeOnly), r)
			}
		}
		open := up.Watermark.Truncate(time.Hour).Unix()
		var inOpen int
		for _, table := range bucketTables {
			var n int
			if err := l.db.QueryRow(`SELECT COUNT(*) FROM `+table+` WHERE provisional = 0 AND bucket >= $1`, open).Scan(&n); err != nil {
				t.Fatal(err)
			}
			inOpen += n
		}
		if inOpen > 0 {
			t.Fatalf("update to %s: %d settled rows in the open bucket", to.Format(time.TimeOnly), inOpen)
		}
		if c := heldOf(t, l.db, up.Cluster); up.Watermark.After(up.Watermark.Truncate(time.Hour)) && (c == nil || c.Bucket != open || len(c.Cuts.GPUs) == 0) {
			t.Fatalf("update to %s: the open bucket's settled rows are not carried: %+v", to.Format(time.TimeOnly), c)
		}
		if len(after) > len(before) {
			closed++
		}
		from, wm = to, up.Watermark
	}
	var buckets int
	if err := l.db.QueryRow(`SELECT COUNT(DISTINCT bucket) FROM (SELECT bucket FROM seedance_gpu WHERE provisional = 0 UNION SELECT bucket FROM seedance_queue WHERE provisional = 0) x`).Scan(&buckets); err != nil {
		t.Fatal(err)
	}
	if closed != buckets || buckets != 3 {
		t.Errorf("settled rows were added by %d updates, to %d buckets: want 3 of each (one update per bucket closed)", closed, buckets)
	}
	got, err := l.Report(ctx, Query{GroupBy: []string{"namespace"}, EnergyUSDPerKWh: 0.12})
	if err != nil {
		t.Fatal(err)
	}
	sameFigures(t, got, want)
	sameChargeDays(t, l)
	// The settled part: the closed hours, as the whole report of them.
	lo, hi := p.StartedAt.Truncate(time.Hour), wm.Truncate(time.Hour)
	settled, err := l.Report(ctx, Query{Since: lo, Until: hi, GroupBy: []string{"namespace"}, Settled: true})
	if err != nil {
		t.Fatal(err)
	}
	whole, err := l.Report(ctx, Query{Since: lo, Until: hi, GroupBy: []string{"namespace"}})
	if err != nil {
		t.Fatal(err)
	}
	sameReports(t, settled, whole)
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// TestMergeKeepsPricesApart: rows of pieces in one bucket and class are
// summed into one per key; a piece whose node's GPUs were priced otherwise
// stays apart with its holds, so that each hold's charges follow its own
// price.
func TestMergeKeepsPricesApart(t *testing.T) {
	w := &profile.Workload{ID: "ns/a", Labels: map[string]string{"team": "x"}}
	w2 := &profile.Workload{ID: "ns/a", Labels: map[string]string{"team": "y"}} // its labels changed
	nominal := 0.0
	in := &analyze.Cuts{
		GPUs: []analyze.GPUCut{
			{Piece: 0, Node: "n1", Model: "H100", ObservedS: 10, IdleS: 4, UtilS: 2, UtilCoveredS: 10, CostUSD: 1, EnergyJ: 5, PriceUSDPerHour: 2, PriceSource: "user"},
			{Piece: 1, Node: "n1", Model: "H100", ObservedS: 20, IdleS: 6, UtilS: 3, UtilCoveredS: 20, CostUSD: 2, EnergyJ: 7, EnergyMeasured: true, PriceUSDPerHour: 2, PriceSource: "user"},
			{Piece: 2, Node: "n1", Model: "H100", ObservedS: 40, IdleS: 8, UtilS: 4, UtilCoveredS: 40, CostUSD: 3, EnergyJ: 9, PriceUSDPerHour: 3, PriceSource: "user"},
			{Piece: 3, Node: "n1", Model: "H100", ObservedS: 80, PriceUSDPerHour: 2, PriceSource: "user"},
		},
		Holds: []analyze.HoldCut{
			{Piece: 0, Node: "n1", Model: "H100", Workload: w, HeldS: 10, UsedS: 1, IdleS: 4, CostUSD: 1, EnergyJ: 5, HeldUSD: 0.5},
			{Piece: 1, Node: "n1", Model: "H100", Workload: w2, HeldS: 20, UsedS: 2, IdleS: 6, CostUSD: 2, EnergyJ: 7, HeldUSD: 1},
			{Piece: 1, Node: "n1", Model: "H100", HeldS: 1},
			{Piece: 2, Node: "n1", Model: "H100", Workload: w, HeldS: 40, UsedS: 4, IdleS: 8, CostUSD: 3, EnergyJ: 9, HeldUSD: 2},
		},
		Work: []analyze.WorkCut{
			{Piece: 0, Node: "n1", Workload: "ns/a", Unit: "requests", Work: 5, Counted: true, HeldS: 10, EnergyMeasured: true},
			{Piece: 1, Node: "n1", Workload: "ns/a", Unit: "requests", Work: 7, Faulty: true, HeldS: 20, EnergyMeasured: false},
		},
		Queues: []analyze.QueueCut{
			{Piece: 0, Queue: "q", Kind: "kueue", NominalGPUs: &nominal, ReservedS: 3, LargestGPUs: 2},
			{Piece: 1, Queue: "q", ReservedS: 4, PendingS: 1, LargestGPUs: 1},
		},
	}
	// Pieces 0-2 settled in bucket 0, piece 3 provisional in bucket 3600.
	group := func(p int) (int64, bool, bool) {
		if p == 3 {
			return 3600, true, true
		}
		return 0, false, true
	}
	out, groups := merge(in, group, 4)
	if !reflect.DeepEqual(groups, []pieceGroup{{0, false}, {0, false}, {3600, true}}) {
		t.Fatalf("groups %+v", groups)
	}
	wantGPUs := []analyze.GPUCut{
		{Piece: 0, Node: "n1", Model: "H100", ObservedS: 30, IdleS: 10, UtilS: 5, UtilCoveredS: 30, CostUSD: 3, EnergyJ: 12, EnergyMeasured: true, PriceUSDPerHour: 2, PriceSource: "user"},
		{Piece: 1, Node: "n1", Model: "H100", ObservedS: 40, IdleS: 8, UtilS: 4, UtilCoveredS: 40, CostUSD: 3, EnergyJ: 9, PriceUSDPerHour: 3, PriceSource: "user"},
		{Piece: 2, Node: "n1", Model: "H100", ObservedS: 80, PriceUSDPerHour: 2, PriceSource: "user"},
	}
	if !reflect.DeepEqual(out.GPUs, wantGPUs) {
		t.Errorf("GPU rows\n got %+v\nwant %+v", out.GPUs, wantGPUs)
	}
	wantHolds := []analyze.HoldCut{
		{Piece: 0, Node: "n1", Model: "H100", Workload: w2, HeldS: 30, UsedS: 3, IdleS: 10, CostUSD: 3, EnergyJ: 12, HeldUSD: 1.5},
		{Piece: 0, Node: "n1", Model: "H100", HeldS: 1},
		{Piece: 1, Node: "n1", Model: "H100", Workload: w, HeldS: 40, UsedS: 4, IdleS: 8, CostUSD: 3, EnergyJ: 9, HeldUSD: 2},
	}
	if !reflect.DeepEqual(out.Holds, wantHolds) {
		t.Errorf("hold rows\n got %+v\nwant %+v", out.Holds, wantHolds)
	}
	wantWork := []analyze.WorkCut{{Piece: 0, Node: "n1", Workload: "ns/a", Unit: "requests", Work: 12, Counted: true, Faulty: true, HeldS: 30, EnergyMeasured: false}}
	if !reflect.DeepEqual(out.Work, wantWork) {
		t.Errorf("work rows\n got %+v\nwant %+v", out.Work, wantWork)
	}
	if len(out.Queues) != 1 || out.Queues[0].Kind != "kueue" || out.Queues[0].NominalGPUs != &nominal || out.Queues[0].ReservedS != 7 ||
		out.Queues[0].PendingS != 1 || out.Queues[0].LargestGPUs != 2 {
		t.Errorf("queue rows %+v", out.Queues)
	}
}

// TestCarryRoundTrips: the state keeps a carry as it was, but for what no
// write reads of its workloads (their tenure and counters); a nominal quota
// of 0 stays 0, not unknown; a carry that names a piece or workload it
// does not hold is refused with one line.
func TestCarryRoundTrips(t *testing.T) {
	zero := 0.0
	w := &profile.Workload{ID: "ns/a", Name: "a", Kind: profile.KindPod, Queue: "q", Labels: map[string]string{"team": "x"},
		Intervals: []profile.Tenure{{StartS: 0, EndS: 5}}, PIDs: []int{7}}
	c := &carry{Bucket: 3600, Pieces: 2, Cuts: &analyze.Cuts{
		GPUs:  []analyze.GPUCut{{Piece: 1, Node: "n", Model: "H100", ObservedS: 1.5, EnergyMeasured: true, PriceUSDPerHour: 2, PriceSource: "user"}},
		Holds: []analyze.HoldCut{{Piece: 0, Node: "n", Model: "H100", Workload: w, HeldS: 1}, {Piece: 1, Node: "n", Model: "H100", HeldS: 0.5}, {Piece: 1, Node: "n", Model: "H100", Workload: w, UsedS: 2}},
		Work:  []analyze.WorkCut{{Piece: 1, Node: "n", Workload: "ns/a", Unit: "requests", Work: 3, Counted: true}},
		Queues: []analyze.QueueCut{{Piece: 0, Queue: "q", Kind: "kueue", NominalGPUs: &zero, BudgetGPUMinutes: &zero, LendingLimitGPUs: &zero, BudgetUse: &profile.BudgetUse{}},
			{Piece: 1, Queue: "r", BudgetUse: &profile.BudgetUse{UsedGPUMinutes: 5, RunningGPUMinutes: 2}}},
	}}
	b, err := encodeCarry(c)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeCarry(b)
	if err != nil {
		t.Fatal(err)
	}
	kept := &profile.Workload{ID: "ns/a", Name: "a", Kind: profile.KindPod, Queue: "q", Labels: map[string]string{"team": "x"}}
	want := *c.Cuts
	want.Holds = []analyze.HoldCut{{Piece: 0, Node: "n", Model: "H100", Workload: kept, HeldS: 1}, {Piece: 1, Node: "n", Model: "H100", HeldS: 0.5}, {Piece: 1, Node: "n", Model: "H100", Workload: kept, UsedS: 2}}
	if got.Bucket != 3600 || got.Pieces != 2 || !reflect.DeepEqual(*got.Cuts, want) {
		t.Errorf("carried\n got %+v\nwant %+v", *got.Cuts, want)
	}
	if got.Cuts.Queues[0].NominalGPUs == nil || got.Cuts.Queues[1].NominalGPUs != nil || got.Cuts.Queues[0].BudgetGPUMinutes == nil || got.Cuts.Queues[1].BudgetGPUMinutes != nil ||
		got.Cuts.Queues[0].BudgetUse == nil {
		t.Errorf("nominal quotas %v %v", got.Cuts.Queues[0].NominalGPUs, got.Cuts.Queues[1].NominalGPUs)
	}
	if none, err := encodeCarry(nil); none != nil || err != nil {
		t.Errorf("no carry: %v %v", none, err)
	}
	c.Pieces = 1 // piece 1 is not held
	bad, err := encodeCarry(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range [][]byte{bad, []byte("garbage")} {
		if _, err := decodeCarry(b); err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "open bucket's settled rows") {
			t.Errorf("a bad carry: %v", err)
		}
	}
}

// heldOf reads a cluster's carry as the state keeps it.
func heldOf(t *testing.T, db *sql.DB, cluster string) *carry {
	t.Helper()
	var b []byte
	if err := db.QueryRow(`SELECT held FROM seedance_state WHERE cluster = $1`, cluster).Scan(&b); err != nil {
		t.Fatal(err)
	}
	c, err := decodeCarry(b)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestBudgetThroughTheLedger: a queue's GPU-minute budget, what Slurm
// counted against it and its lending limit are kept with its hourly rows,
// carried across five-minute updates, and give the ledger's budget figures
// as one analysis gives them.
func TestBudgetThroughTheLedger(t *testing.T) {
	p := cluster(t)
	if len(p.Queues) == 0 {
		t.Fatal("the cluster has no queues")
	}
	budget, lend := 3000.0, 1.0
	p.Queues[0].BudgetGPUMinutes, p.Queues[0].LendingLimitGPUs = &budget, &lend
	p.Queues[0].BudgetUse = &profile.BudgetUse{UsedGPUMinutes: 1200, RunningGPUMinutes: 600}
	name := p.Queues[0].Name
	// The last queue as Kueue's metrics alone give it: what its workloads
	// held and used unknown, in every settled and carried hour.
	last := &p.Queues[len(p.Queues)-1]
	last.WorkloadsUnknown = true
	unknownName := last.Name
	// One queue's waits held by its workloads' own limits, in every hour.
	heldName := ""
	for i := range p.Queues {
		if q := &p.Queues[i]; heldName == "" && len(q.Pending) > 0 && q.Name != unknownName {
			heldName = q.Name
			for k := range q.Pending {
				q.Pending[k].HeldBy = "QOSMaxGRESPerUser"
			}
		}
	}
	ps := params()
	qp := analyze.DefaultQueueParams()
	qp.SamplingS = 3600
	ps.Queues = &qp
	src, err := asSources([]*profile.Profile{p})
	if err != nil {
		t.Fatal(err)
	}
	want, err := analyze.Analyze(context.Background(), src, ps)
	if err != nil {
		t.Fatal(err)
	}
	l := ledgers(t, "sqlite")()
	from := p.StartedAt.Add(-time.Millisecond)
	for to := p.StartedAt.Add(5 * time.Minute); from.Before(p.EndedAt); to = to.Add(5 * time.Minute) {
		to = minTime(to, p.EndedAt)
		if _, err := l.Update(context.Background(), UpdateSpec{Inputs: []*profile.Profile{profile.Join([]*profile.Profile{p}, from, to, false)}, Params: params()}); err != nil {
			t.Fatal(err)
		}
		from = to
	}
	got, err := l.Report(context.Background(), Query{GroupBy: []string{"namespace"}, Queues: &qp})
	if err != nil {
		t.Fatal(err)
	}
	g, w := got.Queues[name], want.Queues[name]
	near := func(a, b *float64) bool {
		return a != nil && b != nil && math.Abs(*a-*b) <= 1e-6*math.Max(1, math.Abs(*b))
	}
	if !near(g.BudgetGPUHours, w.BudgetGPUHours) || *w.BudgetGPUHours != 50 || !near(g.BudgetReservedPct, w.BudgetReservedPct) || !near(g.BudgetIdlePct, w.BudgetIdlePct) ||
		!nearOrNull(g.LentGPUHours, w.LentGPUHours) || !near(g.BudgetUsedPct, w.BudgetUsedPct) || *w.BudgetUsedPct != 40 ||
		!near(g.BudgetLeftGPUHours, w.BudgetLeftGPUHours) || *w.BudgetLeftGPUHours != 20 {
		t.Errorf("queue %s: ledger %v %v %v %v %v, analysis %v %v %v %v %v", name, g.BudgetGPUHours, g.BudgetReservedPct, g.BudgetIdlePct, g.BudgetUsedPct, g.BudgetLeftGPUHours,
			w.BudgetGPUHours, w.BudgetReservedPct, w.BudgetIdlePct, w.BudgetUsedPct, w.BudgetLeftGPUHours)
	}
	var unbudgeted int // hourly rows of the queue without it: written from a carry that lost it
	if err := l.db.QueryRow(`SELECT COUNT(*) FROM seedance_queue WHERE queue = $1 AND (budget_gpu_minutes IS NULL OR lending_limit_gpus IS NULL OR budget_used_gpu_minutes IS NULL)`, name).Scan(&unbudgeted); err != nil || unbudgeted > 0 {
		t.Errorf("%d rows of queue %s without its budget (%v)", unbudgeted, name, err)
	}
	if u, w := got.Queues[unknownName], want.Queues[unknownName]; unknownName == name || u.AllocatedGPUHours != nil || u.UsedGPUHours != nil || u.IdleHeldUSD != nil ||
		w.AllocatedGPUHours != nil || u.Efficiency != nil || !nearOrNull(u.ReservedGPUHours, w.ReservedGPUHours) || math.Abs(u.PendingGPUHours-w.PendingGPUHours) > 1e-6 {
		t.Errorf("queue %s, workloads unknown: ledger %+v, analysis %+v", unknownName, u, w)
	}
	if h, w := got.Queues[heldName], want.Queues[heldName]; heldName == "" || w.HeldPendingGPUHours <= 0 || math.Abs(h.HeldPendingGPUHours-w.HeldPendingGPUHours) > 1e-6 ||
		math.Abs(w.HeldPendingGPUHours-w.PendingGPUHours) > 1e-6 || h.Hoarding != w.Hoarding {
		t.Errorf("queue %q, waits held: ledger %v of %v GPU-h held, analysis %v of %v", heldName, h.HeldPendingGPUHours, h.PendingGPUHours, w.HeldPendingGPUHours, w.PendingGPUHours)
	}
	for q, f := range got.Queues {
		if q != name && (f.BudgetGPUHours != nil || f.BudgetUsedPct != nil) {
			t.Errorf("queue %s has a budget: %v", q, *f.BudgetGPUHours)
		}
	}
}

func nearOrNull(a, b *float64) bool {
	return a == nil && b == nil || a != nil && b != nil && math.Abs(*a-*b) <= 1e-6*math.Max(1, math.Abs(*b))
}
