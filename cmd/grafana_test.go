package cmd

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seedance/seedance/internal/testkit/dcgmtest"
	"github.com/seedance/seedance/internal/testkit/promtest"
	"github.com/seedance/seedance/profile"
)

// TestGrafanaDashboard loads what seedance analyze --format prom writes
// for a simulated cluster (all reports), beside the cluster's
// dcgm-exporter metrics, into a real Prometheus, and runs every query of
// deploy/grafana/seedance.json against it: each must parse and return
// data (#15, item 2).
func TestGrafanaDashboard(t *testing.T) {
	path := simProfile(t, "--duration", "120", "--sim-nodes", "8")
	r := run(t, nil, "analyze", path, "--report", "all", "-f", "prom")
	if r.code != 0 {
		t.Fatal(r.errOut)
	}
	// The ledger's counters beside them, month-to-date by team.
	led := filepath.Join(t.TempDir(), "ledger.db")
	if u := run(t, nil, "ledger", "update", "--ledger", led, "-i", path); u.code != 0 {
		t.Fatal(u.errOut)
	}
	lr := run(t, nil, "ledger", "report", "--ledger", led, "--group-by", "team=team", "-f", "prom")
	if lr.code != 0 {
		t.Fatal(lr.errOut)
	}
	r.out += lr.out
	sim, err := profile.ReadFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	var om bytes.Buffer
	if err := dcgmtest.WriteOpenMetrics(&om, sim); err != nil {
		t.Fatal(err)
	}
	at := sim.EndedAt.Unix()
	body := bytes.TrimSuffix(om.Bytes(), []byte("# EOF\n"))
	var b bytes.Buffer
	b.Write(body)
	sc := bufio.NewScanner(strings.NewReader(r.out))
	for sc.Scan() { // two scrapes of the textfile, a minute apart
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			b.WriteString(line + "\n")
			continue
		}
		fmt.Fprintf(&b, "%s %d\n%s %d\n", line, at-60, line, at)
	}
	b.WriteString("# EOF\n")
	srv := promtest.Start(t, b.Bytes())

	raw, err := os.ReadFile("../deploy/grafana/seedance.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatal(err)
	}
	if len(dash.Panels) < 8 {
		t.Fatalf("%d panels", len(dash.Panels))
	}
	for _, p := range dash.Panels {
		for _, target := range p.Targets {
			resp, err := http.PostForm(srv.URL+"/api/v1/query", url.Values{"query": {target.Expr}, "time": {fmt.Sprint(at)}})
			if err != nil {
				t.Fatal(err)
			}
			var ans struct {
				Status string `json:"status"`
				Error  string `json:"error"`
				Data   struct {
					Result []json.RawMessage `json:"result"`
				} `json:"data"`
			}
			err = json.NewDecoder(resp.Body).Decode(&ans)
			resp.Body.Close()
			if err != nil || ans.Status != "success" || len(ans.Data.Result) == 0 {
				t.Errorf("panel %q: %s: %v %s %s (%d series)", p.Title, target.Expr, err, ans.Status, ans.Error, len(ans.Data.Result))
			}
		}
	}
}
