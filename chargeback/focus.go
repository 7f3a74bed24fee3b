package chargeback

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
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
	"x_UtilizationPct", "x_EnergyKWh", "x_EmissionsKgCO2e", "x_Work",
}

// FocusMandatory is how many of FocusColumns FOCUS 1.2 makes mandatory.
const FocusMandatory = 21

// focusTime is FOCUS's date/time format: UTC, 'YYYY-MM-DDTHH:mm:ssZ'.
const focusTime = "2006-01-02T15:04:05Z"

// Focus writes charge lines as FOCUS rows, in CSV or Parquet, a period at
// a time: FOCUS 1.3 with split cost allocation (focus13.go), or 1.2 (a
// row per line). BilledCost (= ContractedCost = EffectiveCost = ListCost:
// a cluster's own GPUs have no discounts) is in cents that sum to the
// rounded total of the lines' charges.
type Focus struct {
	// Carbon fills x_EmissionsKgCO2e (else null): the lines carry their
	// emissions.
	Carbon bool
	// Mode and Scope are the sharing rule the lines were shared by (1.3
	// splits each origin charge by it).
	Mode    Mode
	Scope   Scope
	version string
	out     rowWriter
	out13   rowWriter13
	account string
	// from and to clip the charge periods to the export's window.
	from, to time.Time
	cents    Cents
}

// FocusOptions say what a FOCUS export writes.
type FocusOptions struct {
	// Version is "1.3" (the default) or "1.2".
	Version string
	// Encoding is csv or parquet.
	Encoding string
	// Account is the billing account, the invoice's issuer and the
	// provider: the platform that owns the GPUs.
	Account string
	// From and To are the export's window [From, To).
	From, To time.Time
	Mode     Mode
	Scope    Scope
	Carbon   bool
}

// rowWriter writes FOCUS records in one encoding.
type rowWriter interface {
	write([]focusRecord) error
	close() error
}

// FocusFormats are the encodings of a FOCUS export.
var FocusFormats = []string{"csv", "parquet"}

// FocusVersions are the FOCUS versions an export writes, the default
// first.
var FocusVersions = []string{"1.3", "1.2"}

// NewFocus starts a FOCUS export (its header, for CSV).
func NewFocus(w io.Writer, o FocusOptions) (*Focus, error) {
	if o.Version == "" {
		o.Version = FocusVersions[0]
	}
	f := &Focus{account: o.Account, from: o.From.UTC(), to: o.To.UTC(), version: o.Version, Mode: o.Mode, Scope: o.Scope, Carbon: o.Carbon}
	if !slices.Contains(FocusVersions, o.Version) {
		return nil, fmt.Errorf("FOCUS version %q: choose %s", o.Version, strings.Join(FocusVersions, " or "))
	}
	switch {
	case o.Encoding == "csv" && o.Version == "1.3":
		cw := &csvRows[record13, *record13]{w: csv.NewWriter(w)}
		f.out13 = cw
		return f, cw.w.Write(Focus13Columns)
	case o.Encoding == "csv":
		cw := &csvRows[focusRecord, *focusRecord]{w: csv.NewWriter(w)}
		f.out = cw
		return f, cw.w.Write(FocusColumns)
	case o.Encoding == "parquet" && o.Version == "1.3":
		f.out13 = newParquetRows13(w)
		return f, nil
	case o.Encoding == "parquet":
		f.out = newParquetRows(w)
		return f, nil
	}
	return nil, fmt.Errorf("unknown FOCUS encoding %q (choose %s)", o.Encoding, strings.Join(FocusFormats, ", "))
}

// Write writes a period's lines (in SortLines' order): FOCUS 1.3's
// allocated charges, or 1.2's row per line.
func (f *Focus) Write(lines []Line) error {
	if f.out13 != nil {
		return f.write13(lines)
	}
	recs := make([]focusRecord, len(lines))
	for i := range lines {
		recs[i] = f.record(&lines[i])
	}
	return f.out.write(recs)
}

// Close ends the export (Parquet writes its footer).
func (f *Focus) Close() error {
	if f.out13 != nil {
		return f.out13.close()
	}
	return f.out.close()
}

// TotalCents is the sum of the BilledCost written, in cents.
func (f *Focus) TotalCents() int64 { return f.cents.Total() }

// record is one line's FOCUS record.
func (f *Focus) record(l *Line) focusRecord {
	start, end := later(l.Period, f.from), earlier(l.Period.AddDate(0, 0, 1), f.to)
	month := time.Date(l.Period.Year(), l.Period.Month(), 1, 0, 0, 0, 0, time.UTC)
	namespace, tags := l.tags()
	sub := l.Cluster
	if namespace != "" {
		sub += "/" + namespace
	}
	r := focusRecord{
		BilledCents: f.cents.Next(l.CostUSD()), Account: f.account, Currency: "USD",
		BillingPeriodStart: month, BillingPeriodEnd: month.AddDate(0, 1, 0), ChargePeriodStart: start, ChargePeriodEnd: end,
		ChargeCategory: "Usage", ChargeDescription: l.description(), Quantity: analyze.Sig(l.HeldH), Unit: "GPU-Hours",
		ServiceCategory: "AI and Machine Learning", ServiceName: "GPU compute",
		ResourceID: l.Cluster + "/" + l.Node, ResourceName: l.Node, ResourceType: "GPU node", SubAccountID: sub, SubAccountName: namespace, Tags: tags,
		Cluster: l.Cluster, Node: l.Node, Model: l.Model, Workload: l.Workload,
		ReservedCost: analyze.Sig(l.HeldUSD), SharedIdleCost: analyze.Sig(l.SharedUSD), UsedGPUHours: analyze.Sig(l.UsedH), IdleGPUHours: analyze.Sig(l.IdleH),
		EnergyKWh: analyze.Sig(l.EnergyKWh),
	}
	r.UtilizationPct, r.EmissionsKg = f.optional(l.HeldH, l.UsedH, l.EmissionsKg, l.EmissionsUnknown)
	if len(l.Work) > 0 {
		w := jsonObject(l.Work)
		r.Work = &w
	}
	return r
}

// optional are a row's figures that may be null: its utilization (null
// when it held nothing) and its emissions (null without a grid
// intensity, or when an hour of it had none).
func (f *Focus) optional(held, used, emissions float64, unknown bool) (utilization, emitted *float64) {
	if held > 0 {
		u := analyze.Sig(100 * used / held)
		utilization = &u
	}
	if f.Carbon && !unknown {
		e := analyze.Sig(emissions)
		emitted = &e
	}
	return utilization, emitted
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
