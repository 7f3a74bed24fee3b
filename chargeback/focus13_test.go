package chargeback

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// focus13Mandatory are FOCUS 1.3's mandatory Cost and Usage columns as its
// column definitions give them (Feature level: Mandatory), written out
// here rather than taken from the code under test: 1.2's, with
// ServiceProviderName and HostProviderName. ProviderName and
// PublisherName, deprecated in 1.3, stay mandatory in it.
var focus13Mandatory = []string{"BilledCost", "BillingAccountId", "BillingAccountName", "BillingCurrency", "BillingPeriodEnd", "BillingPeriodStart",
	"ChargeCategory", "ChargeClass", "ChargeDescription", "ChargePeriodEnd", "ChargePeriodStart", "ContractedCost", "EffectiveCost",
	"HostProviderName", "InvoiceIssuerName", "ListCost", "PricingQuantity", "PricingUnit", "ProviderName", "PublisherName", "ServiceCategory", "ServiceName",
	"ServiceProviderName"}

// focusRows reads a FOCUS 1.3 CSV into maps by column.
func focusRows(t *testing.T, doc []byte) []map[string]string {
	t.Helper()
	header, out := csvMaps(t, doc)
	for _, name := range focus13Mandatory {
		if !slices.Contains(header, name) {
			t.Fatalf("mandatory column %s is missing", name)
		}
	}
	return out
}

// csvMaps reads a CSV with rows into its header and a map by column of
// each row.
func csvMaps(t *testing.T, doc []byte) ([]string, []map[string]string) {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(doc)).ReadAll()
	if err != nil || len(recs) < 2 {
		t.Fatalf("not a CSV with rows: %v", err)
	}
	var out []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, name := range recs[0] {
			m[name] = r[i]
		}
		out = append(out, m)
	}
	return recs[0], out
}

// TestFocus13SplitAllocation: two days of splitDay's cluster, the second
// without w2 (a team present one day only), exported with the window
// ending at noon of the second day (a partial last day), under each
// sharing rule, pass the split cost allocation requirements of FOCUS 1.3
// (AllocatedMethodId, AllocatedMethodDetails, AllocatedResourceId,
// AllocatedTags, and Data Generator-Calculated Split Cost Allocation
// Handling), row by row: every allocated charge of an origin charge has
// its dimensions and unit prices, their costs and quantities add up to
// it, their ratios to 1; the unallocated part alone has no
// AllocatedResourceId; each row's cost is its quantity at its price, and
// its period is clipped to the window. A workload whose name begins with
// = reaches the CSV guarded.
func TestFocus13SplitAllocation(t *testing.T) {
	day2 := splitDay()
	kept := day2[:0]
	for _, l := range day2 {
		if l.Workload != "w2" {
			l.Period = nov1.AddDate(0, 0, 1)
			if l.Workload == "w1" {
				l.Workload = "=HYPERLINK(\"x\")"
			}
			kept = append(kept, l)
		}
	}
	end := nov1.Add(36 * time.Hour)
	for _, rule := range []struct {
		mode  Mode
		scope Scope
	}{{None, ScopeCluster}, {Weighted, ScopeNode}, {Weighted, ScopePool}, {Even, ScopeCluster}} {
		var b bytes.Buffer
		f, err := NewFocus(&b, FocusOptions{Encoding: "csv", Account: "gpu-platform", From: nov1, To: end, Mode: rule.mode, Scope: rule.scope})
		if err != nil {
			t.Fatal(err)
		}
		var bill float64
		for _, day := range [][]Line{splitDay(), kept} {
			Share(day, rule.mode, rule.scope)
			for _, l := range day {
				bill += l.HeldUSD
			}
			if err := f.Write(day); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		rows := focusRows(t, b.Bytes())
		cents := checkSplit(t, string(rule.mode)+" by "+string(rule.scope), rows, end)
		if want := int64(math.Round(bill * 100)); cents != want || f.TotalCents() != want {
			t.Errorf("%s by %s: BilledCost sums to %d cents, the bill is %d", rule.mode, rule.scope, cents, want)
		}
	}
}

// checkSplit checks the rows of a FOCUS 1.3 export against the split
// cost allocation requirements and returns the sum of their BilledCost.
func checkSplit(t *testing.T, what string, rows []map[string]string, end time.Time) int64 {
	t.Helper()
	type origin struct {
		ratio, quantity, cost float64
		first                 map[string]string
	}
	origins := map[string]*origin{}
	var cents int64
	for i, r := range rows {
		where := what + ": row " + strconv.Itoa(i+1)
		var details struct {
			Elements []map[string]any
		}
		if err := json.Unmarshal([]byte(r["AllocatedMethodDetails"]), &details); err != nil || len(details.Elements) != 1 || r["AllocatedMethodId"] == "" {
			t.Fatalf("%s: AllocatedMethodId %q, AllocatedMethodDetails %q: %v", where, r["AllocatedMethodId"], r["AllocatedMethodDetails"], err)
		}
		e := details.Elements[0]
		ratio, ok := e["AllocatedRatio"].(float64)
		if _, q := e["UsageQuantity"]; !ok || q && e["UsageUnit"] != "GPU-Hours" {
			t.Errorf("%s: Elements %v", where, e)
		}
		unallocated := r["x_AllocatedPart"] == PartUnallocated
		if (r["AllocatedResourceId"] == "") != unallocated || (r["AllocatedResourceName"] == "") != unallocated || (r["AllocatedTags"] == "") != unallocated {
			t.Errorf("%s: a %s part with AllocatedResourceId %q", where, r["x_AllocatedPart"], r["AllocatedResourceId"])
		}
		var tags, allocTags map[string]any
		if err := json.Unmarshal([]byte(r["Tags"]), &tags); err != nil {
			t.Errorf("%s: Tags %q", where, r["Tags"])
		}
		if !unallocated {
			if err := json.Unmarshal([]byte(r["AllocatedTags"]), &allocTags); err != nil {
				t.Errorf("%s: AllocatedTags %q", where, r["AllocatedTags"])
			}
		}
		for k := range allocTags {
			if _, dup := tags[k]; dup {
				t.Errorf("%s: AllocatedTags repeats the Tags key %s", where, k)
			}
		}
		for _, name := range []string{"ServiceProviderName", "HostProviderName", "ProviderName", "PublisherName", "InvoiceIssuerName", "SubAccountId", "SubAccountName", "SubAccountType"} {
			if r[name] == "" {
				t.Errorf("%s: %s is null", where, name)
			}
		}
		if strings.HasPrefix(r["AllocatedResourceName"], "=") || strings.HasPrefix(r["x_Workload"], "=") {
			t.Errorf("%s: a formula reaches the CSV: %q", where, r["AllocatedResourceName"])
		}
		billed, _ := strconv.ParseFloat(r["BilledCost"], 64)
		q, _ := strconv.ParseFloat(r["PricingQuantity"], 64)
		// splitDay's lines used half their hours, were idle a quarter
		// and drew 0.1 kWh an hour: so does each part of them.
		for name, want := range map[string]float64{"x_UsedGPUHours": q / 2, "x_IdleGPUHours": q / 4, "x_EnergyKWh": q / 10, "x_UtilizationPct": 50} {
			if v, err := strconv.ParseFloat(r[name], 64); err != nil || math.Abs(v-want) > 1e-6*math.Max(1, want) {
				t.Errorf("%s: %s %q, want %v", where, name, r[name], want)
			}
		}
		if want := allocTagsOf(r); r["AllocatedTags"] != want {
			t.Errorf("%s: AllocatedTags %s, want %s", where, r["AllocatedTags"], want)
		}
		price, _ := strconv.ParseFloat(r["ListUnitPrice"], 64)
		if math.Abs(billed-q*price) > 0.01+1e-9 || r["ListCost"] != r["BilledCost"] || r["EffectiveCost"] != r["BilledCost"] || r["ConsumedQuantity"] != r["PricingQuantity"] {
			t.Errorf("%s: BilledCost %v for %v h at %v, ListCost %s", where, billed, q, price, r["ListCost"])
		}
		if start, _ := time.Parse(time.RFC3339, r["ChargePeriodStart"]); start.Add(24*time.Hour).After(end) && r["ChargePeriodEnd"] != end.Format(focusTime) {
			t.Errorf("%s: the partial day ends at %s, not the window's end", where, r["ChargePeriodEnd"])
		}
		cents += int64(math.Round(billed * 100))
		k := r["ResourceId"] + " " + r["x_GPUModel"] + " " + r["ChargePeriodStart"]
		o := origins[k]
		if o == nil {
			o = &origin{first: r}
			origins[k] = o
		}
		o.ratio, o.quantity, o.cost = o.ratio+ratio, o.quantity+q, o.cost+billed
		for _, dim := range []string{"ChargeDescription", "ResourceId", "ResourceName", "ResourceType", "SubAccountId", "SubAccountName", "SubAccountType",
			"ServiceName", "ServiceCategory", "ChargePeriodStart", "ChargePeriodEnd", "BillingPeriodStart", "BillingPeriodEnd", "Tags", "ListUnitPrice",
			"ContractedUnitPrice", "AllocatedMethodId", "BillingCurrency", "ChargeCategory", "ChargeFrequency", "PricingUnit"} {
			if r[dim] != o.first[dim] {
				t.Errorf("%s: %s %q differs from its origin's other allocated charges' %q", where, dim, r[dim], o.first[dim])
			}
		}
	}
	for k, o := range origins {
		price, _ := strconv.ParseFloat(o.first["ListUnitPrice"], 64)
		if math.Abs(o.ratio-1) > 1e-9 || math.Abs(o.cost-o.quantity*price) > 0.005+1e-9 {
			t.Errorf("%s: origin %s: ratios sum to %v; $%v for %v h at $%v", what, k, o.ratio, o.cost, o.quantity, price)
		}
	}
	return cents
}

// allocTagsOf is what a row's AllocatedTags must be: its workload (a held
// part's) and its team, under seedance's prefix; none for the unallocated
// part. A shared part is named by its team.
func allocTagsOf(r map[string]string) string {
	switch r["x_AllocatedPart"] {
	case PartUnallocated:
		return ""
	case PartSharedIdle:
		team := strings.TrimPrefix(r["AllocatedResourceName"], "team=")
		if r["AllocatedResourceId"] != "c/team="+team {
			return "AllocatedResourceId " + r["AllocatedResourceId"]
		}
		return `{"seedance.io/team":"` + team + `"}`
	}
	team := map[string]string{"w1": "ml", "w2": "cv", "w3": "ml", "'=HYPERLINK(\"x\")": "ml"}[r["x_Workload"]]
	w, _ := json.Marshal(strings.TrimPrefix(r["x_Workload"], "'"))
	return `{"seedance.io/team":"` + team + `","seedance.io/workload":` + string(w) + `}`
}

// TestFocus13Parquet: the Parquet encoding of the 1.3 rows holds every
// column of the CSV, costs as Decimal(18, 2), the mandatory columns
// required (never null) but ChargeClass, the nullable allocation columns
// optional, and the CSV's rows with the same BilledCost, row by row.
func TestFocus13Parquet(t *testing.T) {
	docs := map[string]*bytes.Buffer{}
	for _, enc := range FocusFormats {
		b := &bytes.Buffer{}
		f, err := NewFocus(b, FocusOptions{Encoding: enc, Account: "gpu-platform", From: nov1, To: nov1.AddDate(0, 0, 1), Mode: Weighted, Scope: ScopePool})
		if err != nil {
			t.Fatal(err)
		}
		day := splitDay()
		Share(day, Weighted, ScopePool)
		if err := f.Write(day); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		docs[enc] = b
	}
	rows := focusRows(t, docs["csv"].Bytes())
	pf, err := parquet.OpenFile(bytes.NewReader(docs["parquet"].Bytes()), int64(docs["parquet"].Len()))
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string]parquet.Field{}
	for _, fd := range pf.Schema().Fields() {
		fields[fd.Name()] = fd
	}
	for _, name := range Focus13Columns {
		fd, ok := fields[name]
		switch {
		case !ok:
			t.Errorf("column %s is missing", name)
		case slices.Contains(focus13Mandatory, name) && name != "ChargeClass" && fd.Optional():
			t.Errorf("mandatory column %s may be null", name)
		case strings.HasPrefix(name, "AllocatedResource") && !fd.Optional():
			t.Errorf("%s is null on the unallocated part, yet required", name)
		case strings.HasSuffix(name, "Cost") && !strings.HasPrefix(name, "x_") && !isDecimal(fd):
			t.Errorf("%s is %v, not a decimal", name, fd.Type())
		}
	}
	type billed struct {
		BilledCost int64   `parquet:"BilledCost,decimal(2:18)"`
		Part       string  `parquet:"x_AllocatedPart"`
		Workload   *string `parquet:"x_Workload,optional"`
	}
	got, err := parquet.Read[billed](bytes.NewReader(docs["parquet"].Bytes()), int64(docs["parquet"].Len()))
	if err != nil || len(got) != len(rows) {
		t.Fatalf("%d Parquet rows, %d CSV rows: %v", len(got), len(rows), err)
	}
	for i, r := range rows {
		c, _ := strconv.ParseFloat(r["BilledCost"], 64)
		if got[i].BilledCost != int64(math.Round(c*100)) || got[i].Part != r["x_AllocatedPart"] {
			t.Errorf("row %d: Parquet %+v, CSV %s %s", i+1, got[i], r["BilledCost"], r["x_AllocatedPart"])
		}
		// A held part names its workload; the others' x_Workload is null
		// (an empty cell in the CSV).
		if w := got[i].Workload; (w == nil) != (r["x_Workload"] == "") || w != nil && *w != r["x_Workload"] || (w == nil) == (got[i].Part == PartHeld) {
			t.Errorf("row %d: a %s part's x_Workload %v, CSV %q", i+1, got[i].Part, w, r["x_Workload"])
		}
	}
}

// isDecimal says whether a Parquet column is a Decimal with two places.
func isDecimal(fd parquet.Field) bool {
	lt := fd.Type().LogicalType()
	if lt == nil {
		return false
	}
	d, ok := lt.Value.(*format.DecimalType)
	return ok && d.Scale == 2
}

// TestRowObjectsAsMaps: the rows' Tags and AllocatedMethodDetails, encoded
// from structs, are byte for byte what the maps they replaced encoded to.
func TestRowObjectsAsMaps(t *testing.T) {
	for _, x := range []float64{0, 1, 0.1234567891, 1e-7, 12345.678, 2.5e21} {
		got := jsonObject(methodDetails{Elements: []methodElement{{AllocatedRatio: x, UsageQuantity: x * 3, UsageUnit: gpuHours}}, Part: PartHeld})
		want := jsonObject(map[string]any{"Elements": []map[string]any{{"AllocatedRatio": x, "UsageUnit": gpuHours, "UsageQuantity": x * 3}}, "x_AllocatedPart": PartHeld})
		if got != want {
			t.Fatalf("details %s, the map gave %s", got, want)
		}
	}
	if got, want := jsonObject(clusterTags{`prod "a"`}), jsonObject(map[string]any{"seedance.io/cluster": `prod "a"`}); got != want {
		t.Fatalf("tags %s, the map gave %s", got, want)
	}
}
