package chargeback

import (
	"strings"
	"testing"
	"time"
)

// TestBudgetForecast: the month's run rate carried to its end, by hand.
// November has 720 hours; a ledger that began on the 11th (since) holds
// $500 of charges through the 16th 00:00 (120 hours): $500 + $500 ÷ 120 h ×
// 360 h left = $2,000, 80 % of $2,500. No time counted: no forecast, and a
// null fails every threshold.
func TestBudgetForecast(t *testing.T) {
	nov := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	b := Budget{By: "namespace", Key: "ml", Monthly: 2500}
	s := NewStatus(b, nov, nov.AddDate(0, 0, 10), nov.AddDate(0, 0, 15), 500)
	if s.ForecastUSD == nil || *s.ForecastUSD != 2000 || *s.ForecastPct != 80 || s.ActualPct != 20 || s.Month != "2026-11" {
		t.Fatalf("status %+v, forecast %v", s, s.ForecastUSD)
	}
	if over, why := s.Crossed(80, false); !over || !strings.Contains(why, "forecast 2000.00 USD") {
		t.Errorf("80 %% on the forecast: %v %s", over, why)
	}
	if over, _ := s.Crossed(81, false); over {
		t.Error("81 % on an 80 % forecast crossed")
	}
	if over, _ := s.Crossed(20, true); !over {
		t.Error("20 % on a 20 % actual did not cross")
	}
	none := NewStatus(b, nov, nov, nov, 0)
	if over, why := none.Crossed(1e6, false); none.ForecastUSD != nil || !over || !strings.Contains(why, "no forecast") {
		t.Errorf("a null forecast: %v %q", over, why)
	}
}

// TestBudgetsFile: entries in force by their from day; bad files are one
// line that names the entry.
func TestBudgetsFile(t *testing.T) {
	bs, err := ParseBudgets([]byte(`budgets:
  - {by: namespace, key: ml, monthly: 1000}
  - {by: namespace, key: ml, monthly: 2000, currency: USD, from: 2026-11-15}
  - {by: cluster, key: prod, monthly: 9000, from: 2026-12-01}
`), "b.yaml")
	if err != nil {
		t.Fatal(err)
	}
	day := func(d int) time.Time { return time.Date(2026, 11, d, 12, 0, 0, 0, time.UTC) }
	if in := InForce(bs, day(14)); len(in) != 1 || in[0].Monthly != 1000 {
		t.Errorf("on the 14th: %+v", in)
	}
	if in := InForce(bs, day(15)); len(in) != 1 || in[0].Monthly != 2000 {
		t.Errorf("on the 15th: %+v", in)
	}
	if l := Levels(bs); len(l) != 2 || l[0] != "namespace" || l[1] != "cluster" {
		t.Errorf("levels %v", l)
	}
	// The bounds themselves: a cent is an amount, 1e12 is not.
	if edge, err := ParseBudgets([]byte("budgets:\n  - {by: namespace, key: ml, monthly: 0.01}\n  - {by: namespace, key: cv, monthly: 999999999999.99}\n"), "b.yaml"); err != nil || len(edge) != 2 {
		t.Errorf("a budget of a cent and one just below 1e12: %v", err)
	}
	for doc, want := range map[string]string{
		"budgets:\n  - {by: namespace, key: ml, monthly: 0}\n":                "budget 1: monthly must be an amount of at least a cent",
		"budgets:\n  - {by: namespace, key: ml, monthly: 1e-320}\n":           "budget 1: monthly must be an amount of at least a cent",
		"budgets:\n  - {by: namespace, key: ml, monthly: 0.009}\n":            "budget 1: monthly must be an amount of at least a cent",
		"budgets:\n  - {by: namespace, key: ml, monthly: .inf}\n":             "budget 1: monthly must be an amount of at least a cent",
		"budgets:\n  - {by: namespace, key: ml, monthly: 1e12}\n":             "and below 1e12",
		"budgets:\n  - {by: clusterr, key: ml, monthly: 5}\n":                 `by "clusterr": choose cluster, namespace`,
		"budgets:\n  - {by: namespace, key: ml, monthly: 5, currency: EUR}\n": "currency EUR",
		"budgets:\n  - {by: namespace, monthly: 5}\n":                         "by and key",
		"budgets:\n  - {by: namespace, key: a, monthly: 5, from: nov}\n":      `from "nov" is not a date`,
		"budgets:\n  - {by: namespace, key: a, monthly: 5, limit: 3}\n":       "field limit not found",
		"budget: []\n": "not found",
	} {
		_, err := ParseBudgets([]byte(doc), "b.yaml")
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want one line with %q", doc, err, want)
		}
	}
}

// TestBudgetForecastByCluster: each cluster's part is carried to the
// month's end from its own data end, by hand. November (720 h); cluster a
// counted from the 1st to the 16th 00:00 (360 h), $300: $300 + $300 ÷ 360 h
// × 360 h = $600; cluster b counted $48 from the 11th 00:00 to the 13th
// 00:00 (48 h): $48 + $48 ÷ 48 h × 432 h = $480. Forecast $1,080 of $2,000 = 54 %;
// one forecast over both clusters' common span (the 1st to the 16th) would
// say $348 × 2 = $696, 34.8 %. A lagging cluster with charges makes the
// forecast unknown, and so does one that observed less than
// MinForecastObserved; a lagging cluster without charges does not.
func TestBudgetForecastByCluster(t *testing.T) {
	nov := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	day := func(d int) time.Time { return nov.AddDate(0, 0, d-1) }
	b := Budget{By: "team", Key: "ml", Monthly: 2000}
	a := Part{Cluster: "a", Since: day(1), Through: day(16), ActualUSD: 300}
	bp := Part{Cluster: "b", Since: day(11), Through: day(13), ActualUSD: 48}
	s := NewStatusOf(b, nov, []Part{a, bp}, MinForecastObserved)
	if s.ForecastUSD == nil || *s.ForecastUSD != 1080 || *s.ForecastPct != 54 || s.ActualUSD != 348 || !s.Through.Equal(day(16)) {
		t.Fatalf("status %+v, forecast %v", s, s.ForecastUSD)
	}
	bp.Lag = 72 * time.Hour
	s = NewStatusOf(b, nov, []Part{a, bp}, MinForecastObserved)
	if over, why := s.Crossed(1e6, false); s.ForecastUSD != nil || !over || !strings.Contains(why, "cluster b's data ends at 2026-11-13T00:00:00Z, 72h0m0s behind") {
		t.Errorf("a lagging cluster: %v %q", over, why)
	}
	bp.ActualUSD = 0
	if s = NewStatusOf(b, nov, []Part{a, bp}, MinForecastObserved); s.ForecastUSD == nil || *s.ForecastUSD != 600 {
		t.Errorf("a lagging cluster without charges: %+v", s)
	}
	short := Part{Cluster: "c", Since: day(16), Through: day(16).Add(MinForecastObserved - time.Minute), ActualUSD: 1}
	if s = NewStatusOf(b, nov, []Part{a, short}, MinForecastObserved); s.ForecastUSD != nil || !strings.Contains(s.Unknown, "cluster c observed 5h59m0s of the month, less than 6h0m0s") {
		t.Errorf("too little observed: %+v", s)
	}
	if s = NewStatusOf(b, nov, []Part{a, {Cluster: "c", Since: day(16), Through: day(16).Add(MinForecastObserved), ActualUSD: 1}}, MinForecastObserved); s.ForecastUSD == nil {
		t.Errorf("exactly the minimum observed: %+v", s)
	}
	// A cluster that observed no time of the month adds nothing to the
	// forecast, unless it lags: then its part is unknown, charged or not.
	none := Part{Cluster: "d", Since: day(16), Through: day(16)}
	if s = NewStatusOf(b, nov, []Part{a, none}, MinForecastObserved); s.ForecastUSD == nil || *s.ForecastUSD != 600 {
		t.Errorf("a cluster with no time of the month: %+v", s)
	}
	none.Lag = time.Hour
	if s = NewStatusOf(b, nov, []Part{a, none}, MinForecastObserved); s.ForecastUSD != nil || !strings.Contains(s.Unknown, "cluster d's data ends at") {
		t.Errorf("a lagging cluster with no time of the month: %+v", s)
	}
	later := Status{Budget: Budget{By: "team", Key: "ml", Monthly: 5, From: "2026-12-01"}, NotYet: true}
	if over, why := later.Crossed(0, false); over || !strings.Contains(why, "in force from 2026-12-01, not yet") {
		t.Errorf("not yet in force: %v %q", over, why)
	}
}
