package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/ledger"
	"github.com/seedance/seedance/ledger/history"
	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/reclaim"
	"github.com/seedance/seedance/settings"
	"github.com/seedance/seedance/source/sim"
)

// TestLedgerReportReclaimed (#55): the ledger report says what reclaim's
// actions freed within its window, per team, each from its action to its
// restore or the window's end at its notice's price, worked by hand: the
// vision team's 4 GPUs at $9.96/h from 10:00 to the window's end at 12:00
// (8 GPU-h, $19.92); nlp's 2 GPUs at $4.98/h from 10:30 to their restore
// at 11:00 (1 GPU-h, $2.49). From 11:00 on, only vision's hour counts.
func TestLedgerReportReclaimed(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	p, err := sim.Record(sim.Options{Nodes: 2, Scenario: sim.ScenarioMixed, Seed: 1, Start: t0}, time.Minute, 3*time.Hour, profile.Generator{Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := ledgerWithEpisodes(t, p, episodes(t0))
	report := func(since time.Time) *history.Reclaimed { return reportJSON(t, cfg, since).Reclaimed }
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	rc := report(time.Time{})
	if rc == nil || rc.Actions != 2 || len(rc.ByTeam) != 2 || !near(rc.GPUHours, 9) || !near(rc.USD, 22.41) {
		t.Fatalf("the whole window: %+v", rc)
	}
	if nlp, vision := rc.ByTeam[0], rc.ByTeam[1]; nlp.Team != "nlp" || !near(nlp.GPUHours, 1) || !near(nlp.USD, 2.49) ||
		vision.Team != "vision" || !near(vision.GPUHours, 8) || !near(vision.USD, 19.92) {
		t.Errorf("by team: %+v", rc.ByTeam)
	}
	rc = report(t0.Add(2 * time.Hour))
	if rc == nil || rc.Actions != 1 || len(rc.ByTeam) != 1 || rc.ByTeam[0].Team != "vision" || !near(rc.GPUHours, 4) || !near(rc.USD, 9.96) {
		t.Errorf("from 11:00: %+v", rc)
	}
	var text bytes.Buffer
	if err := LedgerReport(ctx, LedgerReportSpec{Config: cfg, Format: "table", Output: "-"}, &text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "Reclaimed: 9.0 GPU-hours, $22.41, by 2 action(s) of seedance reclaim (nlp 1.0 GPU-h $2.49; vision 8.0 GPU-h $19.92)") {
		t.Errorf("the text report:\n%s", text.String())
	}
}

// episodes are TestLedgerReportReclaimed's: acted on at 10:00 and 10:30.
func episodes(t0 time.Time) []reclaim.Episode {
	at := func(h, m int) time.Time { return t0.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute) }
	eps := []reclaim.Episode{
		{Target: reclaim.Target{Kind: reclaim.KindDeployment, Namespace: "cv", Name: "serve"}, IdleSince: at(0, 0), GPUs: 4, USDPerHour: 9.96,
			Labels: map[string]string{"team": "vision", "namespace": "cv"}, ActedAt: at(1, 0), State: reclaim.Acted},
		{Target: reclaim.Target{Kind: reclaim.KindDeployment, Namespace: "nlp", Name: "eval"}, IdleSince: at(0, 0), GPUs: 2, USDPerHour: 4.98,
			Labels: map[string]string{"namespace": "nlp"}, ActedAt: at(1, 30), RestoredAt: at(2, 0), State: reclaim.Restored},
		{Target: reclaim.Target{Kind: reclaim.KindDeployment, Namespace: "nlp", Name: "noticed"}, IdleSince: at(0, 0), GPUs: 8, USDPerHour: 20,
			Labels: map[string]string{"namespace": "nlp"}, State: reclaim.Noticed}, // never acted: nothing freed
	}
	for i := range eps {
		eps[i].Updated = at(2, 0)
	}
	return eps
}

// ledgerWithEpisodes is a ledger updated from p, holding the episodes.
func ledgerWithEpisodes(t *testing.T, p *profile.Profile, eps []reclaim.Episode) *settings.Config {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	in := filepath.Join(dir, "p.json")
	if err := profile.WriteFile(in, p); err != nil {
		t.Fatal(err)
	}
	cfg := configWith(t, "ledger.dsn", filepath.Join(dir, "l.db"))
	if _, err := LedgerUpdate(ctx, LedgerUpdateSpec{Config: cfg, Inputs: []string{in}}); err != nil {
		t.Fatal(err)
	}
	l, err := ledger.Open(ctx, cfg.Ledger.DSN, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, ep := range eps {
		if err := l.BeginEpisode(ctx, ep); err != nil {
			t.Fatal(err)
		}
	}
	return cfg
}

// reportJSON is the ledger's report from since, as JSON.
func reportJSON(t *testing.T, cfg *settings.Config, since time.Time) history.Report {
	t.Helper()
	var b bytes.Buffer
	if err := LedgerReport(context.Background(), LedgerReportSpec{Config: cfg, Since: since, Format: "json", Output: "-"}, &b); err != nil {
		t.Fatal(err)
	}
	var r history.Report
	if err := json.Unmarshal(b.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	return r
}
