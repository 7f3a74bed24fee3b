package render

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/seedance/seedance/internal/table"
	"github.com/seedance/seedance/report"

	"github.com/seedance/seedance/analyze"
)

// pageScript sorts the tables, filters and folds the node table, and
// copies commands. The page works without it: the charts are SVG, the
// commands are visible text, and every row of the node table shows.
var pageScript = "\nvar FOLD = " + strconv.Itoa(foldRows) + ";" + `
document.querySelectorAll("table.sortable th").forEach(function (th, col) {
  th.addEventListener("click", function () {
    var tbody = th.closest("table").tBodies[0];
    var rows = Array.prototype.slice.call(tbody.rows);
    var dir = th.dataset.dir === "asc" ? -1 : 1;
    th.dataset.dir = dir === 1 ? "asc" : "desc";
    rows.sort(function (a, b) {
      var x = a.cells[col].dataset.sort || a.cells[col].textContent;
      var y = b.cells[col].dataset.sort || b.cells[col].textContent;
      var nx = parseFloat(x), ny = parseFloat(y);
      if (!isNaN(nx) && !isNaN(ny)) { return dir * (nx - ny); }
      return dir * x.localeCompare(y);
    });
    rows.forEach(function (r) { tbody.appendChild(r); });
    if (tbody.parentElement.id === "nodes") { refold(); }
  });
});
// The node table: filters by pool and verdict, and past the first rows
// that match, the rest folded behind "show all"; a link to a row shows it.
var nodes = document.getElementById("nodes"), unfolded = false;
function refold() {
  if (!nodes) { return; }
  var pool = document.getElementById("filter-pool").value, verdict = document.getElementById("filter-verdict").value;
  var want = decodeURIComponent(location.hash.slice(1)), rows = nodes.tBodies[0].rows, match = 0, shown = 0;
  for (var i = 0; i < rows.length; i++) {
    var r = rows[i], ok = (!pool || r.dataset.pool === pool) && (!verdict || r.dataset.verdict === verdict);
    if (ok) { match++; }
    r.hidden = !(r.id === want || ok && (unfolded || match <= FOLD));
    if (!r.hidden) { shown++; }
  }
  document.getElementById("filter-count").textContent = "showing " + shown + " of " + match + " matching nodes (" + rows.length + " in all)";
  document.getElementById("filter-more").hidden = shown >= match;
}
if (nodes) {
  document.getElementById("node-filters").hidden = false;
  ["filter-pool", "filter-verdict"].forEach(function (id) { document.getElementById(id).addEventListener("change", refold); });
  document.getElementById("filter-more").addEventListener("click", function () { unfolded = true; refold(); });
  window.addEventListener("hashchange", function () {
    refold();
    var row = document.getElementById(decodeURIComponent(location.hash.slice(1)));
    if (row) { row.scrollIntoView(); }
  });
  refold();
}
document.querySelectorAll("button.copy").forEach(function (b) {
  b.hidden = false;
  b.addEventListener("click", function () {
    var text = b.parentElement.querySelector("code").textContent;
    if (navigator.clipboard) { navigator.clipboard.writeText(text); }
    b.textContent = "copied";
  });
});
document.body.dataset.js = "on";
`

const pageCSS = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px auto;max-width:960px;color:#1b1f24;padding:0 12px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}
.sub{color:#57606a;margin-bottom:16px}
.strip{display:flex;flex-wrap:wrap;gap:10px}
.kpi{border:1px solid #d0d7de;border-radius:8px;padding:8px 12px;min-width:120px}
.kpi .v{font-size:20px;font-weight:600}.kpi .l{color:#57606a;font-size:12px}
.kpi .d{font-size:12px;color:#57606a}
.note{color:#57606a;font-size:12px}
svg text{font:11px system-ui,sans-serif;fill:#1b1f24}svg .axis{fill:#57606a}
svg .grid{stroke:#eaeef2}svg .mean{fill:none;stroke:#0969da;stroke-width:2}svg .halo{fill:none;stroke:#fff;stroke-width:5}
svg .idle{fill:#cf222e}svg .bar{fill:#cf222e}
svg .demand{fill:none;stroke:#1b1f24;stroke-width:1.5}svg .wma{fill:none;stroke:#1a7f37;stroke-width:2}svg .hpa{fill:none;stroke:#bf8700;stroke-width:1.5;stroke-dasharray:4 3}
.two{display:flex;flex-wrap:wrap;gap:20px}
table{border-collapse:collapse;width:100%;font-size:13px}th,td{text-align:left;padding:4px 8px;border-bottom:1px solid #eaeef2}
th{cursor:pointer;background:#f6f8fa}td.n{text-align:right;font-variant-numeric:tabular-nums}
.v-idle{color:#cf222e;font-weight:600}.v-stalled{color:#9a6700;font-weight:600}
ol.sugg li{margin-bottom:10px}pre{background:#f6f8fa;padding:6px 8px;border-radius:6px;overflow-x:auto;margin:4px 0;white-space:pre-wrap}
button.copy{font-size:12px}
.warn{background:#fff8c5;border:1px solid #d4a72c;border-radius:6px;padding:6px 10px;margin:4px 0}
.legend{margin:4px 0 6px;font-size:12px;color:#57606a}.legend .item{display:inline-block;margin-right:14px}
.legend .sw{display:inline-block;width:18px;height:10px;margin-right:4px;vertical-align:middle;border:1px solid #d0d7de}
.filters{margin:6px 0;font-size:13px}.filters label{margin-right:12px}tr:target{outline:2px solid #0969da}
`

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{"money": money, "inc": func(n int) int { return n + 1 }}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{{.CSP}}">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>seedance report {{.Window}}</title>
<style>{{.CSS}}</style></head>
<body>
<h1>Where the GPU money goes</h1>
<div class="sub">{{.Window}} · {{.Summary.GPUs}} GPUs on {{.Summary.Nodes}} nodes · generated by seedance from {{len .Inputs}} profile(s)</div>
<div class="strip">
{{range .KPIs}}<div class="kpi"><div class="v"><span data-field="{{.Field}}" data-value="{{.Value}}">{{.Display}}</span></div><div class="l">{{.Label}}</div>{{if .Delta}}<div class="d" data-delta="{{.Field}}">{{.Delta}} vs baseline</div>{{end}}</div>
{{end}}</div>
<p class="note">The projected monthly saving is an extrapolation: the idle cost ÷ the hours the profiles cover × 730, rounded to what that basis supports.</p>
{{range .Notes}}<div class="warn">{{.}}</div>{{end}}
{{range .Warnings}}<div class="warn">{{.}}</div>
{{end}}
<h2>Cluster utilization over time</h2>
<p class="note">How many {{.BandUnit}} were in each utilization band, as a share of them, in slices of {{.Slice}} (stacked; grey where there is no data); the line is the mean GPU utilization. The red strip below: nodes inside an idle interval (darker = more of them).</p>
{{.UtilChart}}{{.BandLegend}}
<h2>{{.Heat.Title}}</h2>
<p class="note">{{.Heat.Note}}</p>
{{range .Heat.Charts}}{{.Legend}}{{.SVG}}
{{end}}<h2>Where the money goes</h2>
<div class="two"><div><h3>Idle cost by node</h3>{{.ByNode}}</div><div><h3>Idle cost by GPU model</h3>{{.ByModel}}</div></div>
{{if .Scaling}}<h2>Scaling what-if</h2>
<p class="note">What an autoscaler would have provisioned per pool: demand (black), the WMA model (green) and an HPA-style baseline (dashed), in GPUs. See docs/scaling.md.</p>
<table id="scaling"><thead><tr><th>Pool</th><th>GPUs</th><th>Static GPU-h</th><th>WMA GPU-h</th><th>WMA saves</th><th>WMA events</th><th>Under-provisioned</th><th>HPA GPU-h</th><th>HPA events</th></tr></thead><tbody>
{{range .Scaling}}<tr><td>{{.Pool.Pool}}</td><td class="n">{{.Pool.GPUs}}</td><td class="n">{{printf "%.2f" .Pool.StaticGPUH}}</td><td class="n">{{printf "%.2f" .Pool.WMA.ProvisionedGPUH}}</td><td class="n">{{.Saves}}</td><td class="n">{{.Pool.WMA.ScaleEvents}}</td><td class="n">{{.Pool.WMA.UnderProvisioned}}</td><td class="n">{{printf "%.2f" .Pool.HPA.ProvisionedGPUH}}</td><td class="n">{{.Pool.HPA.ScaleEvents}}</td></tr>
{{end}}</tbody></table>
<div class="two">{{range .Scaling}}<div><h3>{{.Pool.Pool}}</h3>{{.Chart}}</div>{{end}}</div>
{{end}}{{if .Migration}}<h2>Migration plan</h2>
<p>{{len .Migration.Moves}} move(s) release {{len .Migration.ReleasedNodes}} node(s){{range .Migration.ReleasedNodes}} <code>{{.}}</code>{{end}}: saves {{.MigrationSaves}} per hour.</p>
<ol>{{range .Migration.Moves}}<li><code>{{.Workload}}</code> → <code>{{.To}}</code> GPUs {{.GPUs}}: {{.Reason}}</li>
{{end}}</ol>
{{end}}{{if .Attribution}}<h2>Who held the idle GPUs</h2>
<p class="note">GPU time by {{.AttributionBy}}: held, used (held × utilization), and the idle time held, priced. See docs/analysis.md, Attribution.</p>
{{.AttributionChart}}
<table class="sortable" id="attribution"><thead><tr>{{range .Attribution.GroupBy}}<th>{{.}}</th>{{end}}<th>Workloads</th><th>Held GPU-h</th><th>Used GPU-h</th><th>Efficiency</th><th>Idle-held GPU-h</th><th>Waste</th></tr></thead><tbody>
{{range .AttributionRows}}<tr>{{range .Key}}<td>{{.}}</td>{{end}}<td class="n">{{.Workloads}}</td><td class="n">{{printf "%.2f" .F.HeldGPUHours}}</td><td class="n">{{printf "%.2f" .F.UsedGPUHours}}</td><td class="n">{{.Efficiency}}</td><td class="n" data-sort="{{.F.IdleHeldGPUHours}}">{{printf "%.2f" .F.IdleHeldGPUHours}}</td><td class="n" data-sort="{{.F.WasteCostUSD}}">{{.Waste}}</td></tr>
{{end}}</tbody></table>
{{end}}{{if .Units}}<h2>What a unit of work cost</h2>
<p class="note">The work the serving counters read (requests, tokens), priced on the GPU time its workloads held: per 1,000 requests, per 1M tokens; the idle share is what idle time adds to the price. See docs/units.md.</p>
<table class="sortable" id="units"><thead><tr><th>Group</th><th>Unit</th><th>Work</th><th>Held GPU-h</th><th>Cost</th><th>Per</th><th>USD</th><th>Idle share</th><th>Without idle</th><th>kWh</th></tr></thead><tbody>
{{range .Units}}<tr>{{range $i, $c := .}}{{if lt $i 2}}<td>{{$c}}</td>{{else}}<td class="n">{{$c}}</td>{{end}}{{end}}</tr>
{{end}}</tbody></table>
{{end}}{{if .Queues}}<h2>Queues: quota against measured use</h2>
<p class="note">Each queue's quota, what its workloads reserved, held on nodes and used (measured), and what others waited for, in GPU-hours over the window; a queue that held quota idle while another of its cohort waited is hoarding. See docs/queues.md.</p>
<table class="sortable" id="queues"><thead><tr>{{range .QueueHeader}}<th>{{.}}</th>{{end}}</tr></thead><tbody>
{{range .Queues}}<tr>{{range $i, $c := .}}{{if or (lt $i 2) (eq $i 15)}}<td>{{$c}}</td>{{else}}<td class="n">{{$c}}</td>{{end}}{{end}}</tr>
{{end}}</tbody></table>
<p class="note">Each queue's used GPUs over time, its use and its reservations decayed as Kueue's admission fair sharing decays usage, and its quota right-sized from its use (seedance recommend --quotas writes the patch).</p>
<table class="sortable" id="queue-use"><thead><tr>{{range .QueueUseHeader}}<th>{{.}}</th>{{end}}</tr></thead><tbody>
{{range .QueueUse}}<tr>{{range $i, $c := .}}{{if or (eq $i 0) (eq $i 10)}}<td>{{$c}}</td>{{else}}<td class="n">{{$c}}</td>{{end}}{{end}}</tr>
{{end}}</tbody></table>
{{end}}{{if .History}}<h2>Month to date, from the ledger</h2>
<p class="note">{{.History}}</p>
{{.HistoryChart}}{{.HistoryLegend}}
{{end}}{{if .Fragmentation}}<h2>Fragmentation</h2>
<p class="note">Free GPUs per pool, those no workload shape seen can use without a move (stranded; threshold {{printf "%.2f" .Fragmentation.ThresholdRatio}}), the FGD paper's expected unusable GPUs, and the stranded GPUs once the migration plan is made. See docs/analysis.md, Fragmentation.</p>
<table class="sortable" id="fragmentation"><thead><tr><th>Pool</th><th>Nodes</th><th>Free GPUs</th><th>Free per node (GPUs:nodes)</th><th>Stranded</th><th>Ratio</th><th>FGD GPUs</th><th>After plan</th></tr></thead><tbody>
{{range .FragRows}}<tr><td>{{.P.Model}}</td><td class="n">{{.P.Nodes}}</td><td class="n">{{.P.FreeGPUs}}</td><td>{{.Hist}}</td><td class="n">{{.P.StrandedGPUs}}</td><td class="n">{{.Ratio}}</td><td class="n">{{printf "%.2f" .P.FGDUnusableGPUs}}</td><td class="n">{{.After}}</td></tr>
{{end}}</tbody></table>
{{if .Stranded}}<h3>Memory held while idle</h3>
<table class="sortable" id="stranded-memory"><thead><tr><th>Node</th><th>GPU</th><th>Idle</th><th>Mean GiB held</th><th>GiB-hours</th></tr></thead><tbody>
{{range .Stranded}}<tr><td>{{.Node}}</td><td class="n">{{.GPU}}</td><td class="n" data-sort="{{.IdleS}}">{{.Idle}}</td><td class="n">{{printf "%.1f" .MeanGiB}}</td><td class="n">{{printf "%.2f" .GiBHours}}</td></tr>
{{end}}</tbody></table>{{end}}
{{end}}<h2>Suggestions</h2>
{{define "suggestion"}}<li data-kind="{{.Kind}}"{{if .Severity}} data-severity="{{.Severity}}"{{end}}>{{if .Severity}}[{{.Severity}}] {{end}}{{.Text}}{{if .NodeID}} <a class="to-node" href="#{{.NodeID}}">{{.Node}} in the table</a>{{end}}{{if .Command}}<pre><code>{{.Command}}</code> <button class="copy" hidden>copy</button></pre>{{end}}</li>
{{end}}{{if .Suggestions}}<ol class="sugg">{{range .Suggestions}}{{template "suggestion" .}}{{end}}</ol>
{{if .MoreSuggestions}}<details id="more-suggestions"><summary>{{len .MoreSuggestions}} more suggestions</summary><ol class="sugg" start="{{len .Suggestions | inc}}">{{range .MoreSuggestions}}{{template "suggestion" .}}{{end}}</ol></details>
{{end}}{{else}}<p>None: no node was idle for the whole idle window.</p>{{end}}
<h2>Pools</h2>
<table class="sortable" id="pools"><thead><tr><th>Pool</th><th>Nodes</th><th>GPUs</th><th>Idle nodes</th><th>Idle GPU-h</th><th>Idle cost</th></tr></thead><tbody>
{{range .Pools}}<tr><td>{{.Name}}</td><td class="n">{{.Nodes}}</td><td class="n">{{.GPUs}}</td><td class="n">{{.Idle}}</td><td class="n">{{printf "%.2f" .IdleGPUHours}}</td><td class="n" data-sort="{{.IdleCostUSD}}">{{money .IdleCostUSD}}</td></tr>
{{end}}</tbody></table>
<h2>Nodes</h2>
<div class="filters" id="node-filters" hidden><label>Pool <select id="filter-pool"><option value="">all</option>{{range .PoolNames}}<option value="{{.}}">{{.}}</option>{{end}}</select></label>
<label>Verdict <select id="filter-verdict"><option value="">all</option>{{range .Verdicts}}<option value="{{.}}">{{.}}</option>{{end}}</select></label>
<span id="filter-count"></span> <button id="filter-more" hidden>show all</button></div>
<table class="sortable" id="nodes"><thead><tr><th>Node</th><th>Pool</th><th>GPUs</th><th>Verdict</th><th>Mean util</th><th>Idle share</th><th>Idle GPU-h</th><th>Idle cost</th><th>Pending</th></tr></thead><tbody>
{{range .Nodes}}<tr id="{{.ID}}" data-pool="{{.Pool}}" data-verdict="{{.Verdict}}"><td>{{.Name}}</td><td>{{.Pool}}</td><td>{{.GPUText}}</td><td class="v-{{.Verdict}}">{{.Verdict}}</td><td class="n" data-sort="{{.Util}}">{{.UtilText}}</td><td class="n" data-sort="{{.Share}}">{{.ShareText}}</td><td class="n" data-sort="{{.IdleH}}">{{printf "%.2f" .IdleH}}</td><td class="n" data-sort="{{.Cost}}">{{.CostText}}</td><td class="n">{{.Pending}}</td></tr>
{{end}}</tbody></table>
<p class="note">Idle: a GPU below {{.Threshold}}% utilization for at least {{.IdleWindow}}. Rules: docs/analysis.md. Prices: {{.Prices}}.</p>
<script>{{.Script}}</script>
</body></html>
`))

type kpi struct {
	Label, Display, Field, Delta string
	Value                        string // the JSON report's number, or null
}

// pageCSP is the pages' Content-Security-Policy: nothing from outside,
// inline styles, and the one script by its hash.
func pageCSP() string {
	sum := sha256.Sum256([]byte(pageScript))
	return "default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// jsonNum is v as the JSON report writes it.
func jsonNum(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func jsonOpt(v *float64) string {
	if v == nil {
		return "null"
	}
	return jsonNum(*v)
}

// sortKey orders a value that may be null: nulls first.
func sortKey(v *float64) float64 {
	if v == nil {
		return -1
	}
	return *v
}

// HTML writes one self-contained page: inline CSS, SVG charts and a small
// script, no request to anything outside the file (a Content-Security-Policy
// forbids it, and the browser test checks it).
func HTML(w io.Writer, r *report.Result, _ Options) error {
	s := r.Summary
	d := map[string]any{}
	d["CSS"] = template.CSS(pageCSS)
	d["Script"] = template.JS(pageScript)
	d["CSP"] = pageCSP()
	d["Window"] = windowText(r.Window, "2006-01-02 15:04")
	d["Summary"] = s
	d["Inputs"] = r.Inputs
	d["Warnings"] = r.Warnings
	delta := func(field string, format func(float64) string) string {
		if r.Delta == nil {
			return ""
		}
		if v, ok := r.Delta[field]; ok {
			return format(v)
		}
		return "n/a"
	}
	amount, basis := projection(r)
	d["KPIs"] = []kpi{
		{"mean GPU utilization", pct(s.AvgGPUUtilPct), "summary.avg_gpu_util_pct", delta("avg_gpu_util_pct", pts), jsonOpt(s.AvgGPUUtilPct)},
		{"spread of nodes' mean utilization (σ; variance)", ptsOpt(s.NodeUtilStddevPct) + "; " + numOpt(s.NodeUtilVariance, 3), "summary.node_util_variance", delta("node_util_variance", variance), jsonOpt(s.NodeUtilVariance)},
		{fmt.Sprintf("idle GPU-hours (%s of %.1f)", ratioPct(s.IdleRatio), s.GPUHours), numOpt(s.IdleGPUHours, 2), "summary.idle_gpu_hours", delta("idle_gpu_hours", hours), jsonOpt(s.IdleGPUHours)},
		{"cost of idle GPUs", moneyOpt(s.IdleCostUSD), "summary.idle_cost_usd", delta("idle_cost_usd", signedMoney), jsonOpt(s.IdleCostUSD)},
		{fmt.Sprintf("energy (%s)", moneyOpt(s.EnergyCostUSD)), numOpt(s.EnergyKWh, 2) + " kWh", "summary.energy_kwh", delta("energy_kwh", kwh), jsonOpt(s.EnergyKWh)},
		{"projected monthly saving, " + basis, amount, "summary.projected_monthly_savings_usd", delta("projected_monthly_savings_usd", signedMoney), jsonOpt(s.ProjectedMonthlySavingsUSD)},
		{"idle / stalled nodes", fmt.Sprintf("%d / %d", s.IdleNodes, s.StalledNodes), "summary.idle_nodes", "", strconv.Itoa(s.IdleNodes)},
	}
	d["Notes"] = s.Notes
	d["Slice"] = analyze.FormatDuration(time.Duration(r.Timeline.BucketS * float64(time.Second)))
	d["UtilChart"] = template.HTML(utilizationChart(r))
	d["BandUnit"], d["BandLegend"] = bandUnit(r), legendHTML("legend-utilization", bandLegend(r))
	pools := poolSummaries(r)
	d["Heat"], d["Pools"] = heatmaps(r, pools), pools
	d["ByNode"] = template.HTML(bars("chart-cost-nodes", "idle cost by node", costByNode(r)))
	d["ByModel"] = template.HTML(bars("chart-cost-models", "idle cost by GPU model", costByModel(r)))
	sugs := suggestionViews(r)
	d["Suggestions"], d["MoreSuggestions"] = sugs[:min(foldSuggestions, len(sugs))], sugs[min(foldSuggestions, len(sugs)):]
	if r.Scaling != nil {
		type poolView struct {
			Pool  analyze.ScalingPool
			Saves string
			Chart template.HTML
		}
		var pools []poolView
		for i, p := range r.Scaling.Pools {
			pools = append(pools, poolView{p, money(p.WMA.SavingUSD), template.HTML(capacityChart(fmt.Sprintf("chart-scaling-%d", i), r, p))})
		}
		d["Scaling"] = pools
	}
	attributionView(d, r)
	if len(r.Units) > 0 {
		d["Units"] = unitRows(r)
	}
	if len(r.Queues) > 0 {
		d["Queues"], d["QueueHeader"] = queueRows(r), queueHeader
		d["QueueUse"], d["QueueUseHeader"] = useRows(r), useHeader
	}
	historyView(d, r)
	fragmentationView(d, r)
	if r.Migration != nil {
		d["Migration"] = r.Migration
		d["MigrationSaves"] = money(r.Migration.SavingsUSDPerHour)
	}
	d["Nodes"], d["PoolNames"], d["Verdicts"] = nodeTable(r)
	d["Threshold"] = r.Params.IdleThresholdPct
	d["IdleWindow"] = analyze.FormatDuration(time.Duration(r.Params.IdleWindowS * float64(time.Second)))
	prices := "your --gpu-price values"
	if len(r.Params.DefaultPricesUsed) > 0 {
		prices = "seedance's defaults for " + strings.Join(r.Params.DefaultPricesUsed, ", ") + " (docs/pricing.md)"
	}
	d["Prices"] = prices
	return executeVisible(w, pageTemplate, d)
}

func costByNode(r *report.Result) []barItem {
	var items []barItem
	for _, n := range r.Nodes {
		if n.IdleCostUSD > 0 && len(items) < 15 {
			items = append(items, barItem{n.Name, n.IdleCostUSD})
		}
	}
	return items
}

func costByModel(r *report.Result) []barItem {
	byModel := map[string]float64{}
	for _, n := range r.Nodes {
		if n.IdleCostUSD > 0 {
			byModel[strings.Join(n.Models, "+")] += n.IdleCostUSD
		}
	}
	var items []barItem
	for m, v := range byModel {
		items = append(items, barItem{m, v})
	}
	sort.Slice(items, func(i, j int) bool {
		if items[i].value != items[j].value {
			return items[i].value > items[j].value
		}
		return items[i].label < items[j].label
	})
	return items
}

// executeVisible runs a page's template and writes it with every character
// that would act instead of showing (bidi overrides, escapes, NUL, other
// controls) written as a visible escape, as on a terminal
// (table.VisibleLayout): html/template escapes markup, not those.
func executeVisible(w io.Writer, t *template.Template, data any) error {
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		return err
	}
	_, err := io.WriteString(w, table.VisibleLayout(b.String()))
	return err
}
