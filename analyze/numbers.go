package analyze

// Rounding, means and percentiles of the report's figures.

import (
	"math"
	"strings"
)

// meanPtr is the mean of v, rounded to 0.1; nil when v is empty.
func meanPtr(v []float64) *float64 {
	if len(v) == 0 {
		return nil
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	m := round(s/float64(len(v)), 1)
	return &m
}

// percentile is the nearest-rank percentile of sorted values.
func percentile(sorted []float64, p float64) *float64 {
	if len(sorted) == 0 {
		return nil
	}
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	if i < 0 {
		i = 0
	}
	v := round(sorted[i], 1)
	return &v
}

// num is a measured figure, to 9 significant digits.
func num(x float64) *float64 {
	v := sig(x)
	return &v
}

// mean is sum/weight rounded, or nil when nothing was weighed: a metric
// that no sample carried is unknown, not 0.
func mean(sum, weight float64) *float64 {
	if weight == 0 {
		return nil
	}
	v := sig(sum / weight)
	return &v
}

// VerdictUnknown is the verdict of a node without utilization data.
const VerdictUnknown = "unknown"

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// Sig rounds x to 9 significant digits, as every figure of a report is
// (docs/analysis.md): for the stages after analysis that compute figures
// of their own.
func Sig(x float64) float64 { return sig(x) }

// sig rounds x to 9 significant digits: enough for every figure to be exact
// to well within 0.1 %, without binary noise in the JSON.
func sig(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	p := math.Pow(10, 8-math.Floor(math.Log10(math.Abs(x))))
	return math.Round(x*p) / p
}

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

// shortModel drops the vendor prefix: "NVIDIA H100 80GB HBM3" → "H100 80GB HBM3".
func shortModel(m string) string {
	if m == "" {
		return "unknown GPU"
	}
	return strings.TrimPrefix(m, "NVIDIA ")
}

// ExactProjectionS is the covered time from which a monthly projection is
// shown to the cent: a week. Below that it is rounded (RoundProjection).
const ExactProjectionS = 7 * 24 * 3600

// RoundProjection rounds a monthly projection to the precision its basis
// supports (docs/analysis.md): 2 significant digits from under an hour of
// covered time, 3 from under a day, whole dollars from under a week, cents
// from a week on.
func RoundProjection(v, coveredS float64) float64 {
	digits := 0
	switch {
	case coveredS < 3600:
		digits = 2
	case coveredS < 24*3600:
		digits = 3
	case coveredS < ExactProjectionS:
		return math.Round(v)
	default:
		return v
	}
	if v == 0 {
		return 0
	}
	p := math.Pow(10, float64(digits-1)-math.Floor(math.Log10(math.Abs(v))))
	return math.Round(v*p) / p
}
