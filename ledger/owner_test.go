package ledger

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/chargeback"
	"github.com/seedance/seedance/profile"

	"github.com/seedance/seedance/internal/testkit/jsonnear"
)

// TestOwnerRowsEqualWorkloadRows: a report grouped by owner's keys (read
// from the per-owner rollups) equals the same report grouped per workload
// and summed, in every window: the whole ledger, each hour, settled rows
// only. The cluster has workloads absent for whole buckets (gappy: a
// window in the hole must not count them) and one whose team label
// changes half-way (its history moves to its new owner).
func TestOwnerRowsEqualWorkloadRows(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			p := cluster(t)
			span := p.EndedAt.Sub(p.StartedAt).Seconds()
			var busy []*profile.Node
			for ni := range p.Nodes {
				if len(p.Nodes[ni].Workloads) > 0 {
					busy = append(busy, &p.Nodes[ni])
				}
			}
			for i := 0; i+1 < len(busy); i += 2 {
				// Absent for the second hour, and alike in every key to a
				// workload that is not (one owner, two workloads).
				w, like := &busy[i].Workloads[0], busy[i+1].Workloads[0]
				w.Intervals = []profile.Tenure{{StartS: 500, EndS: 1500.5}, {StartS: 9500, EndS: span}}
				w.Name, w.Kind, w.Labels = like.Name, like.Kind, maps.Clone(like.Labels)
			}
			l := relabelled(t, ledgers(t, backend)(), p)
			windows := []Query{{}, {Settled: true}}
			for h := range 3 {
				since := p.StartedAt.Truncate(time.Hour).Add(time.Duration(h) * time.Hour)
				windows = append(windows, Query{Since: since, Until: since.Add(time.Hour)})
			}
			var counted []int
			for _, w := range windows {
				n := 0
				for _, level := range []string{"namespace", "controller", "team=team"} {
					n += sameAsPerWorkload(t, l, w, level)
				}
				counted = append(counted, n)
			}
			// The second hour lies in the gappy workloads' hole.
			if counted[3] >= counted[0] || counted[3] == 0 {
				t.Errorf("workloads counted by window: %v", counted)
			}
			// Whole UTC days read the charges per owner; the lines per
			// workload must give every group the same charge. The
			// ledger's data begins at 09:00: a window from midnight is cut
			// to it, so the day is also read from a ledger of the same
			// cluster moved to begin at midnight.
			sameDays(t, l, p)
			midnight := cluster(t)
			shift := midnight.StartedAt.Sub(midnight.StartedAt.Truncate(24 * time.Hour))
			midnight.StartedAt, midnight.EndedAt = midnight.StartedAt.Add(-shift), midnight.EndedAt.Add(-shift)
			if !sameDays(t, relabelled(t, ledgers(t, backend)(), midnight), midnight) {
				t.Error("a day from midnight was not read per owner")
			}
		})
	}
}

// relabelled counts p into l in nine random pieces, one workload's team
// label changed from the fifth on (its history moves to its new owner),
// and checks the per-day charges against the hourly rows.
func relabelled(t *testing.T, l *Ledger, p *profile.Profile) *Ledger {
	t.Helper()
	parts := pieces(p, rand.New(rand.NewPCG(11, 3)), 9)
	for i, part := range parts {
		if ws := part.Nodes[1].Workloads; i >= len(parts)/2 && len(ws) > 0 {
			w := &ws[0]
			w.Labels = maps.Clone(w.Labels)
			w.Labels["team"] = "relabelled"
		}
		if _, err := l.Update(context.Background(), UpdateSpec{Inputs: []*profile.Profile{part}, Params: params()}); err != nil {
			t.Fatal(err)
		}
	}
	sameChargeDays(t, l)
	return l
}

// sameDays compares the charges of each UTC day of p's span, per owner
// and per workload, settled or not, under every sharing rule and three
// groupings. It says whether any was read per owner.
func sameDays(t *testing.T, l *Ledger, p *profile.Profile) (perOwner bool) {
	t.Helper()
	for d := p.StartedAt.Truncate(24 * time.Hour); d.Before(p.EndedAt); d = d.Add(24 * time.Hour) {
		for _, settled := range []bool{false, true} {
			for _, rule := range []struct {
				mode  chargeback.Mode
				scope chargeback.Scope
			}{{chargeback.None, ""}, {chargeback.Weighted, chargeback.ScopeNode}, {chargeback.Weighted, chargeback.ScopePool}, {chargeback.Even, chargeback.ScopeCluster}} {
				for _, by := range [][]string{{"team=team"}, {"cluster", "namespace"}, {"controller"}} {
					q := Query{Since: d, Until: d.Add(24 * time.Hour), Settled: settled, GroupBy: by, ShareIdle: rule.mode, ShareIdleBy: rule.scope}
					perOwner = sameChargesPerWorkload(t, l, q) || perOwner
				}
			}
		}
	}
	return perOwner
}

// sameChargesPerWorkload compares a report's charges (its whole days read
// per owner) with the same charges summed from the lines per workload
// that the FOCUS export reads, row by row, and the holders the lines per
// owner count with the lines per workload that held. It says whether the
// lines were read per owner (a whole day: Holders counted).
func sameChargesPerWorkload(t *testing.T, l *Ledger, q Query) bool {
	t.Helper()
	r, err := l.Report(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	sum := chargeback.NewSummer()
	lines := 0
	if _, err := l.Charges(context.Background(), q, func(Window) error { return nil }, func(day []chargeback.Line) error {
		sum.Add(day)
		lines += len(day)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("%v by %v, %s by %s, settled %v", q.Since.Format(time.DateOnly), q.GroupBy, q.ShareIdle, q.ShareIdleBy, q.Settled)
	if lines == 0 || r.Chargeback == nil || len(r.Chargeback.Rows) == 0 {
		t.Fatalf("%s: %d lines, charges %+v", name, lines, r.Chargeback)
	}
	jsonnear.Equal(t, name, asMap(t, r.Chargeback), asMap(t, sum.Report(q.ShareIdle, q.ShareIdleBy, q.GroupBy, false)))
	holders, perOwner := ownerHolders(t, l, q)
	if holders != lines-perOwner.unallocated {
		t.Errorf("%s: the lines per owner count %d holders in %d lines; the lines per workload are %d, %d of them unallocated",
			name, holders, perOwner.lines, lines, perOwner.unallocated)
	}
	return perOwner.counted
}

// ownerHolders reads q's lines per owner as a report does and sums their
// holders (Line.Holders, one for a line per workload), counting the lines,
// the unallocated ones, and those that counted their holders.
func ownerHolders(t *testing.T, l *Ledger, q Query) (int, struct {
	lines, unallocated int
	counted            bool
}) {
	t.Helper()
	ctx := context.Background()
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	v, err := l.view(ctx, tx, nil)
	if err != nil {
		t.Fatal(err)
	}
	sp := v.span(q.Since, q.Until)
	if q.Settled {
		sp.maxProv = 0
	}
	var holders int
	var n struct {
		lines, unallocated int
		counted            bool
	}
	if _, err := l.chargeLines(ctx, tx, sp, q, true, func(day []chargeback.Line) error {
		for _, c := range day {
			n.lines++
			n.counted = n.counted || c.Holders > 0
			if c.Unallocated() {
				n.unallocated++
			} else if c.HeldH > 0 {
				holders += max(c.Holders, 1)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return holders, n
}

// sameAsPerWorkload compares the report of q by level with the report by
// level and workload, summed by level.
func sameAsPerWorkload(t *testing.T, l *Ledger, q Query, level string) (workloads int) {
	t.Helper()
	q.GroupBy = []string{level}
	byOwner, err := l.Report(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	q.GroupBy = []string{level, "workload"}
	byWorkload, err := l.Report(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	summed := map[string]*analyze.AttributionGroup{}
	for _, g := range byWorkload.Attribution.Groups {
		s := summed[g.Key[0]]
		if s == nil {
			s = &analyze.AttributionGroup{Key: g.Key[:1]}
			summed[g.Key[0]] = s
		}
		s.Workloads += g.Workloads
		workloads += g.Workloads
		s.HeldGPUHours += g.HeldGPUHours
		s.UsedGPUHours += g.UsedGPUHours
		s.IdleHeldGPUHours += g.IdleHeldGPUHours
		s.WasteCostUSD += g.WasteCostUSD
	}
	name := level + " " + q.Since.Format(time.TimeOnly)
	if len(byOwner.Attribution.Groups) != len(summed) {
		t.Fatalf("%s: %d groups by owner, %d by workload", name, len(byOwner.Attribution.Groups), len(summed))
	}
	for _, g := range byOwner.Attribution.Groups {
		s := summed[g.Key[0]]
		if s == nil || g.Workloads != s.Workloads || !closeTo(g.HeldGPUHours, s.HeldGPUHours) || !closeTo(g.UsedGPUHours, s.UsedGPUHours) ||
			!closeTo(g.IdleHeldGPUHours, s.IdleHeldGPUHours) || !closeTo(g.WasteCostUSD, s.WasteCostUSD) {
			t.Errorf("%s: group %v by owner %+v, by workload %+v", name, g.Key, g, s)
		}
	}
	jsonnear.Equal(t, name+" unallocated", asMap(t, byOwner.Attribution.Unallocated), asMap(t, byWorkload.Attribution.Unallocated))
	jsonnear.Equal(t, name+" classes", asMap(t, byOwner.Jobs)["classes"], asMap(t, byWorkload.Jobs)["classes"])
	jsonnear.Equal(t, name+" energy per job", asMap(t, byOwner.Jobs)["energy_per_job_kwh"], asMap(t, byWorkload.Jobs)["energy_per_job_kwh"])
	return workloads
}

func closeTo(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(1, math.Abs(b)) }

// TestDailyWasteSumsToAttribution: a window across midnight UTC splits
// each group's waste between its two days, and a group's days add up to
// its waste in the attribution; grouping by workload has no daily waste.
func TestDailyWasteSumsToAttribution(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			p := cluster(t)
			shift := p.StartedAt.Truncate(24 * time.Hour).Add(23 * time.Hour).Sub(p.StartedAt) // from 23:00
			p.StartedAt, p.EndedAt = p.StartedAt.Add(shift), p.EndedAt.Add(shift)
			l := ledgers(t, backend)()
			if _, err := l.Update(context.Background(), UpdateSpec{Inputs: []*profile.Profile{p}, Params: params()}); err != nil {
				t.Fatal(err)
			}
			r, err := l.Report(context.Background(), Query{GroupBy: []string{"namespace", "team=team"}})
			if err != nil {
				t.Fatal(err)
			}
			days, sums := map[string]float64{}, map[string]float64{}
			for _, d := range r.DailyWaste {
				days[d.Date] += d.WasteCostUSD
				sums[strings.Join(d.Key, "/")] += d.WasteCostUSD
			}
			first, second := p.StartedAt.Format(time.DateOnly), p.EndedAt.Format(time.DateOnly)
			if len(days) != 2 || days[first] <= 0 || days[second] <= days[first] {
				t.Fatalf("waste by day %v, want some on %s and more on %s (1 h and 2 h)", days, first, second)
			}
			for _, g := range r.Attribution.Groups {
				k := strings.Join(g.Key, "/")
				if math.Abs(sums[k]-g.WasteCostUSD) > 1e-6*math.Max(1, g.WasteCostUSD) {
					t.Errorf("%s: days add up to %v, attribution says %v", k, sums[k], g.WasteCostUSD)
				}
				delete(sums, k)
			}
			if len(sums) != 0 {
				t.Errorf("daily waste of groups the attribution lacks: %v", sums)
			}
			w, err := l.Report(context.Background(), Query{GroupBy: []string{"workload"}})
			if err != nil || w.DailyWaste != nil {
				t.Fatalf("grouped by workload: daily waste %v, %v", w.DailyWaste, err)
			}
		})
	}
}
