package chargeback

import (
	"encoding/csv"
	"io"
	"strconv"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/seedance/seedance/internal/table"
)

// focusRecord is one FOCUS row: what the CSV and Parquet encodings
// write (the account's and the cost's copies each once). Costs are in
// cents; ChargeClass and x_UtilizationPct may be null.
type focusRecord struct {
	BilledCents        int64
	Account            string
	Currency           string
	BillingPeriodEnd   time.Time
	BillingPeriodStart time.Time
	ChargeCategory     string
	ChargeClass        *string
	ChargeDescription  string
	ChargePeriodEnd    time.Time
	ChargePeriodStart  time.Time
	Quantity           float64
	Unit               string
	ServiceCategory    string
	ServiceName        string
	ResourceID         string
	ResourceName       string
	ResourceType       string
	SubAccountID       string
	SubAccountName     string
	Tags               string
	Cluster            string
	Node               string
	Model              string
	Workload           string
	ReservedCost       float64
	SharedIdleCost     float64
	UsedGPUHours       float64
	IdleGPUHours       float64
	UtilizationPct     *float64
	EnergyKWh          float64
	EmissionsKg        *float64
	Work               *string // x_Work: the line's work by unit, a JSON object
}

// csv is the record's cells, in FocusColumns' order.
func (r *focusRecord) csv() []string {
	billed := strconv.FormatFloat(USD(r.BilledCents), 'f', 2, 64)
	ts := func(t time.Time) string { return t.UTC().Format(focusTime) }
	class := ""
	if r.ChargeClass != nil {
		class = *r.ChargeClass
	}
	q := dec(r.Quantity)
	v := table.CSVCell // names from the cluster: ESC, CR, NUL… as \x1b, never raw; no formula
	account := v(r.Account)
	return []string{
		billed, account, account, r.Currency, ts(r.BillingPeriodEnd), ts(r.BillingPeriodStart),
		r.ChargeCategory, class, v(r.ChargeDescription), ts(r.ChargePeriodEnd), ts(r.ChargePeriodStart), billed,
		billed, account, billed, q, r.Unit, account, account, r.ServiceCategory, r.ServiceName,
		q, r.Unit, v(r.ResourceID), v(r.ResourceName), r.ResourceType, v(r.SubAccountID), v(r.SubAccountName), r.Tags,
		v(r.Cluster), v(r.Node), v(r.Model), v(r.Workload), dec(r.ReservedCost), dec(r.SharedIdleCost), dec(r.UsedGPUHours), dec(r.IdleGPUHours),
		optDec(r.UtilizationPct), dec(r.EnergyKWh), optDec(r.EmissionsKg), optCell(r.Work),
	}
}

// csvRows writes records as CSV rows, a record's cells in its version's
// columns' order.
type csvRows[R any, P interface {
	*R
	csv() []string
}] struct{ w *csv.Writer }

func (c *csvRows[R, P]) write(recs []R) error {
	for i := range recs {
		if err := c.w.Write(P(&recs[i]).csv()); err != nil {
			return err
		}
	}
	c.w.Flush()
	return c.w.Error()
}

func (c *csvRows[R, P]) close() error {
	c.w.Flush()
	return c.w.Error()
}

// parquetRecord is a record as the Parquet file holds it: every column of
// FocusColumns; costs are Decimal(18, 2), the other decimals doubles,
// date/times UTC timestamps, null ("" in CSV) an absent optional value.
type parquetRecord struct {
	BilledCost         int64     `parquet:"BilledCost,decimal(2:18)"`
	BillingAccountID   string    `parquet:"BillingAccountId"`
	BillingAccountName string    `parquet:"BillingAccountName"`
	BillingCurrency    string    `parquet:"BillingCurrency"`
	BillingPeriodEnd   time.Time `parquet:"BillingPeriodEnd,timestamp(millisecond)"`
	BillingPeriodStart time.Time `parquet:"BillingPeriodStart,timestamp(millisecond)"`
	ChargeCategory     string    `parquet:"ChargeCategory"`
	ChargeClass        *string   `parquet:"ChargeClass,optional"`
	ChargeDescription  string    `parquet:"ChargeDescription"`
	ChargePeriodEnd    time.Time `parquet:"ChargePeriodEnd,timestamp(millisecond)"`
	ChargePeriodStart  time.Time `parquet:"ChargePeriodStart,timestamp(millisecond)"`
	ContractedCost     int64     `parquet:"ContractedCost,decimal(2:18)"`
	EffectiveCost      int64     `parquet:"EffectiveCost,decimal(2:18)"`
	InvoiceIssuerName  string    `parquet:"InvoiceIssuerName"`
	ListCost           int64     `parquet:"ListCost,decimal(2:18)"`
	PricingQuantity    float64   `parquet:"PricingQuantity"`
	PricingUnit        string    `parquet:"PricingUnit"`
	ProviderName       string    `parquet:"ProviderName"`
	PublisherName      string    `parquet:"PublisherName"`
	ServiceCategory    string    `parquet:"ServiceCategory"`
	ServiceName        string    `parquet:"ServiceName"`
	ConsumedQuantity   float64   `parquet:"ConsumedQuantity"`
	ConsumedUnit       string    `parquet:"ConsumedUnit"`
	ResourceID         string    `parquet:"ResourceId"`
	ResourceName       string    `parquet:"ResourceName"`
	ResourceType       string    `parquet:"ResourceType"`
	SubAccountID       string    `parquet:"SubAccountId"`
	SubAccountName     *string   `parquet:"SubAccountName,optional"`
	Tags               string    `parquet:"Tags,json"`
	Cluster            string    `parquet:"x_Cluster"`
	Node               string    `parquet:"x_Node"`
	GPUModel           string    `parquet:"x_GPUModel"`
	Workload           *string   `parquet:"x_Workload,optional"`
	ReservedCost       float64   `parquet:"x_ReservedCost"`
	SharedIdleCost     float64   `parquet:"x_SharedIdleCost"`
	UsedGPUHours       float64   `parquet:"x_UsedGPUHours"`
	IdleGPUHours       float64   `parquet:"x_IdleGPUHours"`
	UtilizationPct     *float64  `parquet:"x_UtilizationPct,optional"`
	EnergyKWh          float64   `parquet:"x_EnergyKWh"`
	EmissionsKg        *float64  `parquet:"x_EmissionsKgCO2e,optional"`
	Work               *string   `parquet:"x_Work,optional,json"`
}

// parquetRowGroup is the rows of a Parquet row group: the writer holds
// one in memory, whatever the export's length.
const parquetRowGroup = 32768

// parquetRows writes records into a Parquet file, a row group at a time.
type parquetRows struct {
	w *parquet.GenericWriter[parquetRecord]
}

func newParquetRows(w io.Writer) *parquetRows {
	return &parquetRows{w: parquet.NewGenericWriter[parquetRecord](w, parquet.Compression(&parquet.Zstd), parquet.CreatedBy("seedance", "", ""), parquet.MaxRowsPerRowGroup(parquetRowGroup))}
}

func (p *parquetRows) write(recs []focusRecord) error {
	out := make([]parquetRecord, len(recs))
	for i := range recs {
		r := &recs[i]
		out[i] = parquetRecord{BilledCost: r.BilledCents, BillingAccountID: r.Account, BillingAccountName: r.Account, BillingCurrency: r.Currency,
			BillingPeriodEnd: r.BillingPeriodEnd, BillingPeriodStart: r.BillingPeriodStart, ChargeCategory: r.ChargeCategory, ChargeClass: r.ChargeClass,
			ChargeDescription: r.ChargeDescription, ChargePeriodEnd: r.ChargePeriodEnd, ChargePeriodStart: r.ChargePeriodStart,
			ContractedCost: r.BilledCents, EffectiveCost: r.BilledCents, InvoiceIssuerName: r.Account, ListCost: r.BilledCents,
			PricingQuantity: r.Quantity, PricingUnit: r.Unit, ProviderName: r.Account, PublisherName: r.Account,
			ServiceCategory: r.ServiceCategory, ServiceName: r.ServiceName, ConsumedQuantity: r.Quantity, ConsumedUnit: r.Unit,
			ResourceID: r.ResourceID, ResourceName: r.ResourceName, ResourceType: r.ResourceType, SubAccountID: r.SubAccountID,
			SubAccountName: optional(r.SubAccountName), Tags: r.Tags, Cluster: r.Cluster, Node: r.Node, GPUModel: r.Model, Workload: optional(r.Workload),
			ReservedCost: r.ReservedCost, SharedIdleCost: r.SharedIdleCost, UsedGPUHours: r.UsedGPUHours, IdleGPUHours: r.IdleGPUHours,
			UtilizationPct: r.UtilizationPct, EnergyKWh: r.EnergyKWh, EmissionsKg: r.EmissionsKg, Work: r.Work}
	}
	_, err := p.w.Write(out)
	return err
}

func (p *parquetRows) close() error { return p.w.Close() }

// optional is nil for "" (a null), else s.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// optDec is a decimal, or "" (null) for nil.
// optCell is a CSV cell that may be null (empty).
func optCell(s *string) string {
	if s == nil {
		return ""
	}
	return table.CSVCell(*s)
}

func optDec(v *float64) string {
	if v == nil {
		return ""
	}
	return dec(*v)
}
