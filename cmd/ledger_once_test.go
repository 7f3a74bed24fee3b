package cmd

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/seedance/seedance/internal/testkit/dcgmtest"
	"github.com/seedance/seedance/internal/testkit/promtest"
	"github.com/seedance/seedance/profile"
)

// queriesServed is how many range and instant queries a real Prometheus
// has answered, from its own /metrics.
func queriesServed(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	line := regexp.MustCompile(`(?m)^prometheus_http_requests_total\{[^}]*handler="/api/v1/query(_range)?"[^}]*\} (\S+)$`)
	for _, m := range line.FindAllStringSubmatch(string(body), -1) {
		v, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			t.Fatal(err)
		}
		n += int(v)
	}
	return n
}

// TestAnalyzeLedgerReadsTheSourceOnce: analyze --source prometheus
// --ledger asks the Prometheus server exactly the queries the analysis
// alone asks (the ledger counts the analysis's recording, not a second
// read), and the ledger then equals the analysis; a later run over a window
// that leaves a gap after the ledger's data reads that gap too, and the
// ledger then equals an analysis of the whole range.
func TestAnalyzeLedgerReadsTheSourceOnce(t *testing.T) {
	sim, err := profile.ReadFile(simProfile(t, "--interval", "15s", "--duration", "30m", "--sim-nodes", "3"), nil)
	if err != nil {
		t.Fatal(err)
	}
	var om bytes.Buffer
	if err := dcgmtest.WriteOpenMetrics(&om, sim); err != nil {
		t.Fatal(err)
	}
	srv := promtest.Start(t, om.Bytes())
	dir := t.TempDir()
	window := func(start, end string) []string {
		return []string{"--source", "prometheus", "--prometheus-url", srv.URL, "--start", start, "--end", end, "-f", "json", "--report", "attribution"}
	}
	first := window("2026-01-05T09:00:00Z", "2026-01-05T09:10:00Z")
	before := queriesServed(t, srv.URL)
	alone := run(t, nil, append([]string{"analyze"}, first...)...)
	mid := queriesServed(t, srv.URL)
	kept := run(t, nil, append([]string{"analyze", "--ledger", filepath.Join(dir, "l.db")}, first...)...)
	after := queriesServed(t, srv.URL)
	if alone.code != 0 || kept.code != 0 {
		t.Fatalf("exit %d, %d: %s%s", alone.code, kept.code, alone.errOut, kept.errOut)
	}
	if a, k := mid-before, after-mid; a == 0 || k != a {
		t.Errorf("the analysis alone asked %d queries; with --ledger, %d", a, k)
	}
	sameAttribution(t, "after one run", filepath.Join(dir, "l.db"), alone.out)
	// 09:10 to 09:20 is not analyzed: the next run, 09:20 to 09:30, reads it
	// for the ledger, which then holds 09:00 to 09:30.
	if r := run(t, nil, append([]string{"analyze", "--ledger", filepath.Join(dir, "l.db")}, window("2026-01-05T09:20:00Z", "2026-01-05T09:30:00Z")...)...); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	whole := run(t, nil, append([]string{"analyze"}, window("2026-01-05T09:00:00Z", "2026-01-05T09:30:00Z")...)...)
	sameAttribution(t, "after a gap", filepath.Join(dir, "l.db"), whole.out)
}

// sameAttribution compares a ledger's attribution and idle cost with an
// analysis report's.
func sameAttribution(t *testing.T, what, db, analysis string) {
	t.Helper()
	rep := run(t, nil, "ledger", "report", "--ledger", db, "-f", "json")
	var got, want map[string]any
	if err := json.Unmarshal([]byte(rep.out), &got); rep.code != 0 || err != nil {
		t.Fatalf("%s: ledger report: exit %d %v: %s", what, rep.code, err, rep.errOut)
	}
	if err := json.Unmarshal([]byte(analysis), &want); err != nil {
		t.Fatalf("%s: %v: %s", what, err, analysis)
	}
	sameJSON(t, what+": attribution", got["attribution"], want["attribution"])
	sameJSON(t, what+": summary.idle_cost_usd", got["summary"].(map[string]any)["idle_cost_usd"], want["summary"].(map[string]any)["idle_cost_usd"])
	if !strings.Contains(rep.out, `"attribution"`) {
		t.Errorf("%s: no attribution in the ledger's report", what)
	}
}
