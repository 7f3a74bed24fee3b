package chargeback

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/seedance/seedance/analyze"
)

// ErrBudgets marks a budgets file that does not fit the ledger it is
// checked against: a key that matches no group (a misspelt key).
var ErrBudgets = errors.New("budgets")

// MinForecastObserved is the least time of a month a forecast rests on by
// default (ledger.forecast_min_observed): a month-end figure carried from
// less is noise, so it is null (and fails a check) until a cluster has
// counted this much of the month.
const MinForecastObserved = 6 * time.Hour

// Budget is one entry of a budgets file: a group's monthly amount, in
// force from a day on (docs/chargeback.md, Budgets).
type Budget struct {
	// By is the group level (namespace, cluster, team=LABEL, any level of
	// --by) and Key the group's key at it.
	By      string  `yaml:"by" json:"by"`
	Key     string  `yaml:"key" json:"key"`
	Monthly float64 `yaml:"monthly" json:"monthly"`
	// Currency is the amount's: USD, the prices' currency.
	Currency string `yaml:"currency" json:"currency"`
	// From is the first day (UTC, YYYY-MM-DD) it is in force; "" for
	// always. A later entry of the same group from a later day replaces
	// it from then on.
	From string `yaml:"from" json:"from,omitempty"`
	from time.Time
}

// ParseBudgets reads a budgets file: a budgets: list.
func ParseBudgets(b []byte, name string) ([]Budget, error) {
	var f struct {
		Budgets []Budget `yaml:"budgets"`
	}
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("budgets file %s: %v", name, strings.Join(strings.Fields(err.Error()), " "))
	}
	if len(f.Budgets) == 0 {
		return nil, fmt.Errorf("budgets file %s: no budgets: (a list of by, key, monthly, currency, from)", name)
	}
	for i := range f.Budgets {
		if err := f.Budgets[i].check(); err != nil {
			return nil, fmt.Errorf("budgets file %s: budget %d: %v", name, i+1, err)
		}
	}
	return f.Budgets, nil
}

func (b *Budget) check() error {
	switch {
	case b.By == "" || b.Key == "":
		return fmt.Errorf("by and key name the group (by: namespace, key: ml)")
	case b.By != "cluster" && analyze.CheckGroupBy([]string{b.By}) != nil:
		return fmt.Errorf("by %q: choose cluster, namespace, workload, controller, user, account, model or team=LABEL", b.By)
	case !(b.Monthly >= 0.01 && b.Monthly < 1e12):
		return fmt.Errorf("monthly must be an amount of at least a cent (0.01) and below 1e12")
	case b.Currency != "" && b.Currency != "USD":
		return fmt.Errorf("currency %s: prices are in USD, so are budgets", b.Currency)
	}
	b.Currency = "USD"
	if b.From != "" {
		t, err := time.Parse(time.DateOnly, b.From)
		if err != nil {
			return fmt.Errorf("from %q is not a date (2026-11-01)", b.From)
		}
		b.from = t
	}
	return nil
}

// Levels are the group levels the budgets name, each once, in order.
func Levels(bs []Budget) []string {
	var out []string
	for _, b := range bs {
		if !slices.Contains(out, b.By) {
			out = append(out, b.By)
		}
	}
	return out
}

// InForce are the budgets in force on day: of each group's entries, the
// latest whose From is not after day.
func InForce(bs []Budget, day time.Time) []Budget {
	latest := map[[2]string]int{}
	var order [][2]string
	for i, b := range bs {
		k := [2]string{b.By, b.Key}
		if b.from.After(day) {
			continue
		}
		j, ok := latest[k]
		if !ok {
			order = append(order, k)
		}
		if !ok || !b.from.Before(bs[j].from) {
			latest[k] = i
		}
	}
	out := make([]Budget, 0, len(order))
	for _, k := range order {
		out = append(out, bs[latest[k]])
	}
	return out
}

// Status is a budget's month so far: what its group was charged from the
// month's start to the data's end, the month-end forecast, and their
// shares of the budget.
type Status struct {
	Budget
	Month       string    `json:"month"` // YYYY-MM
	Through     time.Time `json:"through"`
	ActualUSD   float64   `json:"actual_usd"`
	ForecastUSD *float64  `json:"forecast_usd"`
	ActualPct   float64   `json:"actual_pct"`
	ForecastPct *float64  `json:"forecast_pct"`
	// Unknown, when set, says why the forecast is null though the month
	// has data: a cluster the group was charged in lags, or too little of
	// the month was observed (MinForecastObserved).
	Unknown string `json:"unknown,omitempty"`
	// NotYet: the budget is in force from a later day (From) only.
	NotYet bool `json:"not_yet,omitempty"`
}

// Part is what a budget's group was charged in one cluster over the
// month so far, and the time that cluster observed of it: from since (the
// month's start, or the cluster's first data) to through (its data end).
// Lag says how far the cluster's data end lags (0: it does not).
type Part struct {
	Cluster        string
	Since, Through time.Time
	ActualUSD      float64
	Lag            time.Duration
}

// NewStatus is a budget's status given what its group was charged in
// the month from since (the month's start, or the ledger's first data in
// it) to through. The forecast carries the month's own run rate to its
// end: actual + actual ÷ (through − since) × (month end − through); null
// when no time of the month was counted.
func NewStatus(b Budget, month, since, through time.Time, actual float64) Status {
	return NewStatusOf(b, month, []Part{{Since: since, Through: through, ActualUSD: actual}}, 0)
}

// NewStatusOf is a budget's status from its group's parts, a cluster
// each: each part's run rate is carried to the month's end from its own
// cluster's data end, over its own observed time, and the parts' forecasts
// add up. The forecast is null when no part observed time of the month,
// when one observed less than minObserved, or when one with charges lags
// (Unknown says which).
func NewStatusOf(b Budget, month time.Time, parts []Part, minObserved time.Duration) Status {
	end := month.AddDate(0, 1, 0)
	var actual, forecast float64
	var through time.Time
	observed := false
	var unknown []string
	for _, p := range parts {
		actual += p.ActualUSD
		through = later(through, p.Through)
		elapsed := p.Through.Sub(p.Since)
		switch {
		case p.Lag > 0 && (p.ActualUSD > 0 || elapsed <= 0):
			unknown = append(unknown, fmt.Sprintf("cluster %s's data ends at %s, %s behind", p.Cluster, p.Through.UTC().Format(time.RFC3339), p.Lag.Truncate(time.Minute)))
		case elapsed <= 0:
			continue
		case elapsed < minObserved:
			unknown = append(unknown, fmt.Sprintf("cluster %s observed %s of the month, less than %s", p.Cluster, elapsed.Truncate(time.Minute), minObserved))
		}
		observed = true
		forecast += p.ActualUSD + p.ActualUSD/elapsed.Seconds()*end.Sub(p.Through).Seconds()
	}
	s := Status{Budget: b, Month: month.Format("2006-01"), Through: through.UTC(), ActualUSD: cents(actual), ActualPct: pct(actual, b.Monthly)}
	switch {
	case len(unknown) > 0:
		s.Unknown = strings.Join(unknown, "; ")
	case observed:
		f := cents(forecast)
		p := pct(f, b.Monthly)
		s.ForecastUSD, s.ForecastPct = &f, &p
	}
	return s
}

func pct(v, of float64) float64 { return analyze.Sig(100 * v / of) }

// Crossed says whether the status crosses the threshold (percent of the
// budget) on its forecast (or actual, when actual is set); a null
// forecast crosses every threshold, with the reason.
func (s Status) Crossed(thresholdPct float64, actual bool) (bool, string) {
	name := fmt.Sprintf("budget %s=%s of %.2f USD for %s", s.By, s.Key, s.Monthly, s.Month)
	if actual {
		return s.ActualPct >= thresholdPct, fmt.Sprintf("%s: %.2f USD charged so far, %.1f%% (threshold %g%%)", name, s.ActualUSD, s.ActualPct, thresholdPct)
	}
	switch {
	case s.NotYet:
		return false, fmt.Sprintf("%s: in force from %s, not yet", name, s.From)
	case s.Unknown != "":
		return true, name + ": forecast unknown: " + s.Unknown + " (a null fails the check)"
	case s.ForecastPct == nil:
		return true, name + ": no data of the month yet, so no forecast (a null fails the check)"
	}
	return *s.ForecastPct >= thresholdPct, fmt.Sprintf("%s: forecast %.2f USD at month end, %.1f%% (threshold %g%%; %.2f USD so far)", name, *s.ForecastUSD, *s.ForecastPct, thresholdPct, s.ActualUSD)
}
