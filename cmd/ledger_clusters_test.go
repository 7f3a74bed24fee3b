package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
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
		srv := promtest.Start(t, om.Bytes())
		srcs[c] = []string{"--source", "prometheus", "--prometheus-url", srv.URL, "--step", "15s", "--prometheus-chunk", "10m", "--pushdown"}
	}
	for i, step := range []struct{ cluster, end string }{{"prod-eu", "09:10:00"}, {"prod-us", "09:20:00"}, {"prod-eu", "09:30:00"}, {"prod-us", "09:30:00"}} {
		args := append([]string{"ledger", "update", "--ledger", dsn, "--cluster", step.cluster, "--end", "2026-01-05T" + step.end + "Z"}, srcs[step.cluster]...)
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
}
