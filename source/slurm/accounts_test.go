package slurm

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/profile"
)

// TestReadAccounts: the accounts of no user, root left out, each GPU
// limit and GPU-minute budget read (typed GPUs summed), a cycle of parents
// a note naming its accounts, which then have no cohort.
func TestReadAccounts(t *testing.T) {
	out := "c|root||||\nc|ml||root|cpu=64,gres/gpu=16|gres/gpu=60000\nc|ml|alice|ml||\nc|a||b|gres/gpu:a100=2,gres/gpu:h100=3|cpu=100\nc|b||a||\n"
	acc, notes := readAccounts([]byte(out))
	if len(acc) != 3 || acc["ml"].parent != "root" || *acc["ml"].gpus != 16 || *acc["a"].gpus != 5 || acc["b"].gpus != nil ||
		acc["ml"].budget == nil || *acc["ml"].budget != 60000 || acc["a"].budget != nil || acc["b"].budget != nil {
		t.Errorf("accounts: %+v", acc)
	}
	if len(notes) != 1 || notes[0] != "Slurm's account tree has a cycle through a, b: their cohort unknown" || acc["a"].parent != "" || acc["b"].parent != "" {
		t.Errorf("cycle: %q %+v", notes, acc)
	}
}

// TestAddJob: a job that ran from before the window is cut to it, a
// pending one waits to the window's end, one that never started but ended
// (cancelled) waited until it ended; one held (or waiting on a
// dependency) waited from when it became eligible (its Reason, that
// dependency, is no hold of its wait for GPUs), one cancelled before it
// ever was did not wait; one its user's GPU cap held (QOSMaxGRESPerUser)
// says so; a job of no GPU or no known account is left out.
func TestAddJob(t *testing.T) {
	start := time.Date(2026, 1, 5, 9, 0, 0, 0, time.Local)
	end := start.Add(time.Hour)
	qs := map[string]*profile.Queue{"ml": {Name: "ml"}}
	at := func(m int) string { return start.Add(time.Duration(m) * time.Minute).Format(sacctTime) }
	for _, l := range []string{
		"1|1|ml|normal|cpu=1,gres/gpu=4|gres/gpu=4|" + at(-30) + "|" + at(-20) + "|" + at(30) + "|COMPLETED|" + at(-30) + "|Dependency",
		"2|2|ml|normal||gres/gpu=2|" + at(10) + "|Unknown|Unknown|PENDING|" + at(10) + "|None",
		"3|3|ml|normal||gres/gpu=1|" + at(5) + "|None|" + at(15) + "|CANCELLED|" + at(5) + "|QOSMaxGRESPerUser",
		"4|4|ml|normal|cpu=1|cpu=1|" + at(0) + "|" + at(0) + "|Unknown|RUNNING|" + at(0) + "|None",
		"5|5|other|normal||gres/gpu=1|" + at(0) + "|Unknown|Unknown|PENDING|" + at(0) + "|None",
		"6.batch|6.batch|ml|normal||gres/gpu=1|" + at(0) + "|Unknown|Unknown|PENDING|" + at(0) + "|None",
		"7|7|ml|normal|gres/gpu=3|gres/gpu=3|" + at(20) + "|" + at(50) + "|Unknown|RUNNING|" + at(40) + "|Dependency",
		"8|8|ml|normal||gres/gpu=5|" + at(20) + "|None|" + at(25) + "|CANCELLED|Unknown|JobHeldUser",
	} {
		if j, ok := readSacctJob(l); ok && qs[j.account] != nil {
			addJob(qs[j.account], j, start, end)
		}
	}
	q := qs["ml"]
	if len(q.Admitted) != 2 || q.Admitted[0] != (profile.QueueSpan{Workload: "1", GPUs: 4, StartS: 0, EndS: 1800}) {
		t.Errorf("admitted: %+v", q.Admitted)
	}
	want := "[{2 2 600 3600 } {3 1 300 900 QOSMaxGRESPerUser} {7 3 2400 3000 }]"
	if got := fmt.Sprint(q.Pending); got != want {
		t.Errorf("pending: %s, want %s", got, want)
	}
}

// TestAddQueuesByQOS: with slurm.queues qos, the QOS are the queues (each
// one's GrpTRES and GrpTRESMins gres/gpu, no cohort), a job's reservation
// and wait are booked in its QOS whatever its account, and the profile's
// jobs get their QOS as their queue by either of sacct's ids (an array
// task's "7_1" too); a job of a QOS sacctmgr does not list gets none.
func TestAddQueuesByQOS(t *testing.T) {
	start := time.Date(2026, 1, 5, 9, 0, 0, 0, time.Local)
	at := func(m int) string { return start.Add(time.Duration(m) * time.Minute).Format(sacctTime) }
	sacctmgr := func(_ context.Context, args ...string) ([]byte, error) {
		if strings.Join(args[3:], " ") != "qos format=Name,GrpTRES,GrpTRESMins" {
			return nil, fmt.Errorf("asked %q", args)
		}
		return []byte("normal||\ngpu-team|cpu=8,gres/gpu=4|gres/gpu=6000\nbig|gres/gpu:h100=2,gres/gpu:a100=1|\n"), nil
	}
	sacct := func(_ context.Context, args ...string) ([]byte, error) {
		return []byte("1|1|research|gpu-team|gres/gpu=2|gres/gpu=2|" + at(0) + "|" + at(10) + "|Unknown|RUNNING|" + at(0) + "|None\n" +
			"8|7_1|prod|big|gres/gpu=1|gres/gpu=1|" + at(0) + "|" + at(0) + "|" + at(30) + "|COMPLETED|" + at(0) + "|None\n" +
			"9|9|prod|gone||gres/gpu=1|" + at(0) + "|" + at(0) + "|Unknown|RUNNING|" + at(0) + "|None\n"), nil
	}
	p := &profile.Profile{StartedAt: start, EndedAt: start.Add(time.Hour), Nodes: []profile.Node{{Name: "n", Workloads: []profile.Workload{
		{ID: "1", Kind: profile.KindJob, Labels: map[string]string{"account": "research"}}, {ID: "7_1", Kind: profile.KindJob}, {ID: "9", Kind: profile.KindJob}}}}}
	notes, err := AddQueues(context.Background(), p, ByQOS, sacctmgr, sacct, nil)
	if err != nil || notes != nil {
		t.Fatal(err, notes)
	}
	want := `[{big slurm-qos  3 <nil> <nil> <nil> []  [{8 1 0 1800 }] []} {gpu-team slurm-qos  4 <nil> <nil> 6000 []  [{1 2 600 3600 }] [{1 2 0 600 }]} {normal slurm-qos  <nil> <nil> <nil> <nil> []  [] []}]`
	if got := queuesString(p.Queues); got != want {
		t.Errorf("queues:\n%s\nwant\n%s", got, want)
	}
	var got []string
	for _, w := range p.Nodes[0].Workloads {
		got = append(got, w.Queue)
	}
	if fmt.Sprint(got) != "[gpu-team big ]" {
		t.Errorf("the jobs' queues: %q", got)
	}
}

// queuesString prints the queues with their quotas' values.
func queuesString(qs []profile.Queue) string {
	var parts []string
	f := func(p *float64) string {
		if p == nil {
			return "<nil>"
		}
		return fmt.Sprint(*p)
	}
	for _, q := range qs {
		parts = append(parts, fmt.Sprintf("{%s %s %s %s %s %s %s %v %s %v %v}", q.Name, q.Kind, q.Cohort, f(q.NominalGPUs), f(q.BorrowingLimitGPUs), f(q.LendingLimitGPUs),
			f(q.BudgetGPUMinutes), q.Flavors, q.QuotaRef, q.Admitted, q.Pending))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// TestTooManyQueues: more QOS than a profile holds are a note and no
// queues, not a profile that cannot be written.
func TestTooManyQueues(t *testing.T) {
	var b strings.Builder
	for i := range profile.MaxQueues + 1 {
		fmt.Fprintf(&b, "q%d|gres/gpu=1|\n", i)
	}
	sacctmgr := func(context.Context, ...string) ([]byte, error) { return []byte(b.String()), nil }
	sacct := func(context.Context, ...string) ([]byte, error) { return nil, fmt.Errorf("not asked") }
	p := &profile.Profile{}
	notes, err := AddQueues(context.Background(), p, ByQOS, sacctmgr, sacct, nil)
	if err != nil || len(notes) != 1 || notes[0] != "Slurm lists 4097 qos queues, more than the 4096 a profile holds: no queue figures" || p.Queues != nil {
		t.Errorf("%v %q %d queues", err, notes, len(p.Queues))
	}
}
