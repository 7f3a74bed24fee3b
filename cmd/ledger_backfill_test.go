package cmd

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seedance/seedance/internal/exit"
	"github.com/seedance/seedance/internal/testkit/dcgmtest"
	"github.com/seedance/seedance/internal/testkit/pgtest"
	"github.com/seedance/seedance/internal/testkit/promtest"
	"github.com/seedance/seedance/profile"
)

// holedPrometheus is a real Prometheus holding a simulated hour from
// 09:00, less every sample of [from, to) (seconds after 09:00): a scrape
// outage that another read fills later.
func holedPrometheus(t *testing.T, sim *profile.Profile, from, to float64) *promtest.Server {
	t.Helper()
	holed := *sim
	holed.Nodes = append([]profile.Node(nil), sim.Nodes...)
	for ni := range holed.Nodes {
		n := &holed.Nodes[ni]
		n.GPUs = append([]profile.GPU(nil), n.GPUs...)
		for gi := range n.GPUs {
			s := &n.GPUs[gi].Series
			for m := profile.Metric(0); m < profile.NumMetrics; m++ {
				col := s.Col(m)
				if *col == nil {
					continue
				}
				*col = append(profile.Values(nil), *col...)
				for i, at := range s.T {
					if at >= from && at < to {
						(*col)[i] = profile.Null
					}
				}
			}
		}
	}
	var om bytes.Buffer
	if err := dcgmtest.WriteOpenMetrics(&om, &holed); err != nil {
		t.Fatal(err)
	}
	return promtest.Start(t, om.Bytes())
}

// TestBackfillFromPrometheus: a ledger kept from a Prometheus that lost
// twenty minutes (a scrape outage) is backfilled from one that holds them
// (a replica, or the same server after a remote-write backfill): an
// update whose --end is at or before the ledger's data end, in one read
// or in steps, and one whose range runs past it, count the hole and
// recount its neighbours, so the ledger equals one analysis of the full
// data, energy included, in SQLite and PostgreSQL. Before, every such
// update printed "nothing after …" and exited 0, and the hole stayed. A
// --start past the data end is refused: it would leave a hole.
func TestBackfillFromPrometheus(t *testing.T) {
	t.Parallel() // its settings are its own (testFactory)
	sim, err := profile.ReadFile(simProfile(t, "--interval", "15s", "--duration", "60m", "--sim-nodes", "3"), nil)
	if err != nil {
		t.Fatal(err)
	}
	var om bytes.Buffer
	if err := dcgmtest.WriteOpenMetrics(&om, sim); err != nil {
		t.Fatal(err)
	}
	full, holed := promtest.Start(t, om.Bytes()), holedPrometheus(t, sim, 20*60, 40*60)
	src := func(url string) []string {
		return []string{"--source", "prometheus", "--prometheus-url", url, "--step", "15s", "--prometheus-chunk", "10m", "--idle-window", "30s"}
	}
	const at = "2026-01-05T"
	one := run(t, nil, append([]string{"analyze", "--start", at + "09:00:00Z", "--end", at + "10:00:00Z", "-f", "json",
		"--report", "attribution", "--group-by", "namespace"}, src(full.URL)...)...)
	if one.code != 0 {
		t.Fatalf("analyze: %s", one.errOut)
	}
	for _, c := range []struct {
		name, firstEnd, step, end string
		wantSteps                 string
	}{
		{"one read", "10:00:00", "1h", "10:00:00", ""},
		{"in steps", "10:00:00", "20m", "10:00:00", "in 3 steps"},
		{"in steps of less than a bucket past the data end", "09:50:00", "15m", "10:00:00", "in 6 steps"},
		{"postgres", "10:00:00", "20m", "10:00:00", "in 3 steps"},
	} {
		t.Run(c.name, func(t *testing.T) {
			led := filepath.Join(t.TempDir(), "ledger.db")
			if c.name == "postgres" {
				led = pgtest.Start(t)
			}
			update := func(url string, args ...string) result {
				t.Helper()
				r := run(t, nil, append(append([]string{"ledger", "update", "--ledger", led, "--bucket", "10m"}, args...), src(url)...)...)
				if r.code != 0 {
					t.Fatalf("update %v: exit %d: %s", args, r.code, r.errOut)
				}
				return r
			}
			update(holed.URL, "--start", at+"09:00:00Z", "--end", at+c.firstEnd+"Z")
			r := update(full.URL, "--start", at+"09:00:00Z", "--end", at+c.end+"Z", "--ledger-step", c.step)
			line := r.errOut
			if !strings.Contains(line, "cluster default: ") || !strings.Contains(line, "added 2 bucket(s) it lacked, 2026-01-05T09:20:00Z to 2026-01-05T09:30:00Z") ||
				!strings.Contains(line, "recounted") || !strings.Contains(line, c.wantSteps) {
				t.Errorf("the backfill's line: %s", line)
			}
			sameAsOneAnalysis(t, led, one.out)
			// The same backfill again counts nothing twice.
			r = update(full.URL, "--start", at+"09:00:00Z", "--end", at+"10:00:00Z", "--ledger-step", c.step)
			if !strings.Contains(r.errOut, "counted already") || strings.Contains(r.errOut, "added") {
				t.Errorf("the backfill again: %s", r.errOut)
			}
			sameAsOneAnalysis(t, led, one.out)
			// A --start past the data end would leave a hole.
			r = run(t, nil, append([]string{"ledger", "update", "--ledger", led, "--start", at + "10:30:00Z", "--end", at + "10:40:00Z"}, src(full.URL)...)...)
			if r.code != exit.Usage || !strings.Contains(r.errOut, "would leave a hole") || strings.Count(strings.TrimSpace(r.errOut), "\n") > 0 {
				t.Errorf("a --start past the data end: exit %d: %s", r.code, r.errOut)
			}
			sameAsOneAnalysis(t, led, one.out)
		})
	}
}

// TestHoleWarningsCommandFillsIt: the command a hole's warning prints,
// run as printed against a Prometheus that holds the hole's data, fills
// it: the ledger equals one analysis of the whole, and the warning is
// gone from its report.
func TestHoleWarningsCommandFillsIt(t *testing.T) {
	sim, err := profile.ReadFile(simProfile(t, "--interval", "15s", "--duration", "60m", "--sim-nodes", "3"), nil)
	if err != nil {
		t.Fatal(err)
	}
	var om bytes.Buffer
	if err := dcgmtest.WriteOpenMetrics(&om, sim); err != nil {
		t.Fatal(err)
	}
	full, holed := promtest.Start(t, om.Bytes()), holedPrometheus(t, sim, 20*60, 40*60)
	src := func(url string) []string {
		return []string{"--source", "prometheus", "--prometheus-url", url, "--step", "15s", "--prometheus-chunk", "10m", "--idle-window", "30s"}
	}
	led := filepath.Join(t.TempDir(), "ledger.db")
	r := run(t, nil, append([]string{"ledger", "update", "--ledger", led, "--bucket", "10m", "--start", "2026-01-05T09:00:00Z", "--end", "2026-01-05T10:00:00Z"}, src(holed.URL)...)...)
	_, printed, ok := strings.Cut(r.errOut, "fill it from a source that holds it: ")
	printed, _, _ = strings.Cut(printed, ")")
	args := strings.Fields(printed)
	if r.code != 0 || !ok || len(args) < 3 || args[0] != "seedance" || args[1] != "ledger" || args[2] != "update" {
		t.Fatalf("the holed update's warning: exit %d: %s", r.code, r.errOut)
	}
	if r := run(t, nil, append(append(args[1:], "--ledger", led), src(full.URL)...)...); r.code != 0 || !strings.Contains(r.errOut, "added") {
		t.Fatalf("%s: exit %d: %s", printed, r.code, r.errOut)
	}
	one := run(t, nil, append([]string{"analyze", "--start", "2026-01-05T09:00:00Z", "--end", "2026-01-05T10:00:00Z", "-f", "json",
		"--report", "attribution", "--group-by", "namespace"}, src(full.URL)...)...)
	if one.code != 0 {
		t.Fatalf("analyze: %s", one.errOut)
	}
	sameAsOneAnalysis(t, led, one.out)
	if rep := run(t, nil, "ledger", "report", "--ledger", led, "-f", "json"); strings.Contains(rep.out, "no sample of any GPU") {
		t.Errorf("the filled hole is still a warning: %s", rep.out)
	}
}
