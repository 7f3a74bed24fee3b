package render

import (
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/seedance/seedance/ledger/history"
)

var ledgerTemplate = template.Must(template.New("ledger").Funcs(template.FuncMap{
	"money":  money,
	"pct100": func(v *float64) float64 { return 100 * *v },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{{.CSP}}">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>seedance ledger {{.Window}}</title>
<style>{{.CSS}}</style></head>
<body>
<h1>Showback: who wasted what</h1>
<div class="sub">{{.Window}} · from the ledger{{if .R.Summary.ProvisionalFrom}} · provisional from {{.R.Summary.ProvisionalFrom}}{{end}}</div>
<div class="strip">
<div class="kpi"><div class="v">{{.IdleCost}}</div><div class="l">idle cost</div></div>
<div class="kpi"><div class="v">{{.IdleHours}}</div><div class="l">idle GPU-hours ({{.IdleShare}})</div></div>
<div class="kpi"><div class="v">{{.Util}}</div><div class="l">mean GPU utilization</div></div>
<div class="kpi"><div class="v">{{.Energy}}</div><div class="l">energy</div></div>
</div>
{{range .Lines}}<p>{{.}}</p>
{{end}}<h2>Idle cost by day</h2>
{{.Daily}}
{{if .WasteChart}}<h2>Waste by day and {{.By}}</h2>
{{.WasteChart}}{{.WasteLegend}}
{{end}}<h2>Waste by {{.By}}</h2>
{{.ByGroup}}
<table class="sortable" id="attribution"><thead><tr>{{range .R.Attribution.GroupBy}}<th>{{.}}</th>{{end}}<th>Workloads</th><th>Held GPU-h</th><th>Used GPU-h</th><th>Efficiency</th><th>Idle-held GPU-h</th><th>Waste</th></tr></thead><tbody>
{{range .R.Attribution.Groups}}<tr>{{range .Key}}<td>{{.}}</td>{{end}}<td class="n">{{.Workloads}}</td><td class="n">{{printf "%.2f" .HeldGPUHours}}</td><td class="n">{{printf "%.2f" .UsedGPUHours}}</td><td class="n">{{if .Efficiency}}{{printf "%.0f%%" (pct100 .Efficiency)}}{{else}}n/a{{end}}</td><td class="n" data-sort="{{.IdleHeldGPUHours}}">{{printf "%.2f" .IdleHeldGPUHours}}</td><td class="n" data-sort="{{.WasteCostUSD}}">{{money .WasteCostUSD}}</td></tr>
{{end}}<tr><td colspan="{{len .R.Attribution.GroupBy}}">(unallocated)</td><td></td><td class="n">{{printf "%.2f" .R.Attribution.Unallocated.HeldGPUHours}}</td><td class="n">{{printf "%.2f" .R.Attribution.Unallocated.UsedGPUHours}}</td><td></td><td class="n">{{printf "%.2f" .R.Attribution.Unallocated.IdleHeldGPUHours}}</td><td class="n">{{money .R.Attribution.Unallocated.WasteCostUSD}}</td></tr>
<tr><td colspan="{{len .R.Attribution.GroupBy}}">(total)</td><td></td><td class="n">{{printf "%.2f" .R.Attribution.Total.HeldGPUHours}}</td><td class="n">{{printf "%.2f" .R.Attribution.Total.UsedGPUHours}}</td><td></td><td class="n">{{printf "%.2f" .R.Attribution.Total.IdleHeldGPUHours}}</td><td class="n">{{money .R.Attribution.Total.WasteCostUSD}}</td></tr>
</tbody></table>
{{if .ChargeRows}}<h2>Charges{{if .R.Chargeback.ShareIdle}}, unallocated cost shared {{.R.Chargeback.ShareIdle}} by {{.R.Chargeback.ShareIdleBy}} and day{{end}}</h2>
<table class="sortable" id="charges"><thead><tr>{{range .ChargeHeader}}<th>{{.}}</th>{{end}}</tr></thead><tbody>
{{range .ChargeRows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</tbody></table>
{{end}}<h2>Prices</h2>
<table id="prices"><thead><tr><th>Model</th><th>USD per GPU-hour</th><th>Source</th><th>From</th></tr></thead><tbody>
{{range .R.Prices}}<tr><td>{{.Model}}</td><td class="n">{{printf "%.3f" .USDPerHour}}</td><td>{{.Source}}</td><td>{{.FirstBucket}}</td></tr>
{{end}}</tbody></table>
<script>{{.Script}}</script>
</body></html>
`))

// ledgerHTML writes a ledger report as one self-contained page: the
// figures, the daily idle cost, the waste by group, the prices.
func ledgerHTML(w io.Writer, r *history.Report) error {
	s := r.Summary
	var daily, groups []barItem
	for _, d := range r.Daily {
		daily = append(daily, barItem{d.Date, d.IdleCostUSD})
	}
	for i, g := range r.Attribution.Groups {
		if i == 30 { // the table has them all
			break
		}
		groups = append(groups, barItem{strings.Join(g.Key, " / "), g.WasteCostUSD})
	}
	by := strings.Join(r.Attribution.GroupBy, ", ")
	chart, legend := dailyChart("daily-waste", r.DailyWaste)
	var chargeHeader []string
	var chargeRowsHTML [][]string
	if r.Chargeback != nil {
		chargeHeader, chargeRowsHTML = chargeRows(r.Chargeback, func(v float64) string { return fmt.Sprintf("%.2f", v) }, money)
	}
	return executeVisible(w, ledgerTemplate, map[string]any{
		"ChargeHeader": chargeHeader, "ChargeRows": chargeRowsHTML,
		"CSP":    template.HTMLAttr(pageCSP()),
		"CSS":    template.CSS(pageCSS),
		"Script": template.JS(pageScript),
		"Window": r.Window.Start.Format("2006-01-02 15:04") + " → " + r.Window.End.Format("2006-01-02 15:04 UTC"),
		"R":      r, "By": by,
		"IdleCost": moneyOpt(s.IdleCostUSD), "IdleHours": numOpt(s.IdleGPUHours, 1), "IdleShare": ratioPct(s.IdleRatio),
		"Util": pct(s.AvgGPUUtilPct), "Energy": energyText(s.EnergyKWh),
		"Lines":      append(jobLines(r), budgetLines(r.Budgets)...),
		"Daily":      template.HTML(bars("daily", "idle cost by day", daily)),
		"ByGroup":    template.HTML(bars("groups", "waste by "+by, groups)),
		"WasteChart": template.HTML(chart), "WasteLegend": legendHTML("legend-daily-waste", legend),
	})
}
