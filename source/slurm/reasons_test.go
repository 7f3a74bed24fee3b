package slurm

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/seedance/seedance/profile"
)

// TestHeldBy: the reasons that say a job's own limits kept it waiting,
// and those that say it waited for GPUs; a hold counts only as squeue's
// reason today (sacct's was before the job became eligible).
func TestHeldBy(t *testing.T) {
	for _, c := range []struct {
		reason  string
		current bool
		want    string
	}{
		{"None", false, ""}, {"Priority", true, ""}, {"Resources", true, ""}, {"AssocGrpGRES", true, ""}, {"QOSGrpGRES", false, ""},
		{"ReqNodeNotAvail, UnavailableNodes:n1", true, ""}, {"Dependency", false, ""}, {"Dependency", true, ""}, {"BeginTime", true, ""},
		{"JobHeldUser", false, ""}, {"JobHeldUser", true, "JobHeldUser"}, {"JobHeldAdmin", true, "JobHeldAdmin"},
		{"QOSMaxGRESPerUser", false, "QOSMaxGRESPerUser"}, {"AssocMaxGRESPerJob", true, "AssocMaxGRESPerJob"}, {"MaxGRESPerAccount", false, "MaxGRESPerAccount"},
		{"AssocGrpGRESMinutes", false, "AssocGrpGRESMinutes"}, {"QOSGrpGRESRunMinutes", true, "QOSGrpGRESRunMinutes"}, {"AssocMaxJobsLimit", false, "AssocMaxJobsLimit"},
		{"QOSMinGRES", false, "QOSMinGRES"}, {"InvalidQOS", false, "InvalidQOS"}, {" QOSMaxGRESPerUser ", false, "QOSMaxGRESPerUser"},
	} {
		if got := heldBy(c.reason, c.current); got != c.want {
			t.Errorf("heldBy(%q, %v) = %q, want %q", c.reason, c.current, got, c.want)
		}
	}
}

// TestPendingReasonsOverSacct: for a job pending now, squeue's reason
// stands for sacct's (which slurmdbd keeps from when the job became
// eligible): job 2, at its user's GPU cap now, is held; job 3, whose
// database reason is an old cap but which waits for Resources now, is
// not; job 1, which ran, keeps sacct's.
func TestPendingReasonsOverSacct(t *testing.T) {
	start := time.Date(2026, 1, 5, 9, 0, 0, 0, time.Local)
	at := func(m int) string { return start.Add(time.Duration(m) * time.Minute).Format(sacctTime) }
	sacctmgr := func(context.Context, ...string) ([]byte, error) { return []byte("c|ml||root||\n"), nil }
	sacct := func(context.Context, ...string) ([]byte, error) {
		return []byte("1|1|ml|normal|gres/gpu=1|gres/gpu=1|" + at(0) + "|" + at(10) + "|Unknown|RUNNING|" + at(0) + "|QOSMaxGRESPerUser\n" +
			"2|2|ml|normal||gres/gpu=2|" + at(0) + "|Unknown|Unknown|PENDING|" + at(0) + "|None\n" +
			"3|3|ml|normal||gres/gpu=4|" + at(30) + "|Unknown|Unknown|PENDING|" + at(30) + "|QOSMaxGRESPerUser\n"), nil
	}
	squeue := func(_ context.Context, args ...string) ([]byte, error) {
		if fmt.Sprint(args) != "[--noheader --states=PENDING --format=%i|%r]" {
			return nil, fmt.Errorf("asked %q", args)
		}
		return []byte("2|QOSMaxGRESPerUser\n3|Resources\n"), nil
	}
	p := &profile.Profile{StartedAt: start, EndedAt: start.Add(time.Hour)}
	if _, err := AddQueues(context.Background(), p, ByAccount, sacctmgr, sacct, squeue); err != nil || len(p.Queues) != 1 {
		t.Fatal(err, p.Queues)
	}
	want := "[{1 1 0 600 QOSMaxGRESPerUser} {2 2 0 3600 QOSMaxGRESPerUser} {3 4 1800 3600 }]"
	if got := fmt.Sprint(p.Queues[0].Pending); got != want {
		t.Errorf("waits %s, want %s", got, want)
	}
}
