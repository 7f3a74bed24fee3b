package render

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/seedance/seedance/recommend"
	"github.com/seedance/seedance/report"

	"github.com/seedance/seedance/internal/testkit/browsertest"
	"github.com/seedance/seedance/internal/testkit/golden"
)

// svgStructure summarises each chart: its id and how many of each element
// it has, in document order. Golden-tested instead of pixels.
func svgStructure(t *testing.T, page []byte) string {
	var out []string
	for _, m := range regexp.MustCompile(`(?s)<svg .*?</svg>`).FindAll(page, -1) {
		dec := xml.NewDecoder(bytes.NewReader(m))
		id := ""
		counts := map[string]int{}
		for {
			tok, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("chart is not well-formed XML: %v", err)
			}
			if se, ok := tok.(xml.StartElement); ok {
				counts[se.Name.Local]++
				for _, a := range se.Attr {
					if se.Name.Local == "svg" && a.Name.Local == "id" {
						id = a.Value
					}
				}
			}
		}
		var kinds []string
		for k, v := range counts {
			kinds = append(kinds, fmt.Sprintf("%s=%d", k, v))
		}
		sort.Strings(kinds)
		out = append(out, id+": "+strings.Join(kinds, " "))
	}
	return strings.Join(out, "\n") + "\n"
}

func TestHTMLStructureGolden(t *testing.T) {
	page := render(t, "html", simReport(t, recommend.DialectKubectl), Options{})
	golden.Check(t, "testdata/report-sim.html.structure", []byte(svgStructure(t, page)))
	all := render(t, "html", simReportWith(t, recommend.DialectKubectl, true), Options{Report: "all"})
	golden.Check(t, "testdata/report-sim-all.html.structure", []byte(svgStructure(t, all)))
	if !bytes.Contains(all, []byte(`<table id="scaling">`)) || !bytes.Contains(all, []byte("<h2>Migration plan</h2>")) ||
		!bytes.Contains(all, []byte(`<table class="sortable" id="attribution">`)) {
		t.Fatal("the scaling, migration or attribution sections are missing")
	}
	for _, bad := range []string{"http://", "https://", "//cdn", "@import", "url("} {
		if i := bytes.Index(page, []byte(bad)); i >= 0 && !bytes.Contains(page[max(0, i-60):i], []byte("xmlns")) {
			t.Errorf("page refers to %q: …%s…", bad, page[max(0, i-60):min(len(page), i+60)])
		}
	}
}

func writePage(t *testing.T, r *report.Result) string {
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, render(t, "html", r, Options{}), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestHTMLInBrowser renders the simulated cluster's report in headless
// Chromium: a screenshot that is not blank, headline numbers in the DOM
// equal to the JSON report's, the script allowed by the page's CSP, and no
// request to anything.
func TestHTMLInBrowser(t *testing.T) {
	r := simReport(t, recommend.DialectKubectl)
	r.SetBaseline(&report.Baseline{Summary: r.Summary})
	path := writePage(t, r)
	b := browsertest.New(t)

	img, err := png.Decode(bytes.NewReader(b.Screenshot(t, path, 1000, 1400)))
	if err != nil {
		t.Fatal(err)
	}
	colors, nonWhite := map[uint32]bool{}, 0
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y += 2 {
		for x := bounds.Min.X; x < bounds.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colors[(r>>8)<<16|(g>>8)<<8|bl>>8] = true
			if r>>8 < 240 || g>>8 < 240 || bl>>8 < 240 {
				nonWhite++
			}
		}
	}
	total := (bounds.Dx() / 2) * (bounds.Dy() / 2)
	if len(colors) < 30 || nonWhite < total/10 {
		t.Fatalf("screenshot looks blank: %d colours, %d of %d pixels not white", len(colors), nonWhite, total)
	}

	dom := b.DumpDOM(t, path)
	if !strings.Contains(dom, `data-js="on"`) {
		t.Error("the page's script did not run (CSP hash?)")
	}
	want := map[string]float64{
		"summary.avg_gpu_util_pct": *r.Summary.AvgGPUUtilPct, "summary.idle_gpu_hours": *r.Summary.IdleGPUHours,
		"summary.idle_cost_usd": *r.Summary.IdleCostUSD, "summary.energy_kwh": *r.Summary.EnergyKWh,
		"summary.projected_monthly_savings_usd": *r.Summary.ProjectedMonthlySavingsUSD, "summary.idle_nodes": float64(r.Summary.IdleNodes),
	}
	re := regexp.MustCompile(`data-field="([^"]+)" data-value="([^"]+)"`)
	found := 0
	for _, m := range re.FindAllStringSubmatch(dom, -1) {
		v, _ := strconv.ParseFloat(m[2], 64)
		if w, ok := want[m[1]]; ok {
			found++
			if v != w {
				t.Errorf("%s in the page = %v, JSON report = %v", m[1], v, w)
			}
		}
	}
	if found != len(want) {
		t.Errorf("found %d of %d headline numbers in the DOM", found, len(want))
	}
	if !strings.Contains(dom, money(*r.Summary.IdleCostUSD)) || !strings.Contains(dom, "vs baseline") {
		t.Error("headline text or baseline delta missing")
	}
	if reqs := b.PageRequests(); len(reqs) != 0 {
		t.Fatalf("the page made network requests: %q", reqs)
	}
}

// TestBrowserSeesRequests proves the request check can fail: a page that
// loads an image from the network reaches the recording proxy.
func TestBrowserSeesRequests(t *testing.T) {
	b := browsertest.New(t)
	path := filepath.Join(t.TempDir(), "leaky.html")
	if err := os.WriteFile(path, []byte(`<!DOCTYPE html><img src="http://198.51.100.7/pixel.png">`), 0o644); err != nil {
		t.Fatal(err)
	}
	b.DumpDOM(t, path)
	if reqs := b.PageRequests(); len(reqs) != 1 || !strings.Contains(reqs[0], "198.51.100.7") {
		t.Fatalf("the recording proxy did not see the page's request: %q", b.RequestLines())
	}
}

func TestHTMLHostileNames(t *testing.T) {
	r := simReport(t, recommend.DialectKubectl)
	evil := `<img src=x onerror="document.title='pwned'"><script>document.title='pwned'</script>`
	r.Nodes[0].Name = evil
	r.Suggestions[0].Text = evil
	r.Nodes[1].Models = []string{evil}
	path := writePage(t, r)
	dom := browsertest.New(t).DumpDOM(t, path)
	if strings.Contains(dom, "<title>pwned") || strings.Contains(dom, "<script>document.title") || strings.Contains(dom, `<img src="x"`) {
		t.Fatal("a hostile node name became markup")
	}
	if !strings.Contains(dom, "&lt;script&gt;document.title='pwned'&lt;/script&gt;") {
		t.Fatal("the hostile name is not shown as text")
	}
}

// TestHTMLAttributionInBrowser: the attribution section, its table and its
// chart of the top wasters, as a real browser builds the page.
func TestHTMLAttributionInBrowser(t *testing.T) {
	r := simReportWith(t, recommend.DialectKubectl, true)
	path := writePage(t, r)
	dom := browsertest.New(t).DumpDOM(t, path)
	if !strings.Contains(dom, `id="chart-attribution"`) || !strings.Contains(dom, "Who held the idle GPUs") {
		t.Fatal("no attribution chart in the page")
	}
	i := strings.Index(dom, `id="attribution"`)
	j := strings.Index(dom[i:], "</table>")
	if i < 0 || j < 0 {
		t.Fatal("no attribution table")
	}
	if rows := strings.Count(dom[i:i+j], "<tr>"); rows != len(r.Attribution.Groups)+2 { // header, groups, held by no workload
		t.Fatalf("%d rows for %d groups", rows, len(r.Attribution.Groups))
	}
}
