package ledger

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/profile"
)

// jobsProfile is three hours of one node: GPU 0 at 50 % and 100 W, held
// by two batch jobs for half an hour each (09:00–09:30, 10:00–10:30); GPU 1
// at 20 % and 200 W, held all along by a Deployment's pod.
func jobsProfile() *profile.Profile {
	t0 := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	n := 3 * 3600 / 15
	series := func(util, power float64) profile.Series {
		s := profile.Series{T: make(profile.Values, n), GPUUtilPct: make(profile.Values, n), PowerW: make(profile.Values, n)}
		for i := range n {
			s.T[i], s.GPUUtilPct[i], s.PowerW[i] = float64(15*i), util, power
		}
		return s
	}
	return &profile.Profile{SchemaVersion: profile.SchemaVersion, StartedAt: t0, EndedAt: t0.Add(3 * time.Hour), IntervalS: 15, Complete: true,
		Nodes: []profile.Node{{Name: "n1",
			GPUs: []profile.GPU{{Index: 0, UUID: "g0", Model: "NVIDIA H100 80GB HBM3", Series: series(50, 100)}, {Index: 1, UUID: "g1", Model: "NVIDIA H100 80GB HBM3", Series: series(20, 200)}},
			Workloads: []profile.Workload{
				{ID: "101", Kind: profile.KindJob, GPUs: []int{0}, Labels: map[string]string{"account": "a"}, Intervals: []profile.Tenure{{StartS: 0, EndS: 1800}}},
				{ID: "102", Kind: profile.KindJob, GPUs: []int{0}, Labels: map[string]string{"account": "a"}, Intervals: []profile.Tenure{{StartS: 3600, EndS: 5400}}},
				{ID: "ml/web-7d9f8-x2x4q", Kind: profile.KindPod, GPUs: []int{1}, Labels: map[string]string{"namespace": "ml", profile.ControllerLabel: "Deployment/web"}},
			}}}}
}

// TestJobsAndComparison: the energy of each finished job over its tenure
// (100 W × 1,800 s = 0.05 kWh), training's utilization apart from
// inference's, and the comparison with a baseline window, by hand.
func TestJobsAndComparison(t *testing.T) {
	l, ctx, t0 := jobsLedger(t)
	r, err := l.Report(ctx, Query{Since: t0.Add(time.Hour), GroupBy: []string{"account"}, BaselineSince: t0, BaselineUntil: t0.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	j := r.Jobs
	if len(j.Finished) != 1 || j.Finished[0].Finished != 1 || j.Finished[0].Key[0] != "a" || j.Finished[0].Kind != profile.KindJob ||
		!nearly(*j.Finished[0].MeanEnergyKWh, 0.05) || !nearly(j.Finished[0].MeanGPUHours, 0.5) || !nearly(*j.EnergyPerJobKWh, 0.05) {
		t.Errorf("finished: %+v, energy per job %v", j.Finished, j.EnergyPerJobKWh)
	}
	if len(j.Classes) != 2 || j.Classes[0].Class != ClassTraining || !nearly(*j.Classes[0].UtilizationPct, 50) || !nearly(j.Classes[0].HeldGPUHours, 0.5) ||
		j.Classes[1].Class != ClassInference || !nearly(*j.Classes[1].UtilizationPct, 20) || !nearly(*j.Classes[1].EnergyKWh, 0.4) {
		t.Errorf("classes: %+v", j.Classes)
	}
	c := r.Comparison
	if c == nil || !nearly(*c.EnergyPerJobKWh.Before, 0.05) || !nearly(*c.EnergyPerJobKWh.ChangePct, 0) || !nearly(*c.TrainingUtilizationPct.After, 50) {
		t.Errorf("comparison: %+v", c)
	}
}

// TestComparisonWithAReport: a ledger report's JSON kept from before is
// the same baseline as its window; analyze's report gives the idle cost
// and ratio, and null for what it has not; anything else is refused in a
// line.
func TestComparisonWithAReport(t *testing.T) {
	l, ctx, t0 := jobsLedger(t)
	byWindow, err := l.Report(ctx, Query{Since: t0.Add(time.Hour), GroupBy: []string{"account"}, BaselineSince: t0, BaselineUntil: t0.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	kept, err := l.Report(ctx, Query{Since: t0, Until: t0.Add(time.Hour), GroupBy: []string{"account"}})
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := json.Marshal(kept)
	base, err := ReadBaseline(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	byReport, err := l.Report(ctx, Query{Since: t0.Add(time.Hour), GroupBy: []string{"account"}, Baseline: base})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(asMap(t, byReport.Comparison), asMap(t, byWindow.Comparison)) {
		t.Errorf("against the kept report %+v, against its window %+v", byReport.Comparison, byWindow.Comparison)
	}
	analyzed := `{"schema_version":"seedance.report/v1","window":{"start":"2026-01-05T00:00:00Z","end":"2026-01-05T09:00:00Z","duration_s":32400},
"summary":{"idle_cost_usd":2,"idle_ratio":0.5},"nodes":[]}`
	if base, err = ReadBaseline(strings.NewReader(analyzed)); err != nil {
		t.Fatal(err)
	}
	c, err := l.Report(ctx, Query{Since: t0.Add(time.Hour), GroupBy: []string{"account"}, Baseline: base})
	if err != nil {
		t.Fatal(err)
	}
	if cc := c.Comparison; *cc.IdleCostUSD.Before != 2 || *cc.IdleRatio.Before != 0.5 || cc.EnergyPerJobKWh.Before != nil || cc.TrainingUtilizationPct.Before != nil ||
		cc.TrainingUtilizationPct.After == nil || !cc.Baseline.Start.Equal(time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("against analyze's report: %+v", cc)
	}
	for in, want := range map[string]string{`{"schema_version":"x"}`: "neither a ledger report's", `{"summary":`: "not a JSON report", `<html>`: "not a JSON report",
		`{"schema_version":"seedance.report/v1","summary":{"idle_ratio":"a"}}`: "not a report"} {
		if _, err := ReadBaseline(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want %q", in, err, want)
		}
	}
}

// jobsLedger is a ledger that counted jobsProfile, and the profile's start.
func jobsLedger(t *testing.T) (*Ledger, context.Context, time.Time) {
	t.Helper()
	l := openDSN(t, t.TempDir()+"/l.db")
	ctx := context.Background()
	if _, err := l.Update(ctx, UpdateSpec{Inputs: []*profile.Profile{jobsProfile()}, Params: params()}); err != nil {
		t.Fatal(err)
	}
	return l, ctx, time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
}

func nearly(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// TestMigrations: a ledger of schema 1 is migrated to 2 on open, its rows
// kept (without a workload's energy: null, not 0); a newer schema is
// refused with one line.
func TestMigrations(t *testing.T) {
	ctx := context.Background()
	path := t.TempDir() + "/old.db"
	l := openDSN(t, path)
	if _, err := l.db.Exec(`DROP TABLE seedance_version; DROP TABLE seedance_meta; DROP TABLE seedance_state; DROP TABLE seedance_gpu; DROP TABLE seedance_hold; DROP TABLE seedance_workload; DROP TABLE seedance_gpu_day; DROP TABLE seedance_hold_day; DROP TABLE seedance_owner; DROP TABLE seedance_owner_hold; DROP TABLE seedance_owner_hold_day; DROP TABLE seedance_note; DROP TABLE seedance_charge_day; DROP TABLE seedance_cluster_gpu; DROP TABLE seedance_cluster_origin; DROP TABLE seedance_reclaim_episode; DROP TABLE seedance_reclaim_keep; DROP TABLE seedance_reclaim_audit; DROP TABLE seedance_work; DROP TABLE seedance_work_day; DROP TABLE seedance_queue; DROP TABLE seedance_queue_member`); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{`CREATE TABLE seedance_version (version BIGINT NOT NULL)`, `INSERT INTO seedance_version (version) VALUES (1)`} {
		if _, err := l.db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	for _, stmt := range strings.Split(migrations[0], ";") {
		if strings.TrimSpace(stmt) != "" {
			if _, err := l.db.Exec(stmt); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := l.db.Exec(`INSERT INTO seedance_hold (bucket, node, model, workload, provisional, held_s, used_s, idle_s, cost_usd) VALUES (0, 'n', 'm', 'w', 0, 3600, 1800, 0, 0)`); err != nil {
		t.Fatal(err)
	}
	if _, err := l.db.Exec(`INSERT INTO seedance_workload (id, name, kind, labels, first_bucket, last_bucket) VALUES ('w', 'w', 'job', '{"account":"a"}', 0, 0)`); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if _, err := Open(ctx, path, Options{ReadOnly: true}); err == nil || !strings.Contains(err.Error(), "schema is version 1: run seedance ledger update") {
		t.Fatalf("a reader of an old ledger: %v", err)
	}
	l, err := Open(ctx, path, Options{Cluster: "prod-a"})
	if err != nil {
		t.Fatal(err)
	}
	var version int
	var energy sql.NullFloat64
	if err := l.db.QueryRowContext(ctx, `SELECT version FROM seedance_version`).Scan(&version); err != nil || version != SchemaVersion {
		t.Fatalf("version %d, %v", version, err)
	}
	// Schema 4: every row is the cluster's the migrating update named.
	tx := mustTx(t, l)
	for _, table := range []string{"seedance_hold", "seedance_hold_day", "seedance_workload", "seedance_owner_hold", "seedance_owner_hold_day"} {
		var clusters []string
		if err := scanRows(ctx, tx, func(rows *sql.Rows) error {
			var c string
			err := rows.Scan(&c)
			clusters = append(clusters, c)
			return err
		}, `SELECT DISTINCT cluster FROM `+table); err != nil || len(clusters) != 1 || clusters[0] != "prod-a" {
			t.Fatalf("%s's clusters after the migration: %v, %v", table, clusters, err)
		}
	}
	_ = tx.Rollback()
	if err := l.db.QueryRowContext(ctx, `SELECT energy_j FROM seedance_hold`).Scan(&energy); err != nil || energy.Valid {
		t.Fatalf("the old row's energy: %v, %v", energy, err)
	}
	var held float64
	if err := l.db.QueryRowContext(ctx, `SELECT held_s, energy_j FROM seedance_hold_day WHERE workload = 'w'`).Scan(&held, &energy); err != nil || held != 3600 || energy.Valid {
		t.Fatalf("the old row's daily rollup: %v %v, %v", held, energy, err)
	}
	// Schema 3: the workload's owner, its settled sums, and the owner's
	// rollups, the row without energy counted as such.
	var owner, unknown, gappy, settledLast int64
	if err := l.db.QueryRowContext(ctx, `SELECT owner, held_s, energy_unknown, gappy, settled_last FROM seedance_workload WHERE id = 'w'`).Scan(&owner, &held, &unknown, &gappy, &settledLast); err != nil ||
		owner != 1 || held != 3600 || unknown != 1 || gappy != 1 || settledLast != 0 {
		t.Fatalf("the old workload: owner %d held %v unknown %d gappy %d last %d, %v", owner, held, unknown, gappy, settledLast, err)
	}
	for _, table := range []string{"seedance_owner_hold", "seedance_owner_hold_day"} {
		if err := l.db.QueryRowContext(ctx, `SELECT held_s, energy_unknown FROM `+table+` WHERE owner = 1`).Scan(&held, &unknown); err != nil || held != 3600 || unknown != 1 {
			t.Fatalf("%s: held %v unknown %d, %v", table, held, unknown, err)
		}
	}
	if _, err := l.db.Exec(`UPDATE seedance_version SET version = 99`); err != nil {
		t.Fatal(err)
	}
	l.Close()
	_, err = Open(ctx, path, Options{})
	if err == nil || !strings.Contains(err.Error(), "schema is version 99, newer than this seedance's") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("a newer ledger: %v", err)
	}
}

// TestJobsByWorkload: grouped by workload, the finished job of
// TestJobsAndComparison (job 102, which began before the window) is found
// by its own rows, with the same figures.
func TestJobsByWorkload(t *testing.T) {
	l, ctx, t0 := jobsLedger(t)
	r, err := l.Report(ctx, Query{Since: t0.Add(time.Hour), GroupBy: []string{"workload"}})
	if err != nil {
		t.Fatal(err)
	}
	j := r.Jobs
	if len(j.Finished) != 1 || j.Finished[0].Key[0] != "102" || j.Finished[0].Finished != 1 || j.Finished[0].Kind != profile.KindJob ||
		!nearly(*j.Finished[0].MeanEnergyKWh, 0.05) || !nearly(j.Finished[0].MeanGPUHours, 0.5) {
		t.Fatalf("finished: %+v", j.Finished)
	}
}
