package cmd

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/testkit/dcgmtest"
	"github.com/seedance/seedance/internal/testkit/jsonnear"
	"github.com/seedance/seedance/internal/testkit/promtest"
	"github.com/seedance/seedance/profile"
)

// simPrometheus starts a real Prometheus holding a simulated profile (made
// with args) as dcgm-exporter writes it.
func simPrometheus(t *testing.T, args ...string) *promtest.Server {
	t.Helper()
	sim, err := profile.ReadFile(simProfile(t, args...), nil)
	if err != nil {
		t.Fatal(err)
	}
	var om bytes.Buffer
	if err := dcgmtest.WriteOpenMetrics(&om, sim); err != nil {
		t.Fatal(err)
	}
	return promtest.Start(t, om.Bytes())
}

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
	srv := simPrometheus(t, "--interval", "15s", "--duration", "30m", "--sim-nodes", "3")
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
	// for the ledger, which then holds 09:00 to 09:30. With a ledger step
	// shorter than the gap it asks the same queries: the gap is read once and
	// the recording counted once, not once a step.
	stepped := filepath.Join(dir, "stepped.db")
	if r := run(t, nil, append([]string{"analyze", "--ledger", stepped}, first...)...); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	var asked []int
	for _, db := range [][]string{{"--ledger", filepath.Join(dir, "l.db")}, {"--ledger", stepped, "--ledger-step", "4m"}} {
		before := queriesServed(t, srv.URL)
		if r := run(t, nil, append(append([]string{"analyze"}, db...), window("2026-01-05T09:20:00Z", "2026-01-05T09:30:00Z")...)...); r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.errOut)
		}
		asked = append(asked, queriesServed(t, srv.URL)-before)
	}
	if asked[0] != asked[1] {
		t.Errorf("after the gap: %d queries, with a 4m step %d", asked[0], asked[1])
	}
	whole := run(t, nil, append([]string{"analyze"}, window("2026-01-05T09:00:00Z", "2026-01-05T09:30:00Z")...)...)
	sameAttribution(t, "after a gap", filepath.Join(dir, "l.db"), whole.out)
	sameAttribution(t, "after a gap, stepped", stepped, whole.out)
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
	jsonnear.Equal(t, what+": attribution", got["attribution"], want["attribution"])
	jsonnear.Equal(t, what+": summary.idle_cost_usd", got["summary"].(map[string]any)["idle_cost_usd"], want["summary"].(map[string]any)["idle_cost_usd"])
	if !strings.Contains(rep.out, `"attribution"`) {
		t.Errorf("%s: no attribution in the ledger's report", what)
	}
}

// spanRecorder stands in front of a Prometheus server and records how much
// time each query covers: a range query its range plus the longest range
// selector in its expression, an instant query that selector.
type spanRecorder struct {
	mu    sync.Mutex
	spans []time.Duration
}

func (rec *spanRecorder) front(t *testing.T, target string) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		form, _ := url.ParseQuery(string(body))
		for k, v := range r.URL.Query() {
			form[k] = append(form[k], v...)
		}
		if strings.HasPrefix(r.URL.Path, "/api/v1/query") {
			rec.record(t, form)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

var rangeSelector = regexp.MustCompile(`\[(\d+(?:ms|s|m|h))\]`)

func (rec *spanRecorder) record(t *testing.T, form url.Values) {
	span := time.Duration(0)
	for _, m := range rangeSelector.FindAllStringSubmatch(form.Get("query"), -1) {
		d, err := time.ParseDuration(m[1])
		if err != nil {
			t.Errorf("a range selector: %v", err)
		}
		span = max(span, d)
	}
	if form.Get("start") != "" {
		start, err1 := strconv.ParseFloat(form.Get("start"), 64)
		end, err2 := strconv.ParseFloat(form.Get("end"), 64)
		if err1 != nil || err2 != nil {
			t.Errorf("a range query's start and end: %q %q", form.Get("start"), form.Get("end"))
		}
		span += time.Duration((end - start) * float64(time.Second))
	}
	rec.mu.Lock()
	rec.spans = append(rec.spans, span)
	rec.mu.Unlock()
}

// longest is the longest span recorded since the last call.
func (rec *spanRecorder) longest() (time.Duration, int) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	out, n := time.Duration(0), len(rec.spans)
	for _, s := range rec.spans {
		out = max(out, s)
	}
	rec.spans = nil
	return out, n
}

// TestSteppedUpdateReadsEachHourOnce: an update over a range the source
// holds little of, in steps of an hour, asks no query longer than a step
// (and its context): a run of empty steps does not make each next step read
// again from where the ledger's data ends (a ledger a week behind read 168
// steps of growing length: five minutes where it takes seconds). A new
// ledger whose first steps are empty counts the data the later ones find,
// and the ledger then equals one analysis of the range.
func TestSteppedUpdateReadsEachHourOnce(t *testing.T) {
	var rec spanRecorder
	srv := simPrometheus(t, "--interval", "15s", "--duration", "30m", "--sim-nodes", "2")
	front := rec.front(t, srv.URL)
	db := filepath.Join(t.TempDir(), "l.db")
	update := func(args ...string) {
		t.Helper()
		r := run(t, nil, append([]string{"ledger", "update", "--ledger", db, "--source", "prometheus", "--prometheus-url", front, "--ledger-step", "1h"}, args...)...)
		if r.code != 0 {
			t.Fatalf("ledger update %v: exit %d: %s", args, r.code, r.errOut)
		}
		longest, n := rec.longest()
		if n == 0 || longest > 80*time.Minute {
			t.Errorf("ledger update %v: %d queries, the longest covers %v (a step is 1h)", args, n, longest)
		}
	}
	// Nine empty hours, then the data, into a new ledger; then ten empty
	// hours after it.
	update("--start", "2026-01-05T00:00:00Z", "--end", "2026-01-05T09:30:00Z")
	update("--end", "2026-01-05T20:00:00Z")
	one := run(t, nil, "analyze", "--source", "prometheus", "--prometheus-url", srv.URL, "--start", "2026-01-05T09:00:00Z", "--end", "2026-01-05T09:30:00Z", "-f", "json", "--report", "attribution")
	if one.code != 0 {
		t.Fatalf("analyze: %s", one.errOut)
	}
	sameAttribution(t, "after empty steps", db, one.out)
}
