package render

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/internal/testkit/browsertest"
	"github.com/seedance/seedance/ledger/history"
	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/recommend"
	"github.com/seedance/seedance/report"
	"github.com/seedance/seedance/source/sim"
)

// fleetReport analyzes n simulated nodes over 40 minutes at 60 s, pooled
// by instance type. Every 7th node's GPUs report no utilization for a
// stretch in the middle (a gap in the data), and the costliest node has a
// hostile name and the next a long one of wide letters; the ledger's
// monthOfWaste is a month of 12 teams (history).
func fleetReport(t *testing.T, nodes int) *report.Result {
	t.Helper()
	p, err := sim.Record(sim.Options{Nodes: nodes, Scenario: sim.ScenarioMixed, Seed: 1}, time.Minute, 40*time.Minute, profile.Generator{})
	if err != nil {
		t.Fatal(err)
	}
	for ni := 0; ni < len(p.Nodes); ni += 7 {
		for gi := range p.Nodes[ni].GPUs {
			u := p.Nodes[ni].GPUs[gi].Series.GPUUtilPct
			for k := len(u) / 3; k < len(u)/2; k++ {
				u[k] = profile.Null
			}
		}
	}
	s, err := profile.StreamOf(p, "fleet.json")
	if err != nil {
		t.Fatal(err)
	}
	params := analyze.DefaultParams()
	params.PoolBy = "node.kubernetes.io/instance-type"
	r, err := analyze.Analyze(context.Background(), []analyze.Source{{Name: "fleet.json", Stream: s}}, params)
	if err != nil {
		t.Fatal(err)
	}
	res := report.New(r)
	recommend.Commands(res.Suggestions, r, recommend.DialectKubectl)
	res.Nodes[0].Name = hostileName
	res.Nodes[1].Name = strings.Repeat("W", 40) // the widest glyphs
	res.History = monthOfWaste(31, 12)
	return res
}

const hostileName = `<img src=x onerror="document.title='pwned'"><script>document.title='pwned'</script>node`

// overlapProbe measures, in the loaded page, the box of every piece of
// visible text (a text node's line boxes; an SVG text element's box) and
// lists the pairs of different pieces that overlap by more than a pixel
// each way, and the SVG texts that reach past their chart's edge. Then it drives the node table: the default fold, a verdict
// filter, a pool filter, "show all", and a link to the last row.
const overlapProbe = `
(function () {
  var boxes = [], clipped = [], id = 0, walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT), n;
  while ((n = walker.nextNode())) {
    var p = n.parentElement;
    if (!n.nodeValue.trim() || p.closest("script,style,title,#probe")) { continue; }
    var closed = p.closest("details");
    if (closed && !closed.open && !p.closest("summary")) { continue; } // not laid out
    var rects;
    if (p instanceof SVGElement) {
      rects = [p.getBoundingClientRect()];
      var box = p.ownerSVGElement.getBoundingClientRect();
      if (rects[0].left < box.left - 1 || rects[0].right > box.right + 1) { clipped.push(p.ownerSVGElement.id + ": " + n.nodeValue.slice(0, 40)); }
    }
    else { var range = document.createRange(); range.selectNodeContents(n); rects = range.getClientRects(); }
    for (var i = 0; i < rects.length; i++) {
      var r = rects[i];
      if (r.width > 0 && r.height > 0) {
        boxes.push({l: r.left + scrollX, t: r.top + scrollY, r: r.right + scrollX, b: r.bottom + scrollY, id: id, text: n.nodeValue.slice(0, 40)});
      }
    }
    id++;
  }
  boxes.sort(function (a, b) { return a.t - b.t; });
  var bad = [];
  for (var i = 0; i < boxes.length; i++) {
    for (var j = i + 1; j < boxes.length && boxes[j].t < boxes[i].b; j++) {
      var a = boxes[i], c = boxes[j];
      if (a.id === c.id) { continue; }
      if (Math.min(a.r, c.r) - Math.max(a.l, c.l) > 1 && Math.min(a.b, c.b) - Math.max(a.t, c.t) > 1) { bad.push(a.text + " | " + c.text); }
    }
  }
  function visible() {
    var out = [], rows = document.getElementById("nodes").tBodies[0].rows;
    for (var i = 0; i < rows.length; i++) { if (!rows[i].hidden) { out.push(rows[i].id + "/" + rows[i].dataset.pool + "/" + rows[i].dataset.verdict); } }
    return out;
  }
  function pick(id, v) { var s = document.getElementById(id); s.value = v; s.dispatchEvent(new Event("change")); }
  var res = {boxes: boxes.length, overlaps: bad.length, examples: bad.slice(0, 10), clipped: clipped};
  var pre = document.createElement("pre"); pre.id = "probe";
  if (!document.getElementById("nodes")) { pre.textContent = JSON.stringify(res); document.body.appendChild(pre); return; }
  res.fold = visible(); res.count = document.getElementById("filter-count").textContent;
  pick("filter-verdict", "idle"); res.idle = visible();
  pick("filter-verdict", ""); pick("filter-pool", document.getElementById("filter-pool").options[1].value); res.pool = visible();
  res.poolName = document.getElementById("filter-pool").value;
  pick("filter-pool", ""); document.getElementById("filter-more").click(); res.all = visible();
  var rows = document.getElementById("nodes").tBodies[0].rows, last = rows[rows.length - 1].id;
  unfolded = false; history.replaceState(null, "", "#" + last); window.dispatchEvent(new HashChangeEvent("hashchange"));
  res.linked = visible().some(function (v) { return v.indexOf(last + "/") === 0; });
  res.title = document.title;
  pre.textContent = JSON.stringify(res); document.body.appendChild(pre);
})();
`

type probeResult struct {
	Boxes, Overlaps        int
	Examples, Clipped      []string
	Fold, Idle, Pool, All  []string
	Count, PoolName, Title string
	Linked                 bool
}

// probePage loads the page with overlapProbe added (and allowed by its
// CSP) in a 1000 px wide window and returns what the probe found.
func probePage(t *testing.T, b *browsertest.Browser, page []byte) probeResult {
	t.Helper()
	sum := sha256.Sum256([]byte(overlapProbe))
	hash := "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	s := strings.Replace(string(page), "script-src ", "script-src "+hash+" ", 1)
	s = strings.Replace(s, "</body>", "<script>"+overlapProbe+"</script></body>", 1)
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := b.DumpDOMAt(t, path, 1000, 1400)
	m := regexp.MustCompile(`(?s)<pre id="probe">(.*?)</pre>`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatal("the probe did not run")
	}
	var res probeResult
	if err := json.Unmarshal([]byte(htmlUnescape(m[1])), &res); err != nil {
		t.Fatal(err)
	}
	return res
}

func htmlUnescape(s string) string {
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&quot;", `"`, "&#39;", "'", "&amp;", "&").Replace(s)
}

// TestHTMLReadableAtFleetSizes (#31): at 8, 200 and 2,000 nodes, no two
// pieces of text in the page overlap in headless Chromium; the data's gaps
// are drawn and named in the legends; the node table folds past its first
// rows and its filters and links work; the page asks the network for
// nothing, and no name from the data runs as script.
func TestHTMLReadableAtFleetSizes(t *testing.T) {
	b := browsertest.New(t)
	for _, nodes := range []int{8, 200, 2000} {
		t.Run(fmt.Sprintf("%04d", nodes), func(t *testing.T) {
			r := fleetReport(t, nodes)
			page := render(t, "html", r, Options{})
			res := probePage(t, b, page)
			if res.Boxes < 100 || res.Overlaps != 0 || len(res.Clipped) != 0 {
				t.Fatalf("%d pieces of text, %d overlaps, e.g. %q; cut off by their chart's edge: %q", res.Boxes, res.Overlaps, res.Examples, res.Clipped)
			}
			checkGaps(t, string(page), nodes)
			if !strings.Contains(string(page), `<svg id="chart-history"`) || !strings.Contains(string(page), "4 other groups</span>") {
				t.Error("no month-to-date chart of the ledger, or no other band in its legend")
			}
			checkFilters(t, r, res)
			if res.Title == "pwned" || strings.Contains(string(page), "<script>document.title") {
				t.Fatal("a node's name ran as script")
			}
			if reqs := b.PageRequests(); len(reqs) != 0 {
				t.Fatalf("the page made network requests: %q", reqs)
			}
			t.Logf("%d nodes: %d KiB, %d pieces of text", nodes, len(page)>>10, res.Boxes)
		})
	}
}

// checkGaps: the utilization chart draws the gaps (grey cells) and its
// legend names them; at fleet size the page groups nodes by pool.
func checkGaps(t *testing.T, page string, nodes int) {
	t.Helper()
	chart := page[strings.Index(page, `<svg id="chart-utilization"`):]
	chart = chart[:strings.Index(chart, "</svg>")]
	if !strings.Contains(chart, `fill="`+noDataColor+`"><title>`) || !strings.Contains(chart, "no data (a gap)") {
		t.Error("the utilization chart draws no gap")
	}
	legend := page[strings.Index(page, `id="legend-utilization"`):]
	if !strings.Contains(legend[:strings.Index(legend, "</div>")], "no data (a gap)") {
		t.Error("the utilization legend does not name gaps")
	}
	if strings.Count(page, "no data (a gap)</span>") < 2 {
		t.Error("the heatmap legend does not name gaps")
	}
	if grouped := strings.Contains(page, "<h2>Pools × time</h2>"); grouped != (nodes > maxNodeRows) {
		t.Errorf("%d nodes: grouped by pool = %v", nodes, grouped)
	}
}

// checkFilters: the fold, the verdict and pool filters, "show all" and a
// link to a folded row, against the report.
func checkFilters(t *testing.T, r *report.Result, res probeResult) {
	t.Helper()
	if want := min(foldRows, len(r.Nodes)); len(res.Fold) != want {
		t.Errorf("%d rows shown by default, want %d (%s)", len(res.Fold), want, res.Count)
	}
	idle, inPool := 0, 0
	for _, n := range r.Nodes {
		if n.Verdict == "idle" {
			idle++
		}
		if n.Pool == res.PoolName {
			inPool++
		}
	}
	if len(res.Idle) != min(foldRows, idle) {
		t.Errorf("verdict filter: %d rows, want %d", len(res.Idle), min(foldRows, idle))
	}
	for _, v := range res.Idle {
		if !strings.HasSuffix(v, "/idle") {
			t.Errorf("verdict filter shows %s", v)
		}
	}
	if len(res.Pool) != min(foldRows, inPool) || inPool == 0 {
		t.Errorf("pool filter %q: %d rows, want %d", res.PoolName, len(res.Pool), min(foldRows, inPool))
	}
	for _, v := range res.Pool {
		if !strings.Contains(v, "/"+res.PoolName+"/") {
			t.Errorf("pool filter %q shows %s", res.PoolName, v)
		}
	}
	if len(res.All) != len(r.Nodes) {
		t.Errorf("show all: %d rows of %d", len(res.All), len(r.Nodes))
	}
	if !res.Linked {
		t.Error("a link to the last row does not show it")
	}
}

// TestOverlapProbeSeesOverlaps proves the overlap check can fail: two SVG
// labels a pixel apart, as the heatmap drew them at 200 nodes before #31,
// are found.
func TestOverlapProbeSeesOverlaps(t *testing.T) {
	page := `<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'none'"></head><body>` +
		`<svg width="300" height="40"><text x="100" y="12">node-gpu-0001</text><text x="100" y="15">node-gpu-0002</text></svg></body></html>`
	res := probePage(t, browsertest.New(t), []byte(page))
	if res.Overlaps != 1 {
		t.Fatalf("%d overlaps found in a page with one: %q", res.Overlaps, res.Examples)
	}
}

// TestShorten: a label is cut to what fits, whatever its letters.
func TestShorten(t *testing.T) {
	for _, tt := range []struct {
		in   string
		px   float64
		want string
	}{
		{"node-gpu-01", 168, "node-gpu-01"},
		{"", 10, ""},
		{strings.Repeat("W", 20), 60, "WWWW…"},
		{strings.Repeat("i", 50), 40, "iiiiiii…"}, // 7 × 4 + 11
		{"ノードノード", 40, "ノー…"},
	} {
		got := shorten(tt.in, tt.px)
		if got != tt.want {
			t.Errorf("shorten(%q, %g) = %q, want %q", tt.in, tt.px, got, tt.want)
		}
		w := 0.0
		for _, r := range got {
			w += glyphPx(r)
		}
		if w > tt.px && got != "" {
			t.Errorf("shorten(%q, %g) = %q is %g px", tt.in, tt.px, got, w)
		}
	}
}

// monthOfWaste is a ledger's month: days × groups of waste, group k costing
// k + 1 dollars a day, the last group with a hostile name.
func monthOfWaste(days, groups int) *history.Report {
	r := &history.Report{Attribution: &analyze.Attribution{GroupBy: []string{"namespace"}},
		Window: history.Window{Start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2026, 1, 31, 23, 0, 0, 0, time.UTC)}}
	for d := 0; d < days; d++ {
		for k := 0; k < groups; k++ {
			name := fmt.Sprintf("team-%02d", k)
			if k == groups-1 {
				name = hostileName
			}
			r.DailyWaste = append(r.DailyWaste, history.DayWaste{Date: fmt.Sprintf("2026-01-%02d", d+1), Key: []string{name}, WasteCostUSD: float64(k + 1)})
		}
	}
	return r
}

// TestDailyStacks: the 8 costliest groups are named, the rest are one
// "other" band, and each day's bands add up to that day's waste.
func TestDailyStacks(t *testing.T) {
	days, bands := dailyStacks(monthOfWaste(3, 11).DailyWaste)
	if len(days) != 3 || days[0] != "2026-01-01" || len(bands) != 9 {
		t.Fatalf("%d days, %d bands", len(days), len(bands))
	}
	// Groups cost 1..11 a day: the named ones are 11 (the hostile one),
	// 10, …, 4; the other band is 1 + 2 + 3.
	if bands[0].name != hostileName || bands[1].name != "team-09" || bands[7].name != "team-03" || bands[8].name != "3 other groups" {
		t.Fatalf("bands %q %q %q %q", bands[0].name, bands[1].name, bands[7].name, bands[8].name)
	}
	for i := range days {
		if bands[0].vals[i] != 11 || bands[8].vals[i] != 6 {
			t.Errorf("day %d: %v, %v", i, bands[0].vals[i], bands[8].vals[i])
		}
	}
	if _, bands := dailyStacks(monthOfWaste(2, 9).DailyWaste); len(bands) != 9 || strings.Contains(bands[8].name, "other") {
		t.Errorf("9 groups fit without an other band: %q", bands[8].name)
	}
	if svg, _ := dailyChart("x", nil); svg != "" {
		t.Error("a chart of no days")
	}
}
