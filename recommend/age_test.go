package recommend

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/internal/testkit/ctxtest"
)

// TestScriptsRefuseStaleData: a plan whose data ended longer than its max
// age ago refuses --execute before any command (exit 3), warns in a dry
// run, and runs with --stale-ok; a fresh plan, or one without an age,
// runs as before; an unknown argument is refused.
func TestScriptsRefuseStaleData(t *testing.T) {
	plan := func(dataAge time.Duration, maxAgeS float64) *Plan {
		p := &Plan{SchemaVersion: planSchema, SavingsUSDPerHour: 40, NodePriceUSDPerHour: map[string]float64{"node-a": 40},
			Moves:         []Move{{Workload: "4242", From: str("node-a"), To: "node-b", GPUs: []int{1}, Reason: "frees node-a", Name: "4242", Namespace: "ml"}},
			ReleasedNodes: []string{"node-a"}, MaxAgeS: maxAgeS}
		if dataAge >= 0 {
			end := time.Now().Add(-dataAge)
			p.DataUntil = &end
		}
		return p
	}
	for _, d := range []struct {
		name  string
		write func(io.Writer, *Plan) error
	}{{"kubectl", kubectlScript}, {"slurm", slurmScript}} {
		script := func(p *Plan) string {
			var b bytes.Buffer
			if err := d.write(&b, p); err != nil {
				t.Fatal(err)
			}
			return b.String()
		}
		stale := script(plan(2*time.Hour, 3600))
		out, err := runScriptEnv(t, nil, stale, "--execute")
		if code := exitCode(err); code != 3 || !strings.Contains(out, "seedance plan: refused: its data is 72") || !strings.HasSuffix(out, "LOG:\n") {
			t.Errorf("%s: a stale plan executed (exit %d):\n%s", d.name, code, out)
		}
		out, err = runScriptEnv(t, nil, stale)
		if code := exitCode(err); code != 0 || !strings.Contains(out, "seedance plan: warning: its data is 72") {
			t.Errorf("%s: dry run of a stale plan: exit %d:\n%s", d.name, code, out)
		}
		out, err = runScriptEnv(t, nil, stale, "--execute", "--stale-ok")
		if code := exitCode(err); code != 0 || strings.Contains(out, "refused") || strings.HasSuffix(out, "LOG:\n") {
			t.Errorf("%s: --stale-ok: exit %d:\n%s", d.name, code, out)
		}
		for _, fresh := range []*Plan{plan(10*time.Minute, 3600), plan(2*time.Hour, 0), plan(-1, 3600)} {
			out, err = runScriptEnv(t, nil, script(fresh), "--execute")
			if code := exitCode(err); code != 0 || strings.Contains(out, "refused") || strings.Contains(out, "warning") {
				t.Errorf("%s: a plan within its age (or without one): exit %d:\n%s", d.name, code, out)
			}
		}
		out, err = runScriptEnv(t, nil, stale, "--excute")
		if code := exitCode(err); code != 2 || !strings.Contains(out, "unknown argument --excute") || !strings.HasSuffix(out, "LOG:\n") {
			t.Errorf("%s: a misspelt argument: exit %d:\n%s", d.name, code, out)
		}
	}
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(interface{ ExitCode() int }); ok {
		return ee.ExitCode()
	}
	return -1
}

// TestPlanRecordsItsDataTime: the plan of a real source's analysis
// records the end of its window and the max age; a simulated cluster's
// (a synthetic clock) and a max age of 0 record none.
func TestPlanRecordsItsDataTime(t *testing.T) {
	end := time.Date(2026, 12, 5, 8, 0, 0, 0, time.FixedZone("CET", 3600))
	price := func(string, map[string]string, string) float64 { return 1 }
	for _, c := range []struct {
		source string
		maxAge time.Duration
		want   string
	}{{"prometheus", time.Hour, "2026-12-05T07:00:00Z 3600"}, {"sim", time.Hour, "<nil> 0"}, {"prometheus", 0, "<nil> 0"}} {
		r := &analyze.Report{Window: analyze.Window{End: end}, Inputs: []analyze.Input{{Source: c.source}}, Fleet: &analyze.Fleet{}}
		p, _, err := PlanReport(context.Background(), r, price, Options{MaxAge: c.maxAge})
		if err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprint(p.DataUntil, " ", p.MaxAgeS)
		if p.DataUntil != nil {
			got = p.DataUntil.Format(time.RFC3339) + fmt.Sprint(" ", p.MaxAgeS)
		}
		if got != c.want {
			t.Errorf("%s, %v: %s, want %s", c.source, c.maxAge, got, c.want)
		}
	}
}

// TestPlanningStopsWhenCancelled: a cancelled context stops the planner
// between two nodes, and the plan and fragmentation reports, with the
// context's error and no plan.
func TestPlanningStopsWhenCancelled(t *testing.T) {
	c := build([]*Node{box("a", 2, 80), box("b", 2, 80), box("c", 2, 80)}, pod("p1", "a", 0), pod("p2", "b", 0))
	if _, err := makePlan(ctxtest.CancelledAfter(3), c, Options{}); err != nil {
		t.Fatalf("three nodes, three checks: %v", err)
	}
	for k := range 3 {
		if p, err := makePlan(ctxtest.CancelledAfter(k), c, Options{}); p != nil || !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled at check %d: plan %v, err %v", k+1, p != nil, err)
		}
	}
	r := &analyze.Report{Fleet: &analyze.Fleet{Nodes: []analyze.FleetNode{{Name: "a"}, {Name: "b"}}}}
	price := func(string, map[string]string, string) float64 { return 1 }
	if p, _, err := PlanReport(ctxtest.CancelledAfter(0), r, price, Options{}); p != nil || !errors.Is(err, context.Canceled) {
		t.Errorf("PlanReport: plan %v, err %v", p != nil, err)
	}
	if f, _, err := FragmentReport(ctxtest.CancelledAfter(0), r, price, Options{}, nil, FragmentOptions{}); f != nil || !errors.Is(err, context.Canceled) {
		t.Errorf("FragmentReport: %v, err %v", f != nil, err)
	}
}
