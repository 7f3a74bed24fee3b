package chargeback

import (
	"bytes"
	"encoding/json"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// focus13Rule is one requirement of the FOCUS 1.3 Cost and Usage dataset
// that applies to seedance's export, as the specification states it
// (FinOps-Open-Cost-and-Usage-Spec/FOCUS_Spec at c67b95bd,
// specification/datasets/cost_and_usage/columns/COLUMN.md and
// specification/attributes; the requirements model's rules for them,
// specification/requirements_model/model_rules, say the same in JSON).
// ok reports whether one row meets it; a rule whose condition a row does
// not meet is met by it.
type focus13Rule struct {
	column, must string
	ok           func(r map[string]string) bool
}

// The attributes' formats (NumericFormat, DateTimeFormat, UnitFormat,
// CurrencyFormat: ISO 4217), as regular expressions.
var (
	numericFormat  = regexp.MustCompile(`^-?(\d+(\.\d+)?|\.\d+)([eE][-+]?\d+)?$`)
	dateTimeFormat = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$`)
	unitFormat     = regexp.MustCompile(`^[A-Za-z]+(-[A-Z][a-z]+s|/[A-Z][a-z]+)?$`)
	currencyFormat = regexp.MustCompile(`^[A-Z]{3}$`)
)

func notNull(c string) func(map[string]string) bool {
	return func(r map[string]string) bool { return r[c] != "" }
}

func isNull(c string) func(map[string]string) bool {
	return func(r map[string]string) bool { return r[c] == "" }
}

// orNull is f, or true where the column is null.
func orNull(c string, f func(string) bool) func(map[string]string) bool {
	return func(r map[string]string) bool { return r[c] == "" || f(r[c]) }
}

// when is then on the rows that meet cond, true on the others.
func when(cond, then func(map[string]string) bool) func(map[string]string) bool {
	return func(r map[string]string) bool { return !cond(r) || then(r) }
}

func usage(r map[string]string) bool {
	return r["ChargeCategory"] == "Usage" && r["ChargeClass"] != "Correction"
}

func decimalValue(v string) bool { return numericFormat.MatchString(v) }

func nonNegative(v string) bool { f, err := strconv.ParseFloat(v, 64); return err == nil && f >= 0 }

func dateTime(v string) bool {
	_, err := time.Parse(time.RFC3339, v)
	return err == nil && dateTimeFormat.MatchString(v)
}

// keyValue is KeyValueFormat: a JSON object whose values are numbers,
// strings, booleans or null, never objects or arrays.
func keyValue(v string) bool {
	var m map[string]any
	if json.Unmarshal([]byte(v), &m) != nil || m == nil {
		return false
	}
	for _, x := range m {
		switch x.(type) {
		case map[string]any, []any:
			return false
		}
	}
	return true
}

func jsonObjectValue(v string) bool {
	var m map[string]any
	return json.Unmarshal([]byte(v), &m) == nil && m != nil
}

func oneOf(values ...string) func(string) bool {
	return func(v string) bool { return slices.Contains(values, v) }
}

// product is "cost MUST equal the product of price and quantity", to the
// cent the cost is rounded to (docs/chargeback.md: each part is within a
// cent of its exact cost).
func product(cost, price, quantity string) func(map[string]string) bool {
	return func(r map[string]string) bool {
		if r[price] == "" || r[quantity] == "" {
			return true
		}
		c, _ := strconv.ParseFloat(r[cost], 64)
		p, _ := strconv.ParseFloat(r[price], 64)
		q, _ := strconv.ParseFloat(r[quantity], 64)
		return math.Abs(c-p*q) <= 0.01+1e-6*math.Abs(c)
	}
}

func same(a, b string) func(map[string]string) bool {
	return func(r map[string]string) bool { return r[a] == r[b] }
}

// stringColumn is a String column's type and StringHandling rules: text,
// valid UTF-8 (a CSV holds only strings; the Parquet test checks types).
func stringColumn(c string) []focus13Rule {
	return []focus13Rule{{c, "MUST be of type String and conform to StringHandling", orNull(c, utf8.ValidString)}}
}

// decimalColumn is a Decimal column's type and NumericFormat rules.
func decimalColumn(c string) []focus13Rule {
	return []focus13Rule{{c, "MUST be of type Decimal and conform to NumericFormat", orNull(c, decimalValue)}}
}

// mandatoryString is a Mandatory, not-null String column's rules.
func mandatoryString(c string) []focus13Rule {
	return append(stringColumn(c), focus13Rule{c, "MUST NOT be null", notNull(c)})
}

// mandatoryCost is a Mandatory cost column's rules.
func mandatoryCost(c string) []focus13Rule {
	return append(decimalColumn(c), focus13Rule{c, "MUST NOT be null", notNull(c)},
		focus13Rule{c, "MUST be a valid decimal value", orNull(c, decimalValue)})
}

// focus13Rules are the column requirements of FOCUS 1.3 that apply to
// the export (docs/chargeback.md lists those that do not, and why).
func focus13Rules() []focus13Rule {
	var rules []focus13Rule
	add := func(rs ...focus13Rule) { rules = append(rules, rs...) }
	for _, c := range []string{"BilledCost", "EffectiveCost", "ListCost", "ContractedCost"} {
		add(mandatoryCost(c)...)
	}
	add(focus13Rule{"ListCost", "MUST equal the product of ListUnitPrice and PricingQuantity", product("ListCost", "ListUnitPrice", "PricingQuantity")},
		focus13Rule{"ContractedCost", "MUST equal the product of ContractedUnitPrice and PricingQuantity", product("ContractedCost", "ContractedUnitPrice", "PricingQuantity")})
	for _, c := range []string{"ListUnitPrice", "ContractedUnitPrice"} {
		add(decimalColumn(c)...)
		add(focus13Rule{c, `MUST NOT be null when ChargeCategory is "Usage" and ChargeClass is not "Correction"`, when(usage, notNull(c))},
			focus13Rule{c, "MUST NOT be null when SkuPriceId is not null", when(notNull("SkuPriceId"), notNull(c))},
			focus13Rule{c, "MUST be a non-negative decimal value", orNull(c, nonNegative)})
	}
	add(focus13Rule{"ContractedUnitPrice", "MUST equal ListUnitPrice when no negotiated pricing terms apply", same("ContractedUnitPrice", "ListUnitPrice")})
	for _, c := range []string{"PricingQuantity", "ConsumedQuantity"} {
		add(decimalColumn(c)...)
		add(focus13Rule{c, `MUST NOT be null when ChargeCategory is "Usage" and ChargeClass is not "Correction"`, when(usage, notNull(c))})
	}
	for _, c := range []string{"PricingUnit", "ConsumedUnit"} {
		add(stringColumn(c)...)
		add(focus13Rule{c, "MUST conform to UnitFormat", orNull(c, unitFormat.MatchString)},
			focus13Rule{c, "MUST NOT be null when its quantity is not null", when(notNull(strings.TrimSuffix(c, "Unit")+"Quantity"), notNull(c))})
	}
	for _, c := range []string{"BillingPeriodStart", "BillingPeriodEnd", "ChargePeriodStart", "ChargePeriodEnd"} {
		add(focus13Rule{c, "MUST be of type Date/Time, conform to DateTimeFormat and not be null", func(r map[string]string) bool { return dateTime(r[c]) }})
	}
	add(focus13Rule{"ChargePeriodEnd", "MUST be the exclusive end bound of the charge's period: after ChargePeriodStart", func(r map[string]string) bool { return r["ChargePeriodEnd"] > r["ChargePeriodStart"] }},
		focus13Rule{"BillingPeriodEnd", "MUST be the exclusive end bound of the billing period: after BillingPeriodStart", func(r map[string]string) bool { return r["BillingPeriodEnd"] > r["BillingPeriodStart"] }})
	for _, c := range []string{"BillingAccountId", "BillingAccountName", "ChargeDescription", "HostProviderName", "InvoiceIssuerName", "ProviderName",
		"PublisherName", "ServiceName", "ServiceProviderName"} {
		add(mandatoryString(c)...)
	}
	add(focus13Rule{"BillingCurrency", "MUST conform to CurrencyFormat (ISO 4217) and not be null", func(r map[string]string) bool { return currencyFormat.MatchString(r["BillingCurrency"]) }},
		focus13Rule{"ChargeCategory", "MUST be one of the allowed values and not be null", func(r map[string]string) bool {
			return oneOf("Usage", "Purchase", "Tax", "Credit", "Adjustment")(r["ChargeCategory"])
		}},
		focus13Rule{"ChargeClass", `MUST be "Correction" when not null`, orNull("ChargeClass", oneOf("Correction"))},
		focus13Rule{"ChargeClass", "MUST be null when the charge does not correct a closed billing period", isNull("ChargeClass")},
		focus13Rule{"ChargeFrequency", "MUST be one of the allowed values and not be null", func(r map[string]string) bool {
			return oneOf("One-Time", "Recurring", "Usage-Based")(r["ChargeFrequency"])
		}},
		focus13Rule{"ChargeFrequency", `MUST NOT be "Usage-Based" when ChargeCategory is "Purchase"`, when(func(r map[string]string) bool { return r["ChargeCategory"] == "Purchase" },
			func(r map[string]string) bool { return r["ChargeFrequency"] != "Usage-Based" })},
		focus13Rule{"ServiceCategory", "MUST be one of the allowed values and not be null", func(r map[string]string) bool {
			return oneOf("AI and Machine Learning", "Analytics", "Business Applications", "Compute", "Databases", "Developer Tools", "Multicloud",
				"Identity", "Integration", "Internet of Things", "Management and Governance", "Media", "Migration", "Mobile", "Networking", "Security",
				"Storage", "Web", "Other")(r["ServiceCategory"])
		}})
	for _, c := range []string{"ResourceId", "ResourceName", "ResourceType", "SkuId", "SkuPriceId", "SubAccountId", "SubAccountName", "SubAccountType"} {
		add(stringColumn(c)...)
	}
	add(focus13Rule{"ResourceName", "MUST NOT be null when ResourceId is not null", when(notNull("ResourceId"), notNull("ResourceName"))},
		focus13Rule{"ResourceType", "MUST NOT be null when ResourceId is not null", when(notNull("ResourceId"), notNull("ResourceType"))},
		focus13Rule{"SkuId", `MUST NOT be null when ChargeCategory is "Usage" and ChargeClass is not "Correction"`, when(usage, notNull("SkuId"))},
		focus13Rule{"SkuPriceId", `MUST NOT be null when ChargeCategory is "Usage" and ChargeClass is not "Correction"`, when(usage, notNull("SkuPriceId"))},
		focus13Rule{"SubAccountName", "MUST NOT be null when SubAccountId is not null", when(notNull("SubAccountId"), notNull("SubAccountName"))},
		focus13Rule{"SubAccountName", "MUST be null when SubAccountId is null", when(isNull("SubAccountId"), isNull("SubAccountName"))},
		focus13Rule{"SubAccountType", "MUST NOT be null when SubAccountId is not null", when(notNull("SubAccountId"), notNull("SubAccountType"))},
		focus13Rule{"SubAccountType", "MUST be null when SubAccountId is null", when(isNull("SubAccountId"), isNull("SubAccountType"))},
		focus13Rule{"Tags", "MUST conform to KeyValueFormat", orNull("Tags", keyValue)})
	return append(rules, focus13AllocationRules()...)
}

// focus13AllocationRules are the split cost allocation columns' rules
// (every row of the export is an allocated charge; checkSplit checks the
// rules across an origin's rows).
func focus13AllocationRules() []focus13Rule {
	var rules []focus13Rule
	for _, c := range []string{"AllocatedMethodId", "AllocatedResourceId", "AllocatedResourceName"} {
		rules = append(rules, stringColumn(c)...)
	}
	unallocated := func(r map[string]string) bool { return r["x_AllocatedPart"] == PartUnallocated }
	return append(rules,
		focus13Rule{"AllocatedMethodId", "MUST NOT be null when a charge is related to a split cost allocation", notNull("AllocatedMethodId")},
		focus13Rule{"AllocatedMethodDetails", "MUST be of type String, conform to StringHandling and JsonObjectFormat", orNull("AllocatedMethodDetails", jsonObjectValue)},
		focus13Rule{"AllocatedResourceId", "MUST be null when a charge represents the unallocated portion of the origin charge", when(unallocated, isNull("AllocatedResourceId"))},
		focus13Rule{"AllocatedResourceId", "MUST NOT be null when a charge represents the allocated portion of the origin charge",
			when(func(r map[string]string) bool { return !unallocated(r) }, notNull("AllocatedResourceId"))},
		focus13Rule{"AllocatedResourceName", "MUST be null when AllocatedResourceId is null", when(isNull("AllocatedResourceId"), isNull("AllocatedResourceName"))},
		focus13Rule{"AllocatedResourceName", "MUST NOT be null when AllocatedResourceId is not null", when(notNull("AllocatedResourceId"), notNull("AllocatedResourceName"))},
		focus13Rule{"AllocatedTags", "MUST be a JSON object and conform to KeyValueFormat", orNull("AllocatedTags", keyValue)},
		focus13Rule{"AllocatedTags", "MUST NOT include resource tags already present in Tags", func(r map[string]string) bool {
			var tags, own map[string]any
			_ = json.Unmarshal([]byte(r["Tags"]), &tags)
			_ = json.Unmarshal([]byte(r["AllocatedTags"]), &own)
			for k := range own {
				if _, dup := tags[k]; dup {
					return false
				}
			}
			return true
		}})
}

// focus13Present are the columns the dataset MUST hold: the mandatory
// ones, ChargeFrequency (recommended), and the conditional ones whose condition seedance meets (it
// measures usage, has sub accounts (clusters) and resources (nodes),
// prices from a price list, and splits cost).
var focus13Present = append(slices.Clone(focus13Mandatory), "ChargeFrequency", "ListUnitPrice", "ContractedUnitPrice", "ConsumedQuantity", "ConsumedUnit",
	"ResourceId", "ResourceName", "ResourceType", "SkuId", "SkuPriceId", "SubAccountId", "SubAccountName", "SubAccountType", "Tags",
	"AllocatedMethodId", "AllocatedMethodDetails", "AllocatedResourceId", "AllocatedResourceName", "AllocatedTags")

// focus13Violations is, for each rule a row breaks, "column: rule (row N)".
func focus13Violations(header []string, rows []map[string]string) []string {
	var out []string
	for _, c := range focus13Present {
		if !slices.Contains(header, c) {
			out = append(out, c+": MUST be present")
		}
	}
	for _, c := range header {
		if !slices.Contains(focus13Present, c) && !strings.HasPrefix(c, "x_") {
			out = append(out, c+": a custom column MUST be prefixed x_ (ColumnHandling)")
		}
	}
	for _, rule := range focus13Rules() {
		for i, r := range rows {
			if !rule.ok(r) {
				out = append(out, rule.column+": "+rule.must+" (row "+strconv.Itoa(i+1)+")")
				break
			}
		}
	}
	return out
}

// TestFocus13Requirements exports two days of splitDay's cluster under
// each sharing rule and checks every row against every FOCUS 1.3
// requirement that applies to it, and the dataset against the columns it
// must hold.
func TestFocus13Requirements(t *testing.T) {
	for _, rule := range []struct {
		mode  Mode
		scope Scope
	}{{None, ScopeCluster}, {Weighted, ScopeNode}, {Weighted, ScopePool}, {Even, ScopeCluster}} {
		header, rows := focus13Export(t, rule.mode, rule.scope)
		for _, v := range focus13Violations(header, rows) {
			t.Errorf("%s by %s: %s", rule.mode, rule.scope, v)
		}
	}
}

// TestFocus13RulesCatchBreaks breaks one export row at a time, as a bug
// would, and checks that a rule names the break: the rules are not
// vacuous.
func TestFocus13RulesCatchBreaks(t *testing.T) {
	header, rows := focus13Export(t, Weighted, ScopeNode)
	breaks := map[string]func(r map[string]string){
		"ProviderName: MUST NOT be null":                               func(r map[string]string) { r["ProviderName"] = "" },
		"BilledCost: MUST be of type Decimal":                          func(r map[string]string) { r["BilledCost"] = "1,50" },
		"ListCost: MUST equal the product":                             func(r map[string]string) { r["ListCost"] = "999.99" },
		"ChargePeriodStart: MUST be of type Date/Time":                 func(r map[string]string) { r["ChargePeriodStart"] = "2026-11-01 00:00:00" },
		"ChargeCategory: MUST be one of the allowed values":            func(r map[string]string) { r["ChargeCategory"] = "usage" },
		"ChargeClass: MUST be null":                                    func(r map[string]string) { r["ChargeClass"] = "Correction" },
		"PricingUnit: MUST conform to UnitFormat":                      func(r map[string]string) { r["PricingUnit"] = "GPU hours" },
		"SubAccountType: MUST NOT be null when SubAccountId":           func(r map[string]string) { r["SubAccountType"] = "" },
		"SkuPriceId: MUST NOT be null":                                 func(r map[string]string) { r["SkuPriceId"] = "" },
		"Tags: MUST conform to KeyValueFormat":                         func(r map[string]string) { r["Tags"] = `{"a":{"b":1}}` },
		"AllocatedTags: MUST NOT include resource tags":                func(r map[string]string) { r["AllocatedTags"] = r["Tags"] },
		"AllocatedResourceName: MUST be null when AllocatedResourceId": func(r map[string]string) { r["AllocatedResourceId"] = "" },
		"ListUnitPrice: MUST be a non-negative decimal value":          func(r map[string]string) { r["ListUnitPrice"] = "-1" },
		"ContractedUnitPrice: MUST equal ListUnitPrice":                func(r map[string]string) { r["ContractedUnitPrice"] = "0.5" },
	}
	for want, brk := range breaks {
		r := map[string]string{}
		for k, v := range rows[0] {
			r[k] = v
		}
		brk(r)
		got := strings.Join(focus13Violations(header, []map[string]string{r}), "\n")
		if !strings.Contains(got, want) {
			t.Errorf("breaking %q: the rules say %q", want, got)
		}
	}
	if v := focus13Violations(slices.DeleteFunc(slices.Clone(header), func(c string) bool { return c == "PublisherName" }), rows); !slices.Contains(v, "PublisherName: MUST be present") {
		t.Errorf("a dataset without PublisherName: %v", v)
	}
}

// focus13Export is the CSV export of two days of splitDay's cluster (the
// second without w2) under a sharing rule: its header and rows.
func focus13Export(t *testing.T, mode Mode, scope Scope) ([]string, []map[string]string) {
	t.Helper()
	var b bytes.Buffer
	f, err := NewFocus(&b, FocusOptions{Encoding: "csv", Account: "gpu-platform", From: nov1, To: nov1.Add(36 * time.Hour), Mode: mode, Scope: scope})
	if err != nil {
		t.Fatal(err)
	}
	day2 := splitDay()
	kept := day2[:0]
	for _, l := range day2 {
		if l.Workload != "w2" {
			l.Period = nov1.AddDate(0, 0, 1)
			kept = append(kept, l)
		}
	}
	for _, day := range [][]Line{splitDay(), kept} {
		Share(day, mode, scope)
		if err := f.Write(day); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	header, _, _ := strings.Cut(b.String(), "\n")
	return strings.Split(header, ","), focusRows(t, b.Bytes())
}
