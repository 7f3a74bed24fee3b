package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/testkit/testnet"
	"github.com/seedance/seedance/profile"
)

// minuteProfile writes four hours (240 minute samples) of one node of
// H100s ending at end: GPU g reads util(g, i) at sample i; the workloads
// hold them.
func minuteProfile(t *testing.T, path, node string, end time.Time, gpus int, util func(g, i int) float64, ws ...profile.Workload) {
	t.Helper()
	n := profile.Node{Name: node, Workloads: ws}
	for g := 0; g < gpus; g++ {
		gpu := profile.GPU{Index: g, UUID: fmt.Sprintf("GPU-%s-%d", node, g), Model: "NVIDIA H100 80GB HBM3"}
		for i := 0; i < 240; i++ {
			gpu.Series.T = append(gpu.Series.T, float64(i*60))
			gpu.Series.GPUUtilPct = append(gpu.Series.GPUUtilPct, util(g, i))
			gpu.Series.PowerW = append(gpu.Series.PowerW, 70)
		}
		n.GPUs = append(n.GPUs, gpu)
	}
	p := &profile.Profile{SchemaVersion: profile.SchemaVersion, Generator: profile.Generator{Name: "test"}, StartedAt: end.Add(-4 * time.Hour),
		EndedAt: end, IntervalS: 60, Complete: true, Nodes: []profile.Node{n}}
	if err := profile.WriteFile(path, p); err != nil {
		t.Fatal(err)
	}
}

// busyThenIdle writes a job's profile: 4 H100s busy for 30 minutes from
// 09:00, then idle to 13:00.
func busyThenIdle(t *testing.T, path string) time.Time {
	t.Helper()
	end := time.Date(2026, 12, 1, 13, 0, 0, 0, time.UTC)
	minuteProfile(t, path, "n1", end, 4, func(_, i int) float64 {
		if i < 30 {
			return 90
		}
		return 0
	}, profile.Workload{ID: "ml/eval-5f7c9-abcde", Kind: profile.KindPod, State: profile.StateRunning,
		GPUs: []int{0, 1, 2, 3}, Labels: map[string]string{"namespace": "ml", profile.ControllerLabel: "Deployment/eval"}})
	return end
}

// TestReclaimNoticeEqualsLedger: the job busy for 30 minutes and then
// idle is a candidate from 09:30, and its notice's dollars equal what
// ledger report charges the same workload as waste from 09:30, to the
// cent (3.5 h × 4 GPUs × $2.49 = $34.86).
func TestReclaimNoticeEqualsLedger(t *testing.T) {
	dir := t.TempDir()
	in, db := filepath.Join(dir, "p.json"), filepath.Join(dir, "ledger.db")
	end := busyThenIdle(t, in)
	r := runAt(t, end.Add(time.Minute), "reclaim", "-i", in, "--gpu-price", "H100=2.49")
	want := "ml/Deployment/eval: would notify (ml/Deployment/eval has held 4 × NVIDIA H100 80GB HBM3 idle for 3h30m: $34.86 so far, $9.96 an hour"
	if r.code != 0 || !strings.Contains(r.out, want) {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.out, r.errOut)
	}
	if r := run(t, nil, "ledger", "update", "-i", in, "--ledger", db, "--gpu-price", "H100=2.49"); r.code != 0 {
		t.Fatalf("ledger update: exit %d\n%s", r.code, r.errOut)
	}
	// The ledger's whole hours from 10:00 hold 3 h of it; the half hour
	// before is in the 09:00 bucket with the busy half hour.
	for _, c := range []struct{ since, waste string }{{"2026-12-01T09:00:00Z", "$34.86"}, {"2026-12-01T10:00:00Z", "$29.88"}} {
		r := run(t, nil, "ledger", "report", "--ledger", db, "--by", "controller", "--since", c.since)
		var line string
		for _, l := range strings.Split(r.out, "\n") {
			if strings.HasPrefix(l, "ml/Deployment/eval ") {
				line = l
			}
		}
		if r.code != 0 || !strings.Contains(line, " "+c.waste+" ") {
			t.Fatalf("ledger report --since %s: exit %d, eval's line %q, want waste %s\n%s", c.since, r.code, line, c.waste, r.out)
		}
	}
}

// TestReclaimBadInput: a policy that cannot be read is a one-line error
// with exit 2 and nothing notified; an Alertmanager that cannot be
// reached is exit 1, the episode waits for a delivered notice and nothing
// is acted on.
func TestReclaimBadInput(t *testing.T) {
	dir := t.TempDir()
	in, db := filepath.Join(dir, "p.json"), filepath.Join(dir, "ledger.db")
	end := busyThenIdle(t, in)
	at := end.Add(time.Minute)
	cfg := func(body string) string {
		p := filepath.Join(dir, "c.yaml")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct{ config, want string }{
		{"reclaim:\n  idle_fro: 2h\n", "idle_fro"},
		{"reclaim:\n  idle_for: soon\n", "idle_for"},
		{"reclaim:\n  selector: \"team=ml,=x\"\n", "selector"},
		{"reclaim:\n  grace: -1h\n", "grace"},
	} {
		r := runAt(t, at, "reclaim", "--config", cfg(c.config), "-i", in, "--ledger", db, "--webhook-url", "http://127.0.0.1:1/", "--execute")
		if r.code != 2 || !strings.Contains(r.errOut, c.want) || strings.Count(strings.TrimSpace(r.errOut), "\n") != 0 {
			t.Errorf("%q: exit %d, %q", c.config, r.code, r.errOut)
		}
	}
	if r := runAt(t, at, "reclaim", "-i", in, "--ledger", db, "--execute"); r.code != 2 || !strings.Contains(r.errOut, "needs a notice channel") {
		t.Errorf("--execute without a channel: exit %d, %q", r.code, r.errOut)
	}
	if r := runAt(t, at, "reclaim", "keep", "ml/Deployment/$(id)", "--for", "1h", "--ledger", db); r.code != 2 {
		t.Errorf("a bad target: exit %d, %q", r.code, r.errOut)
	}
	if _, err := os.Stat(db); err == nil {
		t.Fatal("a refused run created the ledger")
	}
	dead := fmt.Sprintf("http://127.0.0.1:%d", testnet.FreePort(t)) // nothing listens there
	r := runAt(t, at, "reclaim", "-i", in, "--ledger", db, "--alertmanager-url", dead, "--execute")
	if r.code != 1 || !strings.Contains(r.out, "notice not delivered") || !strings.Contains(r.errOut, "0 notices, 0 acted") {
		t.Fatalf("an unreachable Alertmanager: exit %d\n%s\n%s", r.code, r.out, r.errOut)
	}
	l := runAt(t, at.Add(time.Hour), "reclaim", "list", "--ledger", db)
	if !strings.Contains(strings.Join(strings.Fields(l.out), " "), "ml/Deployment/eval noticing") {
		t.Fatalf("the episode after an undelivered notice:\n%s", l.out)
	}
	// Two hours later, still undelivered: no grace has run, nothing is
	// acted on (and the data is stale by then).
	r = runAt(t, at.Add(2*time.Hour), "reclaim", "-i", in, "--ledger", db, "--alertmanager-url", dead, "--execute")
	if r.code != 0 || !strings.Contains(r.errOut, "0 acted") || !strings.Contains(r.out, "unknown, nothing done: stale data") {
		t.Fatalf("still unreachable: exit %d\n%s\n%s", r.code, r.out, r.errOut)
	}
}
