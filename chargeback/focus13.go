package chargeback

import (
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/internal/table"
)

// Focus13Columns are the columns of a FOCUS 1.3 export, in order: the
// Cost and Usage dataset's columns seedance fills (FinOps-Open-Cost-and-
// Usage-Spec/FOCUS_Spec, specification/datasets/cost_and_usage/columns:
// the mandatory ones, the split cost allocation columns, the unit prices
// and the sub-account's), then its custom columns. 1.3 deprecates
// ProviderName and PublisherName for ServiceProviderName and
// HostProviderName, but keeps them mandatory (present, not null:
// providername.md and publishername.md, "Deprecated (version) 1.3").
var Focus13Columns = []string{
	"AllocatedMethodDetails", "AllocatedMethodId", "AllocatedResourceId", "AllocatedResourceName", "AllocatedTags",
	"BilledCost", "BillingAccountId", "BillingAccountName", "BillingCurrency", "BillingPeriodEnd", "BillingPeriodStart",
	"ChargeCategory", "ChargeClass", "ChargeDescription", "ChargeFrequency", "ChargePeriodEnd", "ChargePeriodStart",
	"ConsumedQuantity", "ConsumedUnit", "ContractedCost", "ContractedUnitPrice", "EffectiveCost", "HostProviderName", "InvoiceIssuerName",
	"ListCost", "ListUnitPrice", "PricingQuantity", "PricingUnit", "ProviderName", "PublisherName", "ResourceId", "ResourceName", "ResourceType",
	"ServiceCategory", "ServiceName", "ServiceProviderName", "SkuId", "SkuPriceId", "SubAccountId", "SubAccountName", "SubAccountType", "Tags",
	"x_Cluster", "x_Node", "x_GPUModel", "x_Workload", "x_AllocatedPart", "x_UsedGPUHours", "x_IdleGPUHours", "x_UtilizationPct",
	"x_EnergyKWh", "x_EmissionsKgCO2e", "x_PriceSource", "x_Work",
}

// gpuHours is the pricing and usage unit (UnitFormat: a count of hours of
// a GPU).
const gpuHours = "GPU-Hours"

// MethodID is the AllocatedMethodId of a sharing rule: the held time
// alone, or with the unallocated time shared by mode within scope
// (docs/chargeback.md documents each).
func MethodID(mode Mode, scope Scope) string {
	if mode == None || mode == "" {
		return "seedance/gpu-time-held"
	}
	return "seedance/gpu-time-held+idle-" + string(mode) + "-by-" + string(scope)
}

// record13 is one FOCUS 1.3 row: an allocated charge of an origin charge.
type record13 struct {
	o                                  *Origin
	p                                  *Allocated
	method, details                    string
	resourceID, resourceName, allocTag *string
	tags                               string
	start, end, month                  time.Time
	account                            string
	utilization, emissions             *float64
}

// write13 writes a period's lines as FOCUS 1.3 rows: its origin charges'
// allocated charges, each origin's cents (rounded cumulatively over the
// export) split among them.
func (f *Focus) write13(lines []Line) error {
	var recs []record13
	for _, o := range Split(lines, f.Mode, f.Scope) {
		o.splitCents(f.cents.Next(o.USD))
		for i := range o.Parts {
			recs = append(recs, f.record13(&o, &o.Parts[i]))
		}
	}
	return f.out13.write(recs)
}

// record13 is one allocated charge's row.
func (f *Focus) record13(o *Origin, p *Allocated) record13 {
	r := record13{o: o, p: p, method: MethodID(f.Mode, f.Scope), account: f.account,
		start: later(o.Period, f.from), end: earlier(o.Period.AddDate(0, 0, 1), f.to),
		month: time.Date(o.Period.Year(), o.Period.Month(), 1, 0, 0, 0, 0, time.UTC)}
	r.tags = jsonObject(clusterTags{o.Cluster})
	r.details = jsonObject(methodDetails{Elements: []methodElement{{AllocatedRatio: p.Ratio, UsageQuantity: analyze.Sig(p.HeldH), UsageUnit: gpuHours}}, Part: p.Kind})
	if p.Kind != PartUnallocated {
		id, name := o.Cluster+"/"+p.Workload, p.Workload
		if p.Kind == PartSharedIdle {
			name = groupName(p.Group, p.GroupLevels)
			id = o.Cluster + "/" + name
		}
		tags := jsonObject(allocatedTags(p))
		r.resourceID, r.resourceName, r.allocTag = &id, &name, &tags
	}
	r.utilization, r.emissions = f.optional(p.HeldH, p.UsedH, p.EmissionsKg, p.EmissionsUnknown)
	return r
}

// groupName names a group by its levels: namespace=ml/team=vision.
func groupName(keys, levels []string) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		level := "group"
		if i < len(levels) {
			level, _, _ = strings.Cut(levels[i], "=")
		}
		parts[i] = level + "=" + k
	}
	return strings.Join(parts, "/")
}

// allocatedTags are an allocated charge's own tags (none of the origin's
// Tags): the workload and its group keys, under seedance's prefix.
func allocatedTags(p *Allocated) map[string]any {
	m := map[string]any{}
	if p.Workload != "" {
		m["seedance.io/workload"] = p.Workload
	}
	for i, k := range p.Group {
		if i < len(p.GroupLevels) {
			level, _, _ := strings.Cut(p.GroupLevels[i], "=")
			m["seedance.io/"+level] = k
		}
	}
	return m
}

// clusterTags, methodDetails and methodElement are the Tags and
// AllocatedMethodDetails of every row, as structs (their keys in the
// order encoding/json gives a map's: sorted), which encode a third as
// dearly as maps (a month's export writes 150,000 of each).
type clusterTags struct {
	Cluster string `json:"seedance.io/cluster"`
}

type methodDetails struct {
	Elements []methodElement `json:"Elements"`
	Part     string          `json:"x_AllocatedPart"`
}

type methodElement struct {
	AllocatedRatio float64 `json:"AllocatedRatio"`
	UsageQuantity  float64 `json:"UsageQuantity"`
	UsageUnit      string  `json:"UsageUnit"`
}

// jsonObject is v as JSON (strings, numbers and arrays of them: cannot
// fail).
func jsonObject(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// description is an origin charge's ChargeDescription, the same on each
// of its allocated charges (a dimension).
func (o *Origin) description() string {
	return "GPU time of " + o.Model + " on node " + o.Node + ", at " + dec(o.PriceUSDPerHour) + " USD per GPU-hour, split among its holders"
}

// sku is an origin charge's SkuId and SkuPriceId: an hour of a GPU of its
// model, the unit its price list (price file, OpenCost, the built-in
// table) prices. It holds no price, date or account, so that it stays the
// same when a price changes (skupriceid.md: a SkuPriceId MAY equal its
// SkuId).
func (o *Origin) sku() string { return "seedance/gpu-hour/" + o.Model }

// csv13 is the row's cells, in Focus13Columns' order; names are
// guarded against formula injection, costs in cents.
func (r *record13) csv() []string {
	c := table.CSVCell
	cost := strconv.FormatFloat(USD(r.p.Cents), 'f', 2, 64)
	ts := func(t time.Time) string { return t.UTC().Format(focusTime) }
	opt := optCell
	q, price, account := dec(r.p.HeldH), dec(r.o.PriceUSDPerHour), c(r.account)
	workload := ""
	if r.p.Kind == PartHeld {
		workload = c(r.p.Workload)
	}
	return []string{
		r.details, r.method, opt(r.resourceID), opt(r.resourceName), opt(r.allocTag),
		cost, account, account, "USD", ts(r.month.AddDate(0, 1, 0)), ts(r.month),
		"Usage", "", c(r.o.description()), "Usage-Based", ts(r.end), ts(r.start),
		q, gpuHours, cost, price, cost, account, account,
		cost, price, q, gpuHours, account, account, c(r.o.Cluster + "/" + r.o.Node), c(r.o.Node), "GPU node",
		"AI and Machine Learning", "GPU compute", account, c(r.o.sku()), c(r.o.sku()), c(r.o.Cluster), c(r.o.Cluster), "Cluster", r.tags,
		c(r.o.Cluster), c(r.o.Node), c(r.o.Model), workload, r.p.Kind, dec(r.p.UsedH), dec(r.p.IdleH), optDec(r.utilization),
		dec(r.p.EnergyKWh), optDec(r.emissions), r.o.PriceSource, opt(workJSON(r.p)),
	}
}

// workJSON is a held part's work by unit as a JSON object (x_Work, docs/
// chargeback.md): {"output_tokens":1200}; nil where it counted none.
func workJSON(p *Allocated) *string {
	if len(p.Work) == 0 {
		return nil
	}
	s := jsonObject(p.Work)
	return &s
}

// rowWriter13 writes FOCUS 1.3 records in one encoding.
type rowWriter13 interface {
	write([]record13) error
	close() error
}

// parquet13 is a 1.3 record as the Parquet file holds it: costs
// Decimal(18, 2), quantities and prices doubles, date/times UTC
// timestamps, JSON columns JSON strings, nulls absent optional values.
type parquet13 struct {
	AllocatedMethodDetails string    `parquet:"AllocatedMethodDetails,json"`
	AllocatedMethodID      string    `parquet:"AllocatedMethodId"`
	AllocatedResourceID    *string   `parquet:"AllocatedResourceId,optional"`
	AllocatedResourceName  *string   `parquet:"AllocatedResourceName,optional"`
	AllocatedTags          *string   `parquet:"AllocatedTags,optional,json"`
	BilledCost             int64     `parquet:"BilledCost,decimal(2:18)"`
	BillingAccountID       string    `parquet:"BillingAccountId"`
	BillingAccountName     string    `parquet:"BillingAccountName"`
	BillingCurrency        string    `parquet:"BillingCurrency"`
	BillingPeriodEnd       time.Time `parquet:"BillingPeriodEnd,timestamp(millisecond)"`
	BillingPeriodStart     time.Time `parquet:"BillingPeriodStart,timestamp(millisecond)"`
	ChargeCategory         string    `parquet:"ChargeCategory"`
	ChargeClass            *string   `parquet:"ChargeClass,optional"`
	ChargeDescription      string    `parquet:"ChargeDescription"`
	ChargeFrequency        string    `parquet:"ChargeFrequency"`
	ChargePeriodEnd        time.Time `parquet:"ChargePeriodEnd,timestamp(millisecond)"`
	ChargePeriodStart      time.Time `parquet:"ChargePeriodStart,timestamp(millisecond)"`
	ConsumedQuantity       float64   `parquet:"ConsumedQuantity"`
	ConsumedUnit           string    `parquet:"ConsumedUnit"`
	ContractedCost         int64     `parquet:"ContractedCost,decimal(2:18)"`
	ContractedUnitPrice    float64   `parquet:"ContractedUnitPrice"`
	EffectiveCost          int64     `parquet:"EffectiveCost,decimal(2:18)"`
	HostProviderName       string    `parquet:"HostProviderName"`
	InvoiceIssuerName      string    `parquet:"InvoiceIssuerName"`
	ListCost               int64     `parquet:"ListCost,decimal(2:18)"`
	ListUnitPrice          float64   `parquet:"ListUnitPrice"`
	PricingQuantity        float64   `parquet:"PricingQuantity"`
	PricingUnit            string    `parquet:"PricingUnit"`
	ProviderName           string    `parquet:"ProviderName"`
	PublisherName          string    `parquet:"PublisherName"`
	ResourceID             string    `parquet:"ResourceId"`
	ResourceName           string    `parquet:"ResourceName"`
	ResourceType           string    `parquet:"ResourceType"`
	ServiceCategory        string    `parquet:"ServiceCategory"`
	ServiceName            string    `parquet:"ServiceName"`
	ServiceProviderName    string    `parquet:"ServiceProviderName"`
	SkuID                  string    `parquet:"SkuId"`
	SkuPriceID             string    `parquet:"SkuPriceId"`
	SubAccountID           string    `parquet:"SubAccountId"`
	SubAccountName         string    `parquet:"SubAccountName"`
	SubAccountType         string    `parquet:"SubAccountType"`
	Tags                   string    `parquet:"Tags,json"`
	Cluster                string    `parquet:"x_Cluster"`
	Node                   string    `parquet:"x_Node"`
	GPUModel               string    `parquet:"x_GPUModel"`
	Workload               *string   `parquet:"x_Workload,optional"`
	AllocatedPart          string    `parquet:"x_AllocatedPart"`
	UsedGPUHours           float64   `parquet:"x_UsedGPUHours"`
	IdleGPUHours           float64   `parquet:"x_IdleGPUHours"`
	UtilizationPct         *float64  `parquet:"x_UtilizationPct,optional"`
	EnergyKWh              float64   `parquet:"x_EnergyKWh"`
	EmissionsKg            *float64  `parquet:"x_EmissionsKgCO2e,optional"`
	PriceSource            string    `parquet:"x_PriceSource"`
	Work                   *string   `parquet:"x_Work,optional,json"`
}

type parquetRows13 struct {
	w *parquet.GenericWriter[parquet13]
}

func newParquetRows13(w io.Writer) *parquetRows13 {
	return &parquetRows13{w: parquet.NewGenericWriter[parquet13](w, parquet.Compression(&parquet.Zstd), parquet.CreatedBy("seedance", "", ""), parquet.MaxRowsPerRowGroup(parquetRowGroup))}
}

func (p *parquetRows13) write(recs []record13) error {
	out := make([]parquet13, len(recs))
	for i := range recs {
		r := &recs[i]
		q, price, cents := analyze.Sig(r.p.HeldH), analyze.Sig(r.o.PriceUSDPerHour), r.p.Cents
		var workload *string
		if r.p.Kind == PartHeld {
			workload = &r.p.Workload
		}
		out[i] = parquet13{AllocatedMethodDetails: r.details, AllocatedMethodID: r.method, AllocatedResourceID: r.resourceID,
			AllocatedResourceName: r.resourceName, AllocatedTags: r.allocTag, BilledCost: cents, BillingAccountID: r.account, BillingAccountName: r.account,
			BillingCurrency: "USD", BillingPeriodEnd: r.month.AddDate(0, 1, 0), BillingPeriodStart: r.month, ChargeCategory: "Usage",
			ChargeDescription: r.o.description(), ChargeFrequency: "Usage-Based", ChargePeriodEnd: r.end, ChargePeriodStart: r.start,
			ConsumedQuantity: q, ConsumedUnit: gpuHours, ContractedCost: cents, ContractedUnitPrice: price, EffectiveCost: cents,
			HostProviderName: r.account, InvoiceIssuerName: r.account, ListCost: cents, ListUnitPrice: price, PricingQuantity: q, PricingUnit: gpuHours,
			ProviderName: r.account, PublisherName: r.account, ResourceID: r.o.Cluster + "/" + r.o.Node, ResourceName: r.o.Node, ResourceType: "GPU node", ServiceCategory: "AI and Machine Learning",
			ServiceName: "GPU compute", ServiceProviderName: r.account, SkuID: r.o.sku(), SkuPriceID: r.o.sku(), SubAccountID: r.o.Cluster, SubAccountName: r.o.Cluster, SubAccountType: "Cluster",
			Tags: r.tags, Cluster: r.o.Cluster, Node: r.o.Node, GPUModel: r.o.Model, Workload: workload, AllocatedPart: r.p.Kind,
			UsedGPUHours: analyze.Sig(r.p.UsedH), IdleGPUHours: analyze.Sig(r.p.IdleH), UtilizationPct: r.utilization,
			EnergyKWh: analyze.Sig(r.p.EnergyKWh), EmissionsKg: r.emissions, PriceSource: r.o.PriceSource, Work: workJSON(r.p)}
	}
	_, err := p.w.Write(out)
	return err
}

func (p *parquetRows13) close() error { return p.w.Close() }
