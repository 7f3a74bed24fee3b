package chargeback

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

var nov1 = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

// splitDay is a day of one cluster worked by hand: node n1 has GPUs of two
// models, A at $2 an hour (w1 of team ml held 10 h, w2 of team cv 5 h,
// nobody 5 h) and B at $1 (w3 of team ml 4 h, nobody 4 h); node n2's A
// GPUs were held by nobody for 6 h: a scope without a holder under
// --share-idle-by node.
func splitDay() []Line {
	l := func(node, model, w, team string, h, price float64) Line {
		var g []string
		if w != "" {
			g = []string{team}
		}
		return Line{Period: nov1, Cluster: "c", Node: node, Model: model, Workload: w, Group: g, GroupLevels: []string{"team=team"},
			HeldH: h, UsedH: h / 2, IdleH: h / 4, HeldUSD: h * price, PriceUSDPerHour: price, EnergyKWh: h / 10}
	}
	lines := []Line{l("n1", "A", "", "", 5, 2), l("n1", "A", "w1", "ml", 10, 2), l("n1", "A", "w2", "cv", 5, 2),
		l("n1", "B", "", "", 4, 1), l("n1", "B", "w3", "ml", 4, 1), l("n2", "A", "", "", 6, 2)}
	SortLines(lines)
	return lines
}

// TestSplitByHand: each origin charge's allocated charges, by hand, under
// each sharing rule; every rule gives a different answer. The parts of an
// origin add up to it (cost, hours) and their ratios to 1.
func TestSplitByHand(t *testing.T) {
	type want struct {
		origin string  // node/model
		kind   string  // held, shared idle, unallocated
		who    string  // workload or team
		usd    float64 // the part's cost; hours are cost ÷ price
	}
	for _, c := range []struct {
		mode  Mode
		scope Scope
		parts []want
	}{
		{None, ScopeCluster, []want{
			{"n1/A", "held", "w1", 20}, {"n1/A", "held", "w2", 10}, {"n1/A", "unallocated", "", 10},
			{"n1/B", "held", "w3", 4}, {"n1/B", "unallocated", "", 4}, {"n2/A", "unallocated", "", 12}}},
		// Node n1's $14 unallocated goes by cost held on n1: ml 24/34, cv
		// 10/34; n2 has no holder and keeps its $12.
		{Weighted, ScopeNode, []want{
			{"n1/A", "held", "w1", 20}, {"n1/A", "held", "w2", 10}, {"n1/A", "shared idle", "cv", 10 * 10.0 / 34}, {"n1/A", "shared idle", "ml", 10 * 24.0 / 34},
			{"n1/B", "held", "w3", 4}, {"n1/B", "shared idle", "cv", 4 * 10.0 / 34}, {"n1/B", "shared idle", "ml", 4 * 24.0 / 34},
			{"n2/A", "unallocated", "", 12}}},
		// Pool A ($10 + $12) goes to its holders w1 and w2, 20:10; pool B's
		// $4 to w3.
		{Weighted, ScopePool, []want{
			{"n1/A", "held", "w1", 20}, {"n1/A", "held", "w2", 10}, {"n1/A", "shared idle", "cv", 10.0 / 3}, {"n1/A", "shared idle", "ml", 20.0 / 3},
			{"n1/B", "held", "w3", 4}, {"n1/B", "shared idle", "ml", 4},
			{"n2/A", "shared idle", "cv", 4}, {"n2/A", "shared idle", "ml", 8}}},
		// Even by cluster: each team bears half of every origin's
		// unallocated cost.
		{Even, ScopeCluster, []want{
			{"n1/A", "held", "w1", 20}, {"n1/A", "held", "w2", 10}, {"n1/A", "shared idle", "cv", 5}, {"n1/A", "shared idle", "ml", 5},
			{"n1/B", "held", "w3", 4}, {"n1/B", "shared idle", "cv", 2}, {"n1/B", "shared idle", "ml", 2},
			{"n2/A", "shared idle", "cv", 6}, {"n2/A", "shared idle", "ml", 6}}},
	} {
		t.Run(fmt.Sprintf("%s by %s", c.mode, c.scope), func(t *testing.T) {
			lines := splitDay()
			Share(lines, c.mode, c.scope)
			var got []want
			var cents Cents
			for _, o := range Split(lines, c.mode, c.scope) {
				price := map[string]float64{"A": 2, "B": 1}[o.Model]
				oc := cents.Next(o.USD)
				o.splitCents(oc)
				ratio, hours, usd := 0.0, 0.0, int64(0)
				for _, p := range o.Parts {
					who := p.Workload
					if p.Kind == PartSharedIdle {
						who = p.Group[0]
					}
					got = append(got, want{o.Node + "/" + o.Model, p.Kind, who, p.USD})
					if math.Abs(p.HeldH*price-p.USD) > 1e-9 || math.Abs(p.Ratio-p.USD/o.USD) > 1e-12 || math.Abs(float64(p.Cents)-p.USD*100) >= 1 {
						t.Errorf("%s/%s %s %s: %v h, ratio %v, %d cents for $%v", o.Node, o.Model, p.Kind, who, p.HeldH, p.Ratio, p.Cents, p.USD)
					}
					ratio, hours, usd = ratio+p.Ratio, hours+p.HeldH, usd+p.Cents
				}
				if ratio != 1 || math.Abs(hours-o.Hours) > 1e-9 || usd != oc || o.PriceUSDPerHour != price {
					t.Errorf("%s/%s: ratios sum to %v, hours %v of %v, %d cents of %d", o.Node, o.Model, ratio, hours, o.Hours, usd, oc)
				}
			}
			order := func(a, b want) int {
				return strings.Compare(a.origin+"\x00"+a.kind+"\x00"+a.who, b.origin+"\x00"+b.kind+"\x00"+b.who)
			}
			slices.SortFunc(got, order)
			slices.SortFunc(c.parts, order)
			if len(got) != len(c.parts) {
				t.Fatalf("%d parts, want %d: %+v", len(got), len(c.parts), got)
			}
			for i, w := range c.parts {
				if g := got[i]; g.origin != w.origin || g.kind != w.kind || g.who != w.who || math.Abs(g.usd-w.usd) > 1e-9 {
					t.Errorf("part %d: %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

// TestSplitCents: an origin's cents go to its parts by largest
// remainder, each within a cent of its cost, summing to the origin's
// cents exactly, also when cumulative rounding gave the origin a cent
// more or less than its own rounding.
func TestSplitCents(t *testing.T) {
	o := Origin{USD: 1, Parts: []Allocated{{USD: 1.0 / 3}, {USD: 1.0 / 3}, {USD: 1.0 / 3}}}
	for _, c := range []struct {
		cents int64
		want  []int64
	}{{100, []int64{34, 33, 33}}, {101, []int64{34, 34, 33}}, {99, []int64{33, 33, 33}}} {
		o.splitCents(c.cents)
		for i, p := range o.Parts {
			if p.Cents != c.want[i] {
				t.Errorf("%d cents: part %d has %d, want %v", c.cents, i, p.Cents, c.want)
			}
		}
	}
	// Remainders of 0.2, 0.5 and 0.3 cent (69.2, 10.5 and 20.3 cents):
	// cents beyond the floors go to the largest remainders first, cents
	// short of them come from the smallest first.
	o = Origin{USD: 1, Parts: []Allocated{{USD: 0.692}, {USD: 0.105}, {USD: 0.203}}}
	for _, c := range []struct {
		cents int64
		want  []int64
	}{{99, []int64{69, 10, 20}}, {100, []int64{69, 11, 20}}, {101, []int64{69, 11, 21}}, {98, []int64{68, 10, 20}}, {97, []int64{68, 10, 19}}} {
		if o.splitCents(c.cents); !slices.Equal([]int64{o.Parts[0].Cents, o.Parts[1].Cents, o.Parts[2].Cents}, c.want) {
			t.Errorf("%d cents over remainders .2, .5, .3: %d, %d, %d; want %v", c.cents, o.Parts[0].Cents, o.Parts[1].Cents, o.Parts[2].Cents, c.want)
		}
	}
	// A cent short comes from the smallest remainder that has a cent to
	// give: 0.2, 50.5 and 49.3 cents, 98 of them: not from the first part,
	// which has none, but from the third.
	o = Origin{USD: 1, Parts: []Allocated{{USD: 0.002}, {USD: 0.505}, {USD: 0.493}}}
	if o.splitCents(98); o.Parts[0].Cents != 0 || o.Parts[1].Cents != 50 || o.Parts[2].Cents != 48 {
		t.Errorf("98 cents over 0.2, 50.5, 49.3: %d, %d, %d; want 0, 50, 48", o.Parts[0].Cents, o.Parts[1].Cents, o.Parts[2].Cents)
	}
	free := Origin{Hours: 4, Parts: []Allocated{{HeldH: 1, Ratio: 0.25}, {HeldH: 3, Ratio: 0.75}}}
	if free.splitCents(0); free.Parts[0].Cents != 0 || free.Parts[1].Cents != 0 {
		t.Errorf("an origin that costs nothing: %+v", free.Parts)
	}
}

// TestMethodIDs: each sharing rule has its own documented method.
func TestMethodIDs(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range []Mode{None, Weighted, Even} {
		for _, s := range []Scope{ScopeNode, ScopePool, ScopeCluster} {
			id := MethodID(m, s)
			if m == None {
				if id != "seedance/gpu-time-held" {
					t.Errorf("none: %s", id)
				}
				continue
			}
			if seen[id] || !strings.HasSuffix(id, string(m)+"-by-"+string(s)) {
				t.Errorf("%s by %s: %s", m, s, id)
			}
			seen[id] = true
		}
	}
}

// TestSplitGroupWithNoShare: weighted by cluster, a group that held only
// free GPUs bears none of the cluster's unallocated cost, so the priced
// origin's unallocated time is one shared part, the other group's, and no
// part of nothing for the group that got no share.
func TestSplitGroupWithNoShare(t *testing.T) {
	l := func(node, model, w, team string, h, price float64) Line {
		var g []string
		if w != "" {
			g = []string{team}
		}
		return Line{Period: nov1, Cluster: "c", Node: node, Model: model, Workload: w, Group: g, GroupLevels: []string{"team=team"}, HeldH: h, HeldUSD: h * price, PriceUSDPerHour: price}
	}
	lines := []Line{l("n1", "P", "", "", 2, 2), l("n1", "P", "w1", "a", 2, 2), l("n2", "F", "w2", "b", 3, 0)}
	Share(lines, Weighted, ScopeCluster)
	origins := Split(lines, Weighted, ScopeCluster)
	if len(origins) != 2 || len(origins[0].Parts) != 2 || len(origins[1].Parts) != 1 {
		t.Fatalf("origins %+v", origins)
	}
	for _, p := range origins[0].Parts {
		if p.Kind != PartHeld && (p.Kind != PartSharedIdle || p.Group[0] != "a" || p.USD != 4 || p.HeldH != 2) {
			t.Errorf("the unallocated time's part: %+v", p)
		}
	}
}

// TestRatiosSumToOne: an origin's ratios sum to exactly 1, the last part
// taking what the others leave, where the quotients alone would not
// ($0.10, $0.10 and $2.30 of $2.50).
func TestRatiosSumToOne(t *testing.T) {
	o := Origin{USD: 0.1 + 0.1 + 2.3, Parts: []Allocated{{USD: 0.1}, {USD: 0.1}, {USD: 2.3}}}
	if q := 0.1/o.USD + 0.1/o.USD + 2.3/o.USD; q == 1 {
		t.Fatalf("the case needs quotients that do not sum to 1: %v", q)
	}
	o.ratios()
	if sum := o.Parts[0].Ratio + o.Parts[1].Ratio + o.Parts[2].Ratio; sum != 1 {
		t.Errorf("ratios %v, %v, %v sum to %v", o.Parts[0].Ratio, o.Parts[1].Ratio, o.Parts[2].Ratio, sum)
	}
}

// TestSplitFreeOrigin: an origin that costs nothing (GPUs priced at 0) is
// split by hours, and its parts get no cents.
func TestSplitFreeOrigin(t *testing.T) {
	lines := []Line{
		{Period: nov1, Cluster: "c", Node: "n", Model: "C", HeldH: 1},
		{Period: nov1, Cluster: "c", Node: "n", Model: "C", Workload: "w", Group: []string{"ml"}, GroupLevels: []string{"namespace"}, HeldH: 3},
	}
	origins := Split(lines, None, ScopeCluster)
	if len(origins) != 1 || len(origins[0].Parts) != 2 {
		t.Fatalf("%+v", origins)
	}
	o := origins[0]
	o.splitCents(0)
	if p := o.Parts; p[0].Kind != PartUnallocated || p[0].Ratio != 0.25 || p[1].Ratio != 0.75 || p[0].Cents != 0 || p[1].Cents != 0 {
		t.Errorf("parts %+v", p)
	}
	if g := groupName([]string{"ml", "vision"}, []string{"namespace", "team=team"}); g != "namespace=ml/team=vision" {
		t.Errorf("group name %s", g)
	}
	if g := groupName([]string{"ml"}, nil); g != "group=ml" {
		t.Errorf("a group without its level: %s", g)
	}
}

// TestShareFreeHolders: holders whose GPUs cost nothing share a scope's
// unallocated cost evenly per workload (weighted by cost, there is no cost
// to weigh).
func TestShareFreeHolders(t *testing.T) {
	lines := []Line{
		{Period: nov1, Cluster: "c", Node: "n1", Model: "F", Workload: "w1", Group: []string{"a"}, HeldH: 2},
		{Period: nov1, Cluster: "c", Node: "n1", Model: "F", Workload: "w2", Group: []string{"b"}, HeldH: 1},
		{Period: nov1, Cluster: "c", Node: "n2", Model: "P", HeldH: 3, HeldUSD: 6, PriceUSDPerHour: 2},
	}
	Share(lines, Weighted, ScopeCluster)
	if lines[0].SharedUSD != 3 || lines[1].SharedUSD != 3 || lines[2].SharedUSD != -6 {
		t.Errorf("shared %v, %v, %v; want 3, 3, -6", lines[0].SharedUSD, lines[1].SharedUSD, lines[2].SharedUSD)
	}
	// A workload listed on a node where it held nothing is no holder: the
	// node's unallocated cost stays unallocated.
	lone := []Line{{Period: nov1, Cluster: "c", Node: "n3", Model: "P", HeldH: 2, HeldUSD: 4, PriceUSDPerHour: 2},
		{Period: nov1, Cluster: "c", Node: "n3", Model: "P", Workload: "w9", Group: []string{"c"}, PriceUSDPerHour: 2}}
	if Share(lone, Weighted, ScopeNode); lone[0].SharedUSD != 0 || lone[1].SharedUSD != 0 {
		t.Errorf("a workload that held nothing: shared %v, %v; want 0, 0", lone[0].SharedUSD, lone[1].SharedUSD)
	}
	// A line that sums two workloads (the ledger's line per owner) is
	// shared as two: evenly per workload, not per line.
	lines[0].Holders = 2
	Share(lines, Weighted, ScopeCluster)
	if lines[0].SharedUSD != 4 || lines[1].SharedUSD != 2 || lines[2].SharedUSD != -6 {
		t.Errorf("a line of two holders: shared %v, %v, %v; want 4, 2, -6", lines[0].SharedUSD, lines[1].SharedUSD, lines[2].SharedUSD)
	}
}
