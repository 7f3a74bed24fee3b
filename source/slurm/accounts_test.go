package slurm

import (
	"fmt"
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
// (cancelled) waited until it ended; a job of no GPU or no known account
// is left out.
func TestAddJob(t *testing.T) {
	start := time.Date(2026, 1, 5, 9, 0, 0, 0, time.Local)
	end := start.Add(time.Hour)
	qs := map[string]*profile.Queue{"ml": {Name: "ml"}}
	at := func(m int) string { return start.Add(time.Duration(m) * time.Minute).Format(sacctTime) }
	for _, l := range []string{
		"1|ml|cpu=1,gres/gpu=4|gres/gpu=4|" + at(-30) + "|" + at(-20) + "|" + at(30) + "|COMPLETED",
		"2|ml||gres/gpu=2|" + at(10) + "|Unknown|Unknown|PENDING",
		"3|ml||gres/gpu=1|" + at(5) + "|None|" + at(15) + "|CANCELLED",
		"4|ml|cpu=1|cpu=1|" + at(0) + "|" + at(0) + "|Unknown|RUNNING",
		"5|other||gres/gpu=1|" + at(0) + "|Unknown|Unknown|PENDING",
	} {
		addJob(qs, l, start, end)
	}
	q := qs["ml"]
	if len(q.Admitted) != 1 || q.Admitted[0] != (profile.QueueSpan{Workload: "1", GPUs: 4, StartS: 0, EndS: 1800}) {
		t.Errorf("admitted: %+v", q.Admitted)
	}
	want := "[{2 2 600 3600} {3 1 300 900}]"
	if got := fmt.Sprint(q.Pending); got != want {
		t.Errorf("pending: %s, want %s", got, want)
	}
}
