package ledger

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/testkit/pgtest"
	"github.com/seedance/seedance/reclaim"
)

// reclaimLedgers are two writers of one ledger of the backend: two
// replicas of reclaim on one database.
func reclaimLedgers(t *testing.T, backend string) (*Ledger, *Ledger) {
	if backend == "sqlite" {
		p := filepath.Join(t.TempDir(), "ledger.db")
		return openDSN(t, p), openDSN(t, p)
	}
	dsn := pgtest.Start(t)
	return openDSN(t, dsn), openDSN(t, dsn)
}

// TestReclaimState: at most one open episode of a target; of replicas
// that read the same episode and change it at once, exactly one wins;
// keeps replace each other and expire; compaction keeps what is open.
func TestReclaimState(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) { reclaimState(t, backend) })
	}
}

func reclaimState(t *testing.T, backend string) {
	ctx := context.Background()
	a, b := reclaimLedgers(t, backend)
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	tg := reclaim.Target{Kind: reclaim.KindDeployment, Namespace: "ml", Name: "eval"}
	ep := reclaim.Episode{Target: tg, IdleSince: now.Add(-3 * time.Hour), State: reclaim.Noticing, Labels: map[string]string{"team": "ml"}, Updated: now}
	if err := a.BeginEpisode(ctx, ep); err != nil {
		t.Fatal(err)
	}
	other := ep
	other.IdleSince = now.Add(-2 * time.Hour)
	if err := b.BeginEpisode(ctx, other); !errors.Is(err, ErrLost) {
		t.Fatalf("a second open episode of the target: %v", err)
	}
	noticed := ep
	noticed.State, noticed.Notices, noticed.NoticedAt, noticed.Deadline, noticed.Updated = reclaim.Noticed, 1, now, now.Add(time.Hour), now.Add(time.Second)
	noticed.GPUs, noticed.USDPerHour, noticed.USDSoFar = 4, 9.96, 29.88
	if err := a.UpdateEpisode(ctx, ep, noticed); err != nil {
		t.Fatal(err)
	}
	// Eight passes on two connections read the noticed episode and claim
	// it at once: one claim is recorded, the others lose.
	var wg sync.WaitGroup
	var mu sync.Mutex
	won, lost := 0, 0
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := a
			if i%2 == 1 {
				l = b
			}
			claim := noticed
			claim.State, claim.Updated = reclaim.Acting, now.Add(time.Duration(i+2)*time.Second)
			err := l.UpdateEpisode(ctx, noticed, claim)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won++
			case errors.Is(err, ErrLost):
				lost++
			default:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if won != 1 || lost != 7 {
		t.Fatalf("%d claims won, %d lost; want 1 and 7", won, lost)
	}
	eps, err := b.Episodes(ctx, now)
	if err != nil || len(eps) != 1 || eps[0].State != reclaim.Acting || eps[0].GPUs != 4 || eps[0].USDSoFar != 29.88 ||
		!eps[0].Deadline.Equal(now.Add(time.Hour)) || eps[0].Labels["team"] != "ml" || eps[0].Target != tg {
		t.Fatalf("episodes %+v, %v", eps, err)
	}
	// Keeps.
	k := reclaim.Keep{Target: tg, Until: now.Add(8 * time.Hour), Reason: "tonight", By: "ana@laptop", At: now}
	if err := a.SetKeep(ctx, k); err != nil {
		t.Fatal(err)
	}
	k.Until = now.Add(time.Hour)
	if err := b.SetKeep(ctx, k); err != nil {
		t.Fatal(err)
	}
	if ks, err := a.Keeps(ctx, now); err != nil || len(ks) != 1 || !ks[tg].Until.Equal(now.Add(time.Hour)) || ks[tg].By != "ana@laptop" {
		t.Fatalf("keeps %+v, %v", ks, err)
	}
	if ks, _ := a.Keeps(ctx, now.Add(time.Hour)); len(ks) != 0 {
		t.Fatalf("an expired keep: %+v", ks)
	}
	// The audit, and compaction of what is finished.
	for i := range 3 {
		if err := a.Audit(ctx, now.Add(time.Duration(i)*time.Minute), tg, "acting", fmt.Sprint("claim ", i)); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := b.AuditCount(ctx, "acting", now.Add(time.Minute)); err != nil || n != 2 {
		t.Fatalf("audit count %d, %v", n, err)
	}
	done := reclaim.Episode{Target: reclaim.Target{Kind: reclaim.KindJob, Namespace: "ml", Name: "old"}, IdleSince: now.Add(-48 * time.Hour),
		State: reclaim.Dropped, Labels: map[string]string{}, Updated: now.Add(-40 * time.Hour)}
	if err := a.BeginEpisode(ctx, done); err != nil {
		t.Fatal(err)
	}
	if err := a.Compact(ctx, now.Add(-24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	eps, _ = a.Episodes(ctx, now.Add(-72*time.Hour))
	if len(eps) != 1 || eps[0].Target != tg {
		t.Fatalf("after compaction: %+v", eps)
	}
	if !strings.Contains(fmt.Sprint(a.Cluster()), DefaultCluster) {
		t.Errorf("cluster %q", a.Cluster())
	}
}

// TestCompactionKeepsWhatWasFreed (#55): compaction folds what the restored
// episodes it deletes freed into the cluster's folded savings, so that
// what reclaim reports freed (the /metrics counters) never goes down:
// 4 GPUs at $9.96/h acted on for 2 h (8 GPU-h, $19.92) stay counted once
// the episode is gone; an acted episode not restored is not folded.
func TestCompactionKeepsWhatWasFreed(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			l, _ := reclaimLedgers(t, backend)
			now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
			restored := reclaim.Episode{Target: reclaim.Target{Kind: reclaim.KindDeployment, Namespace: "cv", Name: "serve"}, IdleSince: now.Add(-50 * time.Hour),
				State: reclaim.Restored, GPUs: 4, USDPerHour: 9.96, Labels: map[string]string{"team": "vision"},
				ActedAt: now.Add(-48 * time.Hour), RestoredAt: now.Add(-46 * time.Hour), Updated: now.Add(-46 * time.Hour)}
			acted := reclaim.Episode{Target: reclaim.Target{Kind: reclaim.KindDeployment, Namespace: "nlp", Name: "eval"}, IdleSince: now.Add(-50 * time.Hour),
				State: reclaim.Acted, GPUs: 2, USDPerHour: 4.98, Labels: map[string]string{"namespace": "nlp"},
				ActedAt: now.Add(-47 * time.Hour), Updated: now.Add(-47 * time.Hour)}
			for _, ep := range []reclaim.Episode{restored, acted} {
				if err := l.BeginEpisode(ctx, ep); err != nil {
					t.Fatal(err)
				}
			}
			total := func() reclaim.Savings {
				eps, err := l.Episodes(ctx, now.Add(-24*time.Hour))
				if err != nil {
					t.Fatal(err)
				}
				folded, err := l.Folded(ctx)
				if err != nil {
					t.Fatal(err)
				}
				return folded.Plus(reclaim.Saved(eps, now))
			}
			before := total()
			if err := l.Compact(ctx, now.Add(-24*time.Hour)); err != nil {
				t.Fatal(err)
			}
			after := total()
			if eps, _ := l.Episodes(ctx, now.Add(-24*time.Hour)); len(eps) != 1 || eps[0].Target != acted.Target {
				t.Fatalf("after compaction: %+v", eps)
			}
			near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
			for _, s := range []reclaim.Savings{before, after} {
				if v, n := s.ByTeam["vision"], s.ByTeam["nlp"]; !near(v.GPUHours, 8) || !near(v.USD, 19.92) || !near(n.GPUHours, 94) || !near(n.USD, 47*4.98) || !near(s.USD, 19.92+47*4.98) {
					t.Errorf("freed %+v", s)
				}
			}
			folded, _ := l.Folded(ctx)
			if !near(folded.ByTeam["vision"].USD, 19.92) || len(folded.ByTeam) != 1 {
				t.Errorf("folded %+v, want the restored episode's alone", folded)
			}
		})
	}
}
