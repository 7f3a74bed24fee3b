package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seedance/seedance/internal/testkit/dcgmtest"
	"github.com/seedance/seedance/internal/testkit/pgtest"
	"github.com/seedance/seedance/internal/testkit/promtest"
	"github.com/seedance/seedance/profile"
)

// TestLedgerOfTwoPrometheusServers runs docs/ledger.md's example of
// several clusters: two real Prometheus servers, each a cluster's, counted
// by interleaved updates into one real PostgreSQL ledger. Each cluster's
// report equals one analyze of its own server; the report by cluster holds
// both, and its totals are their sums.
func TestLedgerOfTwoPrometheusServers(t *testing.T) {
	t.Parallel() // its settings are its own (testFactory)
	dsn := pgtest.Start(t)
	clusters := []string{"prod-eu", "prod-us"}
	srcs := map[string][]string{}
	for i, c := range clusters {
		p, err := profile.ReadFile(simProfile(t, "--interval", "15s", "--duration", "30m", "--sim-nodes", "3", "--sim-seed", fmt.Sprint(i+1)), nil)
		if err != nil {
			t.Fatal(err)
		}
		for ni := range p.Nodes {
			p.Nodes[ni].Name = c + "-" + p.Nodes[ni].Name
		}
		var om bytes.Buffer
		if err := dcgmtest.WriteOpenMetrics(&om, p); err != nil {
			t.Fatal(err)
		}
		// prod-us's Prometheus names its cluster in its external labels,
		// as a Prometheus of one cluster of several does: its first
		// update, which reads from --start, needs no --cluster. (One that
		// starts where the cluster's data ends needs it: the cluster is
		// known only once the source is read.)
		srv := promtest.Start(t, om.Bytes())
		if c == "prod-us" {
			srv = promtest.StartExternal(t, om.Bytes(), c)
		}
		srcs[c] = []string{"--source", "prometheus", "--prometheus-url", srv.URL, "--step", "15s", "--prometheus-chunk", "10m", "--pushdown"}
	}
	for i, step := range []struct{ cluster, end string }{{"prod-eu", "09:10:00"}, {"prod-us", "09:20:00"}, {"prod-eu", "09:30:00"}, {"prod-us", "09:30:00"}} {
		args := append([]string{"ledger", "update", "--ledger", dsn, "--end", "2026-01-05T" + step.end + "Z"}, srcs[step.cluster]...)
		if step.cluster == "prod-eu" || i >= 2 {
			args = append(args, "--cluster", step.cluster)
		}
		if i < 2 {
			args = append(args, "--start", "2026-01-05T09:00:00Z")
		}
		if r := run(t, nil, args...); r.code != 0 || !strings.Contains(r.errOut, "cluster "+step.cluster+": settled") {
			t.Fatalf("update of %s to %s: %s", step.cluster, step.end, r.errOut)
		}
	}
	// An update that names no cluster is refused: the ledger holds two.
	if r := run(t, nil, append([]string{"ledger", "update", "--ledger", dsn, "--end", "2026-01-05T09:30:00Z"}, srcs["prod-eu"]...)...); r.code == 0 ||
		!strings.Contains(r.errOut, "it holds clusters prod-eu, prod-us") {
		t.Fatalf("an unnamed update: %d %s", r.code, r.errOut)
	}
	var total float64
	for _, c := range clusters {
		one := run(t, nil, append([]string{"analyze", "--start", "2026-01-05T09:00:00Z", "--end", "2026-01-05T09:30:00Z", "-f", "json",
			"--report", "attribution", "--group-by", "namespace"}, srcs[c]...)...)
		if one.code != 0 {
			t.Fatalf("analyze %s: %s", c, one.errOut)
		}
		sameAsOneAnalysis(t, dsn, one.out, "--cluster", c)
		var r struct {
			Summary struct {
				GPUHours float64 `json:"gpu_hours"`
			}
		}
		if err := json.Unmarshal([]byte(one.out), &r); err != nil {
			t.Fatal(err)
		}
		total += r.Summary.GPUHours
	}
	by := run(t, nil, "ledger", "report", "--ledger", dsn, "-f", "json", "--by", "cluster")
	var r struct {
		Clusters []string
		Summary  struct {
			GPUHours float64 `json:"gpu_hours"`
		}
		Attribution struct {
			Groups []struct{ Key []string }
		}
	}
	if err := json.Unmarshal([]byte(by.out), &r); err != nil || by.code != 0 {
		t.Fatalf("by cluster: %v %s", err, by.errOut)
	}
	if strings.Join(r.Clusters, ",") != "prod-eu,prod-us" || len(r.Attribution.Groups) != 2 || math.Abs(r.Summary.GPUHours-total) > 1e-6*total {
		t.Fatalf("by cluster: %+v, want GPU-hours %v", r, total)
	}
	chargesAddUp(t, dsn)
}

// chargesAddUp: the ledger's charges, by every sharing mode and scope and
// by cluster and namespace, sum to their total to the cent, the same
// total whatever the rule, and an export's BilledCost sums to it too.
func chargesAddUp(t *testing.T, dsn string) {
	t.Helper()
	bill := ""
	for _, mode := range []string{"none", "weighted", "even"} {
		for _, scope := range []string{"node", "pool", "cluster"} {
			rep := run(t, nil, "ledger", "report", "--ledger", dsn, "-f", "json", "--by", "cluster", "--by", "namespace", "--share-idle", mode, "--share-idle-by", scope)
			var r struct {
				Chargeback struct {
					Rows []struct {
						CostUSD float64 `json:"cost_usd"`
					}
					Unallocated struct {
						CostUSD float64 `json:"cost_usd"`
					}
					Total struct {
						CostUSD float64 `json:"cost_usd"`
					}
				}
			}
			if err := json.Unmarshal([]byte(rep.out), &r); err != nil || rep.code != 0 {
				t.Fatalf("%s/%s: %v %s", mode, scope, err, rep.errOut)
			}
			cents := int64(math.Round(r.Chargeback.Unallocated.CostUSD * 100))
			for _, row := range r.Chargeback.Rows {
				cents += int64(math.Round(row.CostUSD * 100))
			}
			total := fmt.Sprintf("%.2f", r.Chargeback.Total.CostUSD)
			if bill == "" {
				bill = total
			}
			if fmt.Sprintf("%.2f", float64(cents)/100) != total || total != bill || len(r.Chargeback.Rows) < 2 {
				t.Errorf("%s/%s: the rows sum to %d cents, the total is %s (with none: %s)", mode, scope, cents, total, bill)
			}
		}
	}
	exp := run(t, nil, "ledger", "export", "--ledger", dsn, "--format", "focus", "--share-idle", "even", "-o", filepath.Join(t.TempDir(), "focus.csv"))
	if want := "export: BilledCost sums to " + bill + " USD; data through prod-eu 2026-01-05T09:30:00Z, prod-us 2026-01-05T09:30:00Z\n"; exp.code != 0 || exp.errOut != want {
		t.Errorf("export: exit %d %q, want %q", exp.code, exp.errOut, want)
	}
}
