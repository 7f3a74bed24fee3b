package chargeback

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/seedance/seedance/analyze"
)

// FocusColumns are the columns of a FOCUS export, in order. FOCUS 1.2
// (FinOps Open Cost and Usage Specification, version 1.2,
// focus.finops.org; the column definitions of FinOps-Open-Cost-and-Usage-
// Spec/FOCUS_Spec, specification/columns): the 21 mandatory columns, the
// optional ones seedance knows, then its custom columns (x_ prefix,
// Pascal case, as the Custom Column Handling attribute asks).
var FocusColumns = []string{
	"BilledCost", "BillingAccountId", "BillingAccountName", "BillingCurrency", "BillingPeriodEnd", "BillingPeriodStart",
	"ChargeCategory", "ChargeClass", "ChargeDescription", "ChargePeriodEnd", "ChargePeriodStart", "ContractedCost",
	"EffectiveCost", "InvoiceIssuerName", "ListCost", "PricingQuantity", "PricingUnit", "ProviderName", "PublisherName",
	"ServiceCategory", "ServiceName",
	"ConsumedQuantity", "ConsumedUnit", "ResourceId", "ResourceName", "ResourceType", "SubAccountId", "SubAccountName", "Tags",
	"x_Cluster", "x_Node", "x_GPUModel", "x_Workload", "x_ReservedCost", "x_SharedIdleCost", "x_UsedGPUHours", "x_IdleGPUHours",
	"x_UtilizationPct", "x_EnergyKWh",
}

// FocusMandatory is how many of FocusColumns FOCUS 1.2 makes mandatory.
const FocusMandatory = 21

// focusTime is FOCUS's date/time format: UTC, 'YYYY-MM-DDTHH:mm:ssZ'.
const focusTime = "2006-01-02T15:04:05Z"

// Focus writes charge lines as FOCUS rows in CSV, a period at a time.
// BilledCost (= ContractedCost = EffectiveCost = ListCost: a cluster's
// own GPUs have no discounts) is in cents that sum to the rounded total
// of the lines' charges.
type Focus struct {
	w       *csv.Writer
	account string
	// from and to clip the charge periods to the export's window.
	from, to time.Time
	cents    Cents
}

// NewFocus starts a FOCUS CSV export of the window [from, to) for the
// billing account (the platform that owns the GPUs), and writes its
// header.
func NewFocus(w io.Writer, account string, from, to time.Time) (*Focus, error) {
	f := &Focus{w: csv.NewWriter(w), account: account, from: from.UTC(), to: to.UTC()}
	return f, f.w.Write(FocusColumns)
}

// Write writes a period's lines, one row each.
func (f *Focus) Write(lines []Line) error {
	for i := range lines {
		if err := f.w.Write(f.row(&lines[i])); err != nil {
			return err
		}
	}
	f.w.Flush()
	return f.w.Error()
}

// Close flushes the rows.
func (f *Focus) Close() error {
	f.w.Flush()
	return f.w.Error()
}

// TotalCents is the sum of the BilledCost written, in cents.
func (f *Focus) TotalCents() int64 { return f.cents.Total() }

// row is one line's FOCUS row, in FocusColumns' order.
func (f *Focus) row(l *Line) []string {
	start, end := l.Period, l.Period.AddDate(0, 0, 1)
	start, end = later(start, f.from), earlier(end, f.to)
	month := time.Date(l.Period.Year(), l.Period.Month(), 1, 0, 0, 0, 0, time.UTC)
	billed := money(f.cents.Next(l.CostUSD()))
	namespace, tags := l.tags()
	sub := l.Cluster
	if namespace != "" {
		sub += "/" + namespace
	}
	util := ""
	if l.HeldH > 0 {
		util = dec(100 * l.UsedH / l.HeldH)
	}
	return []string{
		billed, f.account, f.account, "USD", month.AddDate(0, 1, 0).Format(focusTime), month.Format(focusTime),
		"Usage", "", l.description(), end.Format(focusTime), start.Format(focusTime), billed,
		billed, f.account, billed, dec(l.HeldH), "GPU-Hours", f.account, f.account,
		"AI and Machine Learning", "GPU compute",
		dec(l.HeldH), "GPU-Hours", l.Cluster + "/" + l.Node, l.Node, "GPU node", sub, namespace, tags,
		l.Cluster, l.Node, l.Model, l.Workload, dec(l.HeldUSD), dec(l.SharedUSD), dec(l.UsedH), dec(l.IdleH),
		util, dec(l.EnergyKWh),
	}
}

// description is the row's ChargeDescription.
func (l *Line) description() string {
	who := "held by no workload"
	if !l.Unallocated() {
		who = "held by " + l.Workload
	}
	d := fmt.Sprintf("GPU time of %s on node %s %s, at %s USD per GPU-hour", l.Model, l.Node, who, dec(l.PriceUSDPerHour))
	switch {
	case l.SharedUSD > 0:
		d += ", with its share of the time no workload held"
	case l.SharedUSD < 0:
		d += ", shared over the teams that held GPUs"
	}
	return d
}

// tags are the line's namespace and its Tags: the workload and its group
// keys, a JSON object of strings.
func (l *Line) tags() (namespace, tags string) {
	m := map[string]string{"cluster": l.Cluster}
	if !l.Unallocated() {
		m["workload"] = l.Workload
	}
	for i, k := range l.Group {
		if i < len(l.GroupLevels) {
			name, _, _ := strings.Cut(l.GroupLevels[i], "=") // team=LABEL: team
			m[name] = k
		}
	}
	namespace = m["namespace"]
	b, _ := json.Marshal(m) // strings only: cannot fail
	return namespace, string(b)
}

func money(cents int64) string { return strconv.FormatFloat(USD(cents), 'f', 2, 64) }

// dec is a decimal without exponent, to 9 significant digits at most.
func dec(v float64) string {
	return strconv.FormatFloat(analyze.Sig(v), 'f', -1, 64)
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func earlier(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
