package chargeback

import (
	"bytes"
	"testing"
	"time"
)

// TestFocus12RowsByHand: the FOCUS 1.2 rows of splitDay's n1 model A,
// shared weighted by node and grouped by namespace, cell by cell: the
// sub-account is the cluster and the namespace, the tags a JSON object of
// the row's keys, the description says whether the row bears or gave
// shared cost, and a row that held nothing has no utilization (null).
func TestFocus12RowsByHand(t *testing.T) {
	var lines []Line
	for _, l := range splitDay() {
		if l.Node == "n1" && l.Model == "A" {
			if l.Workload != "" {
				l.GroupLevels = []string{"namespace", "team=team"}
				l.Group = []string{"ns-" + l.Workload, l.Group[0]}
			}
			lines = append(lines, l)
		}
	}
	idle := Line{Period: nov1, Cluster: "c", Node: "n1", Model: "A", Workload: "w9", GroupLevels: []string{"namespace", "team=team"},
		Group: []string{"ns-w9", "ops"}, PriceUSDPerHour: 2} // listed, held nothing
	lines = append(lines, idle)
	SortLines(lines)
	Share(lines, Weighted, ScopeNode)
	var b bytes.Buffer
	f, err := NewFocus(&b, FocusOptions{Version: "1.2", Encoding: "csv", Account: "gpu-platform", From: nov1, To: nov1.Add(24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Write(lines); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	_, all := csvMaps(t, b.Bytes())
	rows := map[string]map[string]string{}
	for _, m := range all {
		rows[m["x_Workload"]] = m
	}
	price := "at 2 USD per GPU-hour"
	want := map[string]map[string]string{
		"w1": {"SubAccountId": "c/ns-w1", "SubAccountName": "ns-w1", "Tags": `{"cluster":"c","namespace":"ns-w1","team":"ml","workload":"w1"}`,
			"ChargeDescription": "GPU time of A on node n1 held by w1, " + price + ", with its share of the time no workload held", "x_UtilizationPct": "50",
			"BilledCost": "26.67", "x_SharedIdleCost": "6.66666667"},
		"w2": {"SubAccountId": "c/ns-w2", "SubAccountName": "ns-w2", "Tags": `{"cluster":"c","namespace":"ns-w2","team":"cv","workload":"w2"}`,
			"ChargeDescription": "GPU time of A on node n1 held by w2, " + price + ", with its share of the time no workload held", "x_UtilizationPct": "50",
			"BilledCost": "13.33", "x_SharedIdleCost": "3.33333333"},
		"w9": {"SubAccountId": "c/ns-w9", "SubAccountName": "ns-w9", "Tags": `{"cluster":"c","namespace":"ns-w9","team":"ops","workload":"w9"}`,
			"ChargeDescription": "GPU time of A on node n1 held by w9, " + price, "x_UtilizationPct": "", "BilledCost": "0.00", "x_SharedIdleCost": "0"},
		"": {"SubAccountId": "c", "SubAccountName": "", "Tags": `{"cluster":"c"}`,
			"ChargeDescription": "GPU time of A on node n1 held by no workload, " + price + ", shared over the teams that held GPUs", "x_UtilizationPct": "50",
			"BilledCost": "0.00", "x_SharedIdleCost": "-10"},
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(rows), len(want))
	}
	for w, cells := range want {
		for name, v := range cells {
			if got := rows[w][name]; got != v {
				t.Errorf("workload %q: %s %q, want %q", w, name, got, v)
			}
		}
	}
}

// TestSameAs: a line's next bucket is the same period, cluster, node,
// model and workload; any one of them different is another line.
func TestSameAs(t *testing.T) {
	a := Line{Period: nov1, Cluster: "c", Node: "n1", Model: "A", Workload: "w"}
	if !a.SameAs(&a) {
		t.Fatal("a line is not the same as itself")
	}
	for _, o := range []Line{{Period: nov1.AddDate(0, 0, 1), Cluster: "c", Node: "n1", Model: "A", Workload: "w"},
		{Period: nov1, Cluster: "d", Node: "n1", Model: "A", Workload: "w"}, {Period: nov1, Cluster: "c", Node: "n2", Model: "A", Workload: "w"},
		{Period: nov1, Cluster: "c", Node: "n1", Model: "B", Workload: "w"}, {Period: nov1, Cluster: "c", Node: "n1", Model: "A", Workload: "v"}} {
		if a.SameAs(&o) {
			t.Errorf("%+v is the same line as %+v", o, a)
		}
	}
}

// TestMerge: a line's next bucket adds every figure to it, keeps the
// higher price, and an hour without intensity makes its emissions
// unknown.
func TestMerge(t *testing.T) {
	a := Line{HeldH: 1, UsedH: 2, IdleH: 3, HeldUSD: 4, UsedUSD: 5, IdleUSD: 6, EnergyKWh: 7, EmissionsKg: 8, PriceUSDPerHour: 2}
	b := Line{HeldH: 10, UsedH: 20, IdleH: 30, HeldUSD: 40, UsedUSD: 50, IdleUSD: 60, EnergyKWh: 70, EmissionsKg: 80, PriceUSDPerHour: 1, EmissionsUnknown: true}
	a.Merge(&b)
	want := Line{HeldH: 11, UsedH: 22, IdleH: 33, HeldUSD: 44, UsedUSD: 55, IdleUSD: 66, EnergyKWh: 77, EmissionsKg: 88, PriceUSDPerHour: 2, EmissionsUnknown: true}
	if a.HeldH != want.HeldH || a.UsedH != want.UsedH || a.IdleH != want.IdleH || a.HeldUSD != want.HeldUSD || a.UsedUSD != want.UsedUSD ||
		a.IdleUSD != want.IdleUSD || a.EnergyKWh != want.EnergyKWh || a.EmissionsKg != want.EmissionsKg || a.PriceUSDPerHour != want.PriceUSDPerHour ||
		a.EmissionsUnknown != want.EmissionsUnknown {
		t.Errorf("merged %+v, want %+v", a, want)
	}
}

// TestPartIsAFraction: an allocated part of a line is the fraction of
// each of its figures, emissions included.
func TestPartIsAFraction(t *testing.T) {
	l := Line{HeldH: 8, UsedH: 4, IdleH: 2, HeldUSD: 16, EnergyKWh: 1.6, EmissionsKg: 0.8, EmissionsUnknown: true}
	p := part(&l, PartHeld, 0.25, []string{"ml"}, []string{"team=team"})
	if p.HeldH != 2 || p.UsedH != 1 || p.IdleH != 0.5 || p.USD != 4 || p.EnergyKWh != 0.4 || p.EmissionsKg != 0.2 || !p.EmissionsUnknown || p.Kind != PartHeld {
		t.Errorf("a quarter of %+v: %+v", l, p)
	}
}
