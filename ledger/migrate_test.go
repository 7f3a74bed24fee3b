package ledger

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source/sim"

	"github.com/seedance/seedance/internal/testkit/jsonnear"
)

// TestMigrationFromSchema3 opens a ledger that seedance wrote with schema 3
// (testdata/ledger-v3.db: `seedance ledger update` of two hours of a
// simulated cluster, `--sim-nodes 3 --sim-seed 5 --interval 15s`, by the
// build before schema 4) and the reports that build gave of it. The first
// update of this build migrates it, its rows becoming the named cluster's;
// the reports then equal the old ones figure for figure, and the same data
// counted again is counted already.
func TestMigrationFromSchema3(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v3.db")
	b, err := os.ReadFile("testdata/ledger-v3.db")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), path, Options{ReadOnly: true}); err == nil {
		t.Fatal("a reader migrated, or read, a ledger of schema 3")
	}
	// Migrated without a name, then updated with one: the same cluster
	// under a new name is refused, and renamed.
	openDSN(t, path).Close()
	w, err := Open(context.Background(), path, Options{Cluster: "prod-a"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	sameChargeDays(t, w) // schema 5 filled the per-day charges from the hourly rows
	p, err := sim.Record(sim.Options{Nodes: 3, Scenario: sim.ScenarioMixed, Seed: 5}, 15*time.Second, 2*time.Hour, profile.Generator{Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Update(context.Background(), UpdateSpec{Inputs: []*profile.Profile{p}, Params: params()}); err == nil ||
		!strings.Contains(err.Error(), "cluster prod-a is new, and every node of its input is counted already for these hours as cluster default") ||
		!strings.Contains(err.Error(), "seedance ledger rename-cluster default prod-a") {
		t.Fatalf("the same cluster under a new name: %v", err)
	}
	if err := w.RenameCluster(context.Background(), "default", "prod-a"); err != nil {
		t.Fatal(err)
	}
	if err := w.RenameCluster(context.Background(), "nope", "prod-b"); err == nil || !strings.Contains(err.Error(), `no cluster "nope"`) {
		t.Fatalf("renaming a cluster that is not there: %v", err)
	}
	up, err := w.Update(context.Background(), UpdateSpec{Inputs: []*profile.Profile{p}, Params: params()})
	if err != nil || !up.Nothing || up.Already == 0 || len(up.Added)+len(up.Recounted) != 0 || up.Cluster != "prod-a" {
		t.Fatalf("the same data again: %+v, %v", up, err)
	}
	for _, c := range []struct {
		file    string
		groupBy []string
	}{{"testdata/ledger-v3-report.json", []string{"namespace"}}, {"testdata/ledger-v3-report-workload.json", []string{"team=team", "workload"}}} {
		raw, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		var want map[string]any
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		got, err := w.Report(context.Background(), Query{GroupBy: c.groupBy, EnergyUSDPerKWh: 0.12})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Clusters) != 1 || got.Clusters[0] != "prod-a" {
			t.Fatalf("clusters %v", got.Clusters)
		}
		g := asMap(t, got)
		// Provisional rows begin with the watermark's bucket (schema 11
		// carries its settled rows): the old build said the watermark.
		if pf := g["summary"].(map[string]any)["provisional_from"]; pf != "2026-01-05T10:00:00Z" {
			t.Errorf("provisional from %v", pf)
		}
		delete(g["summary"].(map[string]any), "provisional_from")
		delete(want["summary"].(map[string]any), "provisional_from")
		for _, k := range []string{"window", "watermark", "summary", "attribution", "daily", "daily_waste", "prices", "jobs"} {
			jsonnear.Equal(t, c.file+": "+k, g[k], want[k])
		}
	}
	// Schema 11 carries the open bucket's settled rows, where the old
	// build wrote them as settled rows: counted on from the old build's
	// state, the ledger equals one analysis of the whole.
	longer, err := sim.Record(sim.Options{Nodes: 3, Scenario: sim.ScenarioMixed, Seed: 5}, 15*time.Second, 3*time.Hour, profile.Generator{Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	_, end := profile.Span([]*profile.Profile{p})
	for from := end; from.Before(longer.EndedAt); from = from.Add(5 * time.Minute) {
		part := profile.Join([]*profile.Profile{longer}, from, minTime(from.Add(5*time.Minute), longer.EndedAt), false)
		if _, err := w.Update(context.Background(), UpdateSpec{Inputs: []*profile.Profile{part}, Params: params()}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := w.Report(context.Background(), Query{GroupBy: []string{"namespace"}, EnergyUSDPerKWh: 0.12})
	if err != nil {
		t.Fatal(err)
	}
	sameFigures(t, got, oneAnalysis(t, longer, []string{"namespace"}))
	sameChargeDays(t, w)
}
