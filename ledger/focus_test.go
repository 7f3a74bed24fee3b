package ledger

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/seedance/seedance/chargeback"
	"github.com/seedance/seedance/pricing"
	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source/sim"
)

// focusMandatory are FOCUS 1.2's mandatory columns, as its specification
// lists them (specification/columns, Feature level Mandatory): written
// out here, not taken from the code under test.
var focusMandatory = []string{"BilledCost", "BillingAccountId", "BillingAccountName", "BillingCurrency", "BillingPeriodEnd", "BillingPeriodStart",
	"ChargeCategory", "ChargeClass", "ChargeDescription", "ChargePeriodEnd", "ChargePeriodStart", "ContractedCost", "EffectiveCost",
	"InvoiceIssuerName", "ListCost", "PricingQuantity", "PricingUnit", "ProviderName", "PublisherName", "ServiceCategory", "ServiceName"}

// focusOptional are the other FOCUS columns the export writes.
var focusOptional = []string{"ConsumedQuantity", "ConsumedUnit", "ResourceId", "ResourceName", "ResourceType", "SubAccountId", "SubAccountName", "Tags"}

var (
	focusDate    = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$`) // DateTimeFormat
	focusDecimal = regexp.MustCompile(`^-?\d+(\.\d+)?$`)                        // NumericFormat: no exponent
	serviceCats  = []string{"AI and Machine Learning", "Analytics", "Business Applications", "Compute", "Databases", "Developer Tools", "Multicloud",
		"Identity", "Integration", "Internet of Things", "Management and Governance", "Media", "Migration", "Mobile", "Networking", "Security", "Storage", "Web", "Other"}
)

// checkFocus checks a FOCUS CSV against the specification's column
// definitions and returns the sum of its BilledCost, in cents.
func checkFocus(t *testing.T, doc []byte) (cents int64, rows int) {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(doc)).ReadAll()
	if err != nil || len(recs) < 2 {
		t.Fatalf("not a CSV with rows: %v (%d records)", err, len(recs))
	}
	col := map[string]int{}
	for i, name := range recs[0] {
		col[name] = i
		if !slices.Contains(focusMandatory, name) && !slices.Contains(focusOptional, name) && !strings.HasPrefix(name, "x_") {
			t.Errorf("column %s is neither FOCUS's nor x_-prefixed", name)
		}
	}
	for _, name := range focusMandatory {
		if _, ok := col[name]; !ok {
			t.Fatalf("mandatory column %s is missing", name)
		}
	}
	for _, r := range recs[1:] {
		v := func(name string) string { return r[col[name]] }
		for _, name := range []string{"BilledCost", "ContractedCost", "EffectiveCost", "ListCost", "PricingQuantity", "ConsumedQuantity"} {
			if !focusDecimal.MatchString(v(name)) {
				t.Fatalf("%s %q is not a decimal", name, v(name))
			}
		}
		for _, name := range []string{"BillingAccountId", "BillingAccountName", "ChargeDescription", "InvoiceIssuerName", "ProviderName", "PublisherName", "ServiceName", "PricingUnit", "ConsumedUnit"} {
			if v(name) == "" {
				t.Fatalf("%s is null", name)
			}
		}
		for _, name := range []string{"BillingPeriodStart", "BillingPeriodEnd", "ChargePeriodStart", "ChargePeriodEnd"} {
			if !focusDate.MatchString(v(name)) {
				t.Fatalf("%s %q is not YYYY-MM-DDTHH:mm:ssZ", name, v(name))
			}
		}
		if v("BillingPeriodStart") > v("ChargePeriodStart") || v("ChargePeriodStart") >= v("ChargePeriodEnd") || v("ChargePeriodEnd") > v("BillingPeriodEnd") {
			t.Fatalf("periods: billing %s–%s, charge %s–%s", v("BillingPeriodStart"), v("BillingPeriodEnd"), v("ChargePeriodStart"), v("ChargePeriodEnd"))
		}
		if !regexp.MustCompile(`^[A-Z]{3}$`).MatchString(v("BillingCurrency")) || !slices.Contains([]string{"Usage", "Purchase", "Tax", "Credit", "Adjustment"}, v("ChargeCategory")) ||
			(v("ChargeClass") != "" && v("ChargeClass") != "Correction") || !slices.Contains(serviceCats, v("ServiceCategory")) {
			t.Fatalf("allowed values: %s %s %q %s", v("BillingCurrency"), v("ChargeCategory"), v("ChargeClass"), v("ServiceCategory"))
		}
		var tags map[string]any
		if err := json.Unmarshal([]byte(v("Tags")), &tags); err != nil {
			t.Fatalf("Tags %q: %v", v("Tags"), err)
		}
		for k, tv := range tags {
			switch tv.(type) {
			case map[string]any, []any:
				t.Fatalf("Tags key %s is an object or array", k)
			}
		}
		c, _ := strconv.ParseFloat(v("BilledCost"), 64)
		cents += int64(math.Round(c * 100))
	}
	return cents, len(recs) - 1
}

// TestFocusExport: the FOCUS rows of a window pass the conformance checks
// written from the specification, and their BilledCost sums to the
// report's total for the same window and sharing rule, to the cent.
func TestFocusExport(t *testing.T) {
	l := openDSN(t, t.TempDir()+"/l.db")
	ctx := context.Background()
	p := cluster(t)
	if _, err := l.Update(ctx, UpdateSpec{Inputs: []*profile.Profile{p}, Params: params()}); err != nil {
		t.Fatal(err)
	}
	since := p.StartedAt.Truncate(time.Hour).Add(time.Hour)
	for _, mode := range []chargeback.Mode{chargeback.None, chargeback.Weighted, chargeback.Even} {
		q := Query{Since: since, GroupBy: []string{"namespace"}, ShareIdle: mode, ShareIdleBy: chargeback.ScopeNode}
		var b bytes.Buffer
		var f *chargeback.Focus
		if _, err := l.Charges(ctx, q, func(w Window) (err error) {
			f, err = chargeback.NewFocus(&b, chargeback.FocusOptions{Version: "1.2", Encoding: "csv", Account: "gpu-platform", From: w.Start, To: w.End})
			return err
		}, f2(&f)); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		cents, rows := checkFocus(t, b.Bytes())
		q.Units = true
		r, err := l.Report(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if want := int64(math.Round(r.Chargeback.Total.CostUSD * 100)); cents != want || cents != f.TotalCents() || rows < 10 {
			t.Errorf("%s: BilledCost sums to %d cents over %d rows, the report's total is %d", mode, cents, rows, want)
		}
		sameWork(t, b.Bytes(), r, "x_Workload")
	}
}

// sameWork: the export's x_Work, summed by unit over its rows (each on a
// row of the workload that did it, held), equals the report's unit
// figures' work.
func sameWork(t *testing.T, export []byte, r *Report, heldBy string) {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(export)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, name := range recs[0] {
		col[name] = i
	}
	work := map[string]float64{}
	for _, row := range recs[1:] {
		x := row[col["x_Work"]]
		if x == "" {
			continue
		}
		var w map[string]float64
		if err := json.Unmarshal([]byte(x), &w); err != nil || row[col[heldBy]] == "" {
			t.Fatalf("x_Work %q on a row %s %q: %v", x, heldBy, row[col[heldBy]], err)
		}
		for unit, v := range w {
			work[unit] += v
		}
	}
	if len(r.Units) == 0 || len(work) != len(r.Units) {
		t.Fatalf("x_Work units %v, the report's %v", work, r.Units)
	}
	for unit, uf := range r.Units {
		if uf.Work == nil || math.Abs(work[unit]-*uf.Work) > 1e-6*math.Max(1, *uf.Work) {
			t.Errorf("x_Work %s sums to %v, the report's work is %v", unit, work[unit], uf.Work)
		}
	}
}

// f2 writes each day's lines to the export *f.
func f2(f **chargeback.Focus) func([]chargeback.Line) error {
	return func(day []chargeback.Line) error { return (*f).Write(day) }
}

// TestFocusParquet: the Parquet encoding holds every FOCUS column with the
// spec's types (costs Decimal, date/times UTC timestamps, strings), the
// mandatory columns required (never null) but ChargeClass, and the same
// rows as the CSV, whose BilledCost sums to the same total.
func TestFocusParquet(t *testing.T) {
	l := openDSN(t, t.TempDir()+"/l.db")
	ctx := context.Background()
	if _, err := l.Update(ctx, UpdateSpec{Inputs: []*profile.Profile{cluster(t)}, Params: params()}); err != nil {
		t.Fatal(err)
	}
	q := Query{GroupBy: []string{"namespace"}, ShareIdle: chargeback.Even, ShareIdleBy: chargeback.ScopeCluster}
	docs := map[string]*bytes.Buffer{}
	totals := map[string]int64{}
	for _, enc := range chargeback.FocusFormats {
		var b bytes.Buffer
		var f *chargeback.Focus
		if _, err := l.Charges(ctx, q, func(w Window) (err error) {
			f, err = chargeback.NewFocus(&b, chargeback.FocusOptions{Version: "1.2", Encoding: enc, Account: "gpu-platform", From: w.Start, To: w.End})
			return err
		}, f2(&f)); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		docs[enc], totals[enc] = &b, f.TotalCents()
	}
	csvCents, csvRows := checkFocus(t, docs["csv"].Bytes())
	pf, err := parquet.OpenFile(bytes.NewReader(docs["parquet"].Bytes()), int64(docs["parquet"].Len()))
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string]parquet.Field{}
	for _, fd := range pf.Schema().Fields() {
		fields[fd.Name()] = fd
	}
	for _, name := range append(append([]string{}, focusMandatory...), focusOptional...) {
		fd, ok := fields[name]
		switch {
		case !ok:
			t.Fatalf("column %s is missing", name)
		case slices.Contains(focusMandatory, name) && name != "ChargeClass" && fd.Optional():
			t.Errorf("mandatory column %s may be null", name)
		}
		var lt any
		if l := fd.Type().LogicalType(); l != nil {
			lt = l.Value
		}
		dec, isDec := lt.(*format.DecimalType)
		ts, isTS := lt.(*format.TimestampType)
		switch {
		case strings.HasSuffix(name, "Cost") && (!isDec || dec.Scale != 2):
			t.Errorf("%s is %v, not Decimal with scale 2", name, fd.Type())
		case strings.Contains(name, "Period") && (!isTS || !ts.IsAdjustedToUTC):
			t.Errorf("%s is %v, not a UTC timestamp", name, fd.Type())
		}
	}
	if pf.NumRows() != int64(csvRows) {
		t.Errorf("%d Parquet rows, %d CSV rows", pf.NumRows(), csvRows)
	}
	type billed struct {
		BilledCost int64   `parquet:"BilledCost,decimal(2:18)"`
		Workload   *string `parquet:"x_Workload,optional"`
	}
	rows, err := parquet.Read[billed](bytes.NewReader(docs["parquet"].Bytes()), int64(docs["parquet"].Len()))
	if err != nil {
		t.Fatal(err)
	}
	var cents int64
	nulls := 0
	for _, r := range rows {
		cents += r.BilledCost
		switch {
		case r.Workload == nil:
			nulls++
		case *r.Workload == "":
			t.Error("an empty x_Workload where a null belongs")
		}
	}
	// A null is an absent value in Parquet, an empty cell in the CSV: the
	// rows no workload held, in both.
	recs, err := csv.NewReader(bytes.NewReader(docs["csv"].Bytes())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	empty, col := 0, slices.Index(recs[0], "x_Workload")
	for _, r := range recs[1:] {
		if r[col] == "" {
			empty++
		}
	}
	if nulls != empty || nulls == 0 {
		t.Errorf("x_Workload: %d nulls in Parquet, %d empty cells in the CSV", nulls, empty)
	}
	if cents != csvCents || cents != totals["parquet"] || totals["csv"] != csvCents {
		t.Errorf("BilledCost: Parquet %d cents, CSV %d, the writers' totals %v", cents, csvCents, totals)
	}
}

// TestFocus13FollowsTheRule: the FOCUS 1.3 rows of a ledger window are
// split by the sharing rule asked for: every row names its method, the
// unallocated time goes to the groups of its scope as "shared idle" parts
// (none of it under none), each origin's ratios sum to 1, and BilledCost
// sums to the report's total under the same rule, to the cent.
func TestFocus13FollowsTheRule(t *testing.T) {
	l := openDSN(t, t.TempDir()+"/l.db")
	ctx := context.Background()
	if _, err := l.Update(ctx, UpdateSpec{Inputs: []*profile.Profile{cluster(t)}, Params: params()}); err != nil {
		t.Fatal(err)
	}
	for _, rule := range []struct {
		mode  chargeback.Mode
		scope chargeback.Scope
	}{{chargeback.None, chargeback.ScopeCluster}, {chargeback.Weighted, chargeback.ScopeNode}, {chargeback.Weighted, chargeback.ScopePool}, {chargeback.Even, chargeback.ScopeCluster}} {
		q := Query{GroupBy: []string{"namespace"}, ShareIdle: rule.mode, ShareIdleBy: rule.scope}
		var b bytes.Buffer
		var f *chargeback.Focus
		if _, err := l.Charges(ctx, q, func(w Window) (err error) {
			f, err = chargeback.NewFocus(&b, chargeback.FocusOptions{Encoding: "csv", Account: "gpu-platform", From: w.Start, To: w.End, Mode: q.ShareIdle, Scope: q.ShareIdleBy})
			return err
		}, f2(&f)); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(bytes.NewReader(b.Bytes())).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		col := map[string]int{}
		for i, name := range recs[0] {
			col[name] = i
		}
		var cents int64
		parts := map[string]int{}
		ratios := map[string]float64{}
		for _, r := range recs[1:] {
			if x := r[col["x_Work"]]; x != "" && r[col["x_AllocatedPart"]] != chargeback.PartHeld {
				t.Fatalf("x_Work %q on a %s part", x, r[col["x_AllocatedPart"]])
			}
			if r[col["AllocatedMethodId"]] != chargeback.MethodID(rule.mode, rule.scope) {
				t.Fatalf("%s by %s: method %s", rule.mode, rule.scope, r[col["AllocatedMethodId"]])
			}
			parts[r[col["x_AllocatedPart"]]]++
			if src := r[col["x_PriceSource"]]; src != "built-in table" {
				t.Fatalf("x_PriceSource %q, want the prices' source (built-in table)", src)
			}
			var d struct {
				Elements []struct{ AllocatedRatio float64 }
			}
			if err := json.Unmarshal([]byte(r[col["AllocatedMethodDetails"]]), &d); err != nil || len(d.Elements) != 1 {
				t.Fatalf("details %q: %v", r[col["AllocatedMethodDetails"]], err)
			}
			ratios[r[col["ResourceId"]]+r[col["x_GPUModel"]]+r[col["ChargePeriodStart"]]] += d.Elements[0].AllocatedRatio
			c, _ := strconv.ParseFloat(r[col["BilledCost"]], 64)
			cents += int64(math.Round(c * 100))
		}
		for k, sum := range ratios {
			if math.Abs(sum-1) > 1e-9 {
				t.Errorf("%s by %s: origin %s: ratios sum to %v", rule.mode, rule.scope, k, sum)
			}
		}
		if (parts[chargeback.PartSharedIdle] > 0) == (rule.mode == chargeback.None) || parts[chargeback.PartHeld] == 0 {
			t.Errorf("%s by %s: parts %v", rule.mode, rule.scope, parts)
		}
		q.Units = true
		r, err := l.Report(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		// The rows carry the work of the report's unit figures, each once.
		sameWork(t, b.Bytes(), r, "x_Workload")
		if want := int64(math.Round(r.Chargeback.Total.CostUSD * 100)); cents != want || cents != f.TotalCents() {
			t.Errorf("%s by %s: BilledCost sums to %d cents, the report's total is %d", rule.mode, rule.scope, cents, want)
		}
	}
}

// TestPriceSourcesOfWholeDays: a charge line's price source is its node's
// and model's sources over its day, joined by "+" where the day changed
// them, as the hourly GPU rows hold them: for a whole day settled in the
// daily rollups (read from them: priceSources), for a whole day whose last
// hour is still provisional (which the rollups do not hold: read from the
// hours), and for the partial days at the window's edges, in SQLite and
// PostgreSQL.
func TestPriceSourcesOfWholeDays(t *testing.T) {
	start := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	day := start.Truncate(24 * time.Hour).Add(24 * time.Hour) // the first whole day
	for _, c := range []struct {
		name      string
		end, from time.Time // the data's end; the other source's start
	}{
		{"settled", day.Add(26 * time.Hour), day.Add(12 * time.Hour)},
		{"provisional", day.Add(24*time.Hour + time.Minute), day.Add(23*time.Hour + 30*time.Minute)},
	} {
		p, err := sim.Record(sim.Options{Nodes: 2, Scenario: sim.ScenarioMixed, Seed: 4, Start: start}, time.Minute, c.end.Sub(start), profile.Generator{Name: "test"})
		if err != nil {
			t.Fatal(err)
		}
		parts := []*profile.Profile{
			profile.Join([]*profile.Profile{p}, p.StartedAt.Add(-time.Millisecond), c.from, false),
			profile.Join([]*profile.Profile{p}, c.from, p.EndedAt, false),
		}
		for _, backend := range []string{"sqlite", "postgres"} {
			t.Run(c.name+"/"+backend, func(t *testing.T) {
				l := ledgers(t, backend)()
				for i, part := range parts {
					ps := params()
					if i == 1 {
						ps.Pricer = pricing.New(map[string]float64{"NVIDIA": 3}, 1) // another source from then on
					}
					if _, err := l.Update(context.Background(), UpdateSpec{Inputs: []*profile.Profile{part}, Params: ps}); err != nil {
						t.Fatal(err)
					}
				}
				samePriceSources(t, l)
			})
		}
	}
}

// samePriceSources checks every charge line's price source against the
// distinct sources of its day's hourly GPU rows.
func samePriceSources(t *testing.T, l *Ledger) {
	t.Helper()
	want := map[string][]string{} // day, node, model: the hours' sources
	rows, err := l.db.Query(`SELECT DISTINCT bucket - bucket % 86400, node, model, price_source FROM seedance_gpu ORDER BY 1, 2, 3, 4`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var d int64
		var n, m, s string
		if err := rows.Scan(&d, &n, &m, &s); err != nil {
			t.Fatal(err)
		}
		want[fmt.Sprint(d, n, m)] = append(want[fmt.Sprint(d, n, m)], s)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	lines, mixed := 0, 0
	_, err = l.Charges(context.Background(), Query{GroupBy: []string{"namespace"}}, func(Window) error { return nil }, func(day []chargeback.Line) error {
		for _, c := range day {
			w := strings.Join(want[fmt.Sprint(c.Period.Unix(), c.Node, c.Model)], "+")
			if c.PriceSource != w {
				return fmt.Errorf("%s %s %s: price source %q, the hours say %q", c.Period.Format(time.DateOnly), c.Node, c.Model, c.PriceSource, w)
			}
			lines++
			if strings.Contains(w, "+") {
				mixed++
			}
		}
		return nil
	})
	if err != nil || lines == 0 || mixed == 0 {
		t.Fatalf("%d lines, %d of a day of two sources: %v", lines, mixed, err)
	}
}
