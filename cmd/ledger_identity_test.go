package cmd

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seedance/seedance/internal/exit"
	"github.com/seedance/seedance/internal/testkit/dcgmtest"
	"github.com/seedance/seedance/internal/testkit/pgtest"
	"github.com/seedance/seedance/internal/testkit/promtest"
	"github.com/seedance/seedance/profile"
)

// clusterPrometheus is a real Prometheus holding half an hour of a
// simulated cluster of its own (its seed: its GPUs' UUIDs), its nodes
// named after it, with no cluster label.
func clusterPrometheus(t *testing.T, name string, seed int) *promtest.Server {
	t.Helper()
	p, err := profile.ReadFile(simProfile(t, "--interval", "15s", "--duration", "30m", "--sim-nodes", "2", "--sim-seed", fmt.Sprint(seed)), nil)
	if err != nil {
		t.Fatal(err)
	}
	for ni := range p.Nodes {
		p.Nodes[ni].Name = name + "-" + p.Nodes[ni].Name
	}
	var om bytes.Buffer
	if err := dcgmtest.WriteOpenMetrics(&om, p); err != nil {
		t.Fatal(err)
	}
	return promtest.Start(t, om.Bytes())
}

// TestClusterIdentity: a cluster is known by its data, not only its name.
// Two Prometheus servers without a cluster label, counted by cron jobs
// without --cluster, both fell back to "default" and each update read
// only from the other's data end (560 of 1,112 GPU-hours, every update
// exit 0); one cluster counted as --cluster Alpha and as alpha counted
// its GPUs twice. Now the second update of each is refused with one line
// naming both clusters and the way out, and the ledger keeps what it had;
// named, each counts on its own; a GPU that moved between clusters (its
// times do not overlap) is not refused. In SQLite and PostgreSQL.
func TestClusterIdentity(t *testing.T) {
	t.Parallel() // its settings are its own (testFactory)
	eu, us := clusterPrometheus(t, "eu", 1), clusterPrometheus(t, "us", 2)
	src := func(srv *promtest.Server) []string {
		return []string{"--source", "prometheus", "--prometheus-url", srv.URL, "--step", "15s", "--prometheus-chunk", "10m"}
	}
	const at = "2026-01-05T"
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			led := func() string {
				if backend == "postgres" {
					return pgtest.Start(t)
				}
				return filepath.Join(t.TempDir(), "ledger.db")
			}
			update := func(db string, want exit.Code, args ...string) result {
				t.Helper()
				r := run(t, nil, append([]string{"ledger", "update", "--ledger", db}, args...)...)
				if r.code != want {
					t.Fatalf("update %v: exit %d, want %d: %s", args, r.code, want, r.errOut)
				}
				return r
			}
			gpuHours := func(db string) string {
				t.Helper()
				r := run(t, nil, "ledger", "report", "--ledger", db, "-f", "csv", "--group-by", "cluster")
				if r.code != 0 {
					t.Fatalf("report: %s", r.errOut)
				}
				return r.out
			}
			oneLine := func(what, out string, want ...string) {
				t.Helper()
				line := strings.TrimSpace(out)
				for _, w := range want {
					if !strings.Contains(line, w) || strings.Contains(line, "\n") {
						t.Errorf("%s: want one line with %q: %s", what, w, out)
					}
				}
			}

			// Two unnamed clusters.
			db := led()
			update(db, 0, append([]string{"--start", at + "09:00:00Z", "--end", at + "09:10:00Z"}, src(eu)...)...)
			before := gpuHours(db)
			r := update(db, exit.Failure, append([]string{"--end", at + "09:20:00Z"}, src(us)...)...)
			oneLine("a second unnamed cluster", r.errOut, "cluster default", "none of its nodes", "--cluster")
			if after := gpuHours(db); after != before {
				t.Errorf("the refused update changed the ledger:\n%s\n%s", before, after)
			}
			update(db, 0, append([]string{"--end", at + "09:20:00Z"}, src(eu)...)...) // the first one goes on
			update(db, 0, append([]string{"--cluster", "us", "--start", at + "09:00:00Z", "--end", at + "09:20:00Z"}, src(us)...)...)

			// One cluster under two names.
			db = led()
			update(db, 0, append([]string{"--cluster", "Alpha", "--start", at + "09:00:00Z", "--end", at + "09:10:00Z"}, src(eu)...)...)
			before = gpuHours(db)
			r = update(db, exit.Failure, append([]string{"--cluster", "alpha", "--start", at + "09:00:00Z", "--end", at + "09:10:00Z"}, src(eu)...)...)
			oneLine("one cluster under two names", r.errOut, "cluster Alpha's", "cluster alpha's too", "rename-cluster")
			if after := gpuHours(db); after != before {
				t.Errorf("the refused update changed the ledger:\n%s\n%s", before, after)
			}
			// Its GPUs moved to another cluster later: no overlap.
			update(db, 0, append([]string{"--cluster", "alpha", "--start", at + "09:20:00Z", "--end", at + "09:30:00Z"}, src(eu)...)...)
		})
	}
}
