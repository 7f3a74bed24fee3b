package slurm

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/extcmd"
	"github.com/seedance/seedance/internal/testkit/slurmtest"
	"github.com/seedance/seedance/profile"
)

// TestAccountsOnRealSlurm (#58): a real slurmctld with accounting
// (slurmdbd on a MariaDB of its own). Account research (under ml) may use
// 8 GPUs (GrpTRES=gres/gpu=8) and 48,000 GPU-minutes (GrpTRESMins); a 2-GPU job of it runs, a 7-GPU one waits
// (6 are free on the one node). AddQueues gives the accounts as queues
// with their quota and cohort, the running job's reservation from its
// start and the waiting job's wait from its submission, and the profile's
// job its queue.
func TestAccountsOnRealSlurm(t *testing.T) {
	c := slurmtest.StartWithAccounting(t, "node-gpu-01")
	c.Sacctmgr(t, [][]string{{"-i", "add", "account", "ml", "parent=root"}, {"-i", "add", "account", "research", "parent=ml"},
		{"-i", "modify", "account", "where", "name=research", "set", "GrpTRES=gres/gpu=8", "GrpTRESMins=gres/gpu=48000"}, {"-i", "add", "user", "root", "account=research"}})
	from := time.Now().Add(-time.Minute).Truncate(time.Second)
	run := c.Submit(t, "--gres=gpu:2", "-w", "node-gpu-01", "-A", "research")
	c.WaitFor(t, func() bool { return c.Job(t, run, "JobState") == "RUNNING" }, "job "+run+" running")
	wait := c.Submit(t, "--gres=gpu:7", "-w", "node-gpu-01", "-A", "research")
	c.UseConf(t)
	_, sacct := Commands(extcmd.DefaultLimits)
	sacctmgr := SacctmgrCommand(extcmd.DefaultLimits)
	var p *profile.Profile
	// slurmctld tells slurmdbd of the jobs on its own time: poll until
	// sacct has both.
	c.WaitFor(t, func() bool {
		p = &profile.Profile{StartedAt: from, EndedAt: time.Now().Add(time.Minute).Truncate(time.Second), Nodes: []profile.Node{{Name: "node-gpu-01", Workloads: []profile.Workload{
			{ID: run, Name: run, Kind: profile.KindJob, State: profile.StateRunning, GPUs: []int{0, 1}, Labels: map[string]string{"account": "research"}}}}}}
		notes, err := AddQueues(context.Background(), p, ByAccount, sacctmgr, sacct, nil)
		if err != nil || len(notes) > 0 {
			t.Fatalf("AddQueues: %v %q", err, notes)
		}
		for _, q := range p.Queues {
			if q.Name == "research" {
				// The running job's own wait may be under a second: not a span.
				return len(q.Admitted) == 1 && slices.ContainsFunc(q.Pending, func(s profile.QueueSpan) bool { return s.Workload == wait })
			}
		}
		return false
	}, "sacct to know both jobs")
	qs := map[string]profile.Queue{}
	for _, q := range p.Queues {
		qs[q.Name] = q
	}
	r, ml := qs["research"], qs["ml"]
	endS := p.EndedAt.Sub(p.StartedAt).Seconds()
	if len(qs) != 2 || r.Kind != profile.QueueSlurmAccount || r.Cohort != "ml" || r.NominalGPUs == nil || *r.NominalGPUs != 8 || ml.Cohort != "root" || ml.NominalGPUs != nil ||
		r.BudgetGPUMinutes == nil || *r.BudgetGPUMinutes != 48000 || ml.BudgetGPUMinutes != nil {
		t.Fatalf("accounts: %+v", qs)
	}
	if a := r.Admitted[0]; a.Workload != run || a.GPUs != 2 || a.StartS < 0 || a.StartS > 60+30 || a.EndS != endS {
		t.Errorf("the running job's reservation: %+v (window %v s)", a, endS)
	}
	var waited *profile.QueueSpan
	for i := range r.Pending {
		if r.Pending[i].Workload == wait {
			waited = &r.Pending[i]
		}
	}
	if waited == nil || waited.GPUs != 7 || waited.EndS != endS {
		t.Errorf("the waiting job: %+v", r.Pending)
	}
	if p.Nodes[0].Workloads[0].Queue != "research" {
		t.Errorf("the job's queue: %q", p.Nodes[0].Workloads[0].Queue)
	}
	// This cluster's priority plugin is Slurm's default, which counts no
	// usage (sshare would answer zeros): the budget's use stays unknown.
	notes := AddBudgetUse(context.Background(), p, ClientCommand("scontrol", extcmd.DefaultLimits), ClientCommand("sshare", extcmd.DefaultLimits))
	if len(notes) != 1 || !strings.Contains(notes[0], `PriorityType is "priority/basic"`) || qs["research"].BudgetUse != nil {
		t.Errorf("priority/basic: %q", notes)
	}
	for _, q := range p.Queues {
		if q.BudgetUse != nil {
			t.Errorf("queue %s: a use under priority/basic: %+v", q.Name, *q.BudgetUse)
		}
	}
}

// TestQOSOnRealSlurm (#58): with slurm.queues qos, a real slurmdbd's QOS
// are the queues. QOS gpu-team may use 2 GPUs (GrpTRES=gres/gpu=2) and
// 600 GPU-minutes; a 2-GPU job of it runs, a 7-GPU one of it waits (6
// are free on the one node), both in account research. AddQueues gives
// the QOS with their quotas and no cohort, the jobs' reservation and wait
// booked in gpu-team (not in their account), and the profile's job
// gpu-team as its queue.
func TestQOSOnRealSlurm(t *testing.T) {
	c := slurmtest.StartWithAccounting(t, "node-gpu-01")
	c.Sacctmgr(t, [][]string{{"-i", "add", "account", "research", "parent=root"}, {"-i", "add", "qos", "gpu-team"},
		{"-i", "modify", "qos", "where", "name=gpu-team", "set", "GrpTRES=gres/gpu=2", "GrpTRESMins=gres/gpu=600"},
		{"-i", "add", "user", "root", "account=research"}, {"-i", "modify", "user", "root", "set", "qos+=gpu-team"}})
	from := time.Now().Add(-time.Minute).Truncate(time.Second)
	run := c.Submit(t, "--gres=gpu:2", "-w", "node-gpu-01", "-A", "research", "--qos=gpu-team")
	c.WaitFor(t, func() bool { return c.Job(t, run, "JobState") == "RUNNING" }, "job "+run+" running")
	wait := c.Submit(t, "--gres=gpu:7", "-w", "node-gpu-01", "-A", "research", "--qos=gpu-team")
	c.UseConf(t)
	_, sacct := Commands(extcmd.DefaultLimits)
	var p *profile.Profile
	var qs map[string]profile.Queue
	c.WaitFor(t, func() bool {
		p = &profile.Profile{StartedAt: from, EndedAt: time.Now().Add(time.Minute).Truncate(time.Second), Nodes: []profile.Node{{Name: "node-gpu-01", Workloads: []profile.Workload{
			{ID: run, Name: run, Kind: profile.KindJob, State: profile.StateRunning, GPUs: []int{0, 1}, Labels: map[string]string{"account": "research"}}}}}}
		notes, err := AddQueues(context.Background(), p, ByQOS, SacctmgrCommand(extcmd.DefaultLimits), sacct, nil)
		if err != nil || len(notes) > 0 {
			t.Fatalf("AddQueues: %v %q", err, notes)
		}
		qs = map[string]profile.Queue{}
		for _, q := range p.Queues {
			qs[q.Name] = q
		}
		g := qs["gpu-team"]
		return len(g.Admitted) == 1 && slices.ContainsFunc(g.Pending, func(s profile.QueueSpan) bool { return s.Workload == wait })
	}, "sacct to know both jobs")
	g, normal := qs["gpu-team"], qs["normal"]
	endS := p.EndedAt.Sub(p.StartedAt).Seconds()
	if len(qs) != 2 || g.Kind != profile.QueueSlurmQOS || g.Cohort != "" || g.NominalGPUs == nil || *g.NominalGPUs != 2 || g.BudgetGPUMinutes == nil || *g.BudgetGPUMinutes != 600 ||
		normal.Kind != profile.QueueSlurmQOS || normal.NominalGPUs != nil || len(normal.Admitted)+len(normal.Pending) != 0 {
		t.Fatalf("QOS: %+v", qs)
	}
	if a := g.Admitted[0]; a.Workload != run || a.GPUs != 2 || a.StartS < 0 || a.StartS > 60+30 || a.EndS != endS {
		t.Errorf("the running job's reservation: %+v (window %v s)", a, endS)
	}
	if i := slices.IndexFunc(g.Pending, func(s profile.QueueSpan) bool { return s.Workload == wait }); g.Pending[i].GPUs != 7 || g.Pending[i].EndS != endS {
		t.Errorf("the waiting job: %+v", g.Pending)
	}
	if q := p.Nodes[0].Workloads[0].Queue; q != "gpu-team" {
		t.Errorf("the job's queue: %q", q)
	}
}

// TestEligibleWaitOnRealSlurm (#58): a job's wait for GPUs starts when it
// becomes eligible to run, not at its submission. On a real slurmdbd, a
// 1-GPU job of account research depends on a running one (afterany): it
// waits on its dependency, not for GPUs, until that job is cancelled,
// then starts; its wait, if any, starts at or after the cancel (sacct's
// Eligible), not at its submission. A job held from its submission
// (--hold) and never released is never eligible: no wait at all.
func TestEligibleWaitOnRealSlurm(t *testing.T) {
	c := slurmtest.StartWithAccounting(t, "node-gpu-01")
	c.Sacctmgr(t, [][]string{{"-i", "add", "account", "research", "parent=root"}, {"-i", "add", "user", "root", "account=research"}})
	from := time.Now().Add(-time.Minute).Truncate(time.Second)
	run := c.Submit(t, "--gres=gpu:2", "-w", "node-gpu-01", "-A", "research")
	c.WaitFor(t, func() bool { return c.Job(t, run, "JobState") == "RUNNING" }, "job "+run+" running")
	dep := c.Submit(t, "--gres=gpu:1", "-w", "node-gpu-01", "-A", "research", "--dependency=afterany:"+run)
	held := c.Submit(t, "--gres=gpu:1", "-w", "node-gpu-01", "-A", "research", "--hold")
	submitted := time.Now()
	c.WaitFor(t, func() bool { return c.Job(t, dep, "Reason") == "Dependency" && time.Since(submitted) > 3*time.Second }, "job "+dep+" waiting 3 s on its dependency")
	cancelled := time.Now().Truncate(time.Second)
	if out, err := c.Run("scancel", run); err != nil {
		t.Fatalf("scancel: %v %s", err, out)
	}
	c.WaitFor(t, func() bool { return c.Job(t, dep, "JobState") == "RUNNING" }, "job "+dep+" running")
	c.UseConf(t)
	_, sacct := Commands(extcmd.DefaultLimits)
	var r profile.Queue
	var p *profile.Profile
	c.WaitFor(t, func() bool {
		p = &profile.Profile{StartedAt: from, EndedAt: time.Now().Add(time.Minute).Truncate(time.Second)}
		if _, err := AddQueues(context.Background(), p, ByAccount, SacctmgrCommand(extcmd.DefaultLimits), sacct, nil); err != nil {
			t.Fatal(err)
		}
		for _, q := range p.Queues {
			if q.Name == "research" {
				r = q
			}
		}
		return slices.ContainsFunc(r.Admitted, func(s profile.QueueSpan) bool { return s.Workload == dep })
	}, "sacct to know job "+dep+" started")
	at := cancelled.Sub(p.StartedAt).Seconds()
	for _, s := range r.Pending {
		if s.Workload == held || s.Workload == dep && s.StartS < at-1 {
			t.Errorf("job %s waited from %v s (its dependency ended at %v s; job %s is held): %+v", s.Workload, s.StartS, at, held, r.Pending)
		}
	}
}

// TestHeldWaitOnRealSlurm (#58): a wait that the job's own limits hold is
// marked so, from squeue while the job waits and from sacct once it ran.
// QOS gpu-team lets a user hold 2 GPUs (MaxTRESPerUser=gres/gpu=2) under
// enforced limits; a 2-GPU job of it runs, so a 1-GPU one of it waits with
// QOSMaxGRESPerUser although 6 GPUs are free, while a 7-GPU job of account
// prod waits for GPUs on the node (slurmctld says its node is not
// available to it: the GPUs it needs are held). AddQueues marks the first wait held
// (QOSMaxGRESPerUser) and not the second; once the running job is
// cancelled and the capped one has run, sacct's reason marks its ended
// wait the same way.
func TestHeldWaitOnRealSlurm(t *testing.T) {
	c := slurmtest.StartWithUsage(t, "node-gpu-01")
	c.Sacctmgr(t, [][]string{{"-i", "add", "account", "research", "parent=root"}, {"-i", "add", "account", "prod", "parent=root"}, {"-i", "add", "qos", "gpu-team"},
		{"-i", "modify", "qos", "where", "name=gpu-team", "set", "MaxTRESPerUser=gres/gpu=2"},
		{"-i", "add", "user", "root", "account=research,prod"}, {"-i", "modify", "user", "root", "set", "qos+=gpu-team"}})
	from := time.Now().Add(-time.Minute).Truncate(time.Second)
	run := c.Submit(t, "--gres=gpu:2", "-w", "node-gpu-01", "-A", "research", "--qos=gpu-team")
	c.WaitFor(t, func() bool { return c.Job(t, run, "JobState") == "RUNNING" }, "job "+run+" running")
	capped := c.Submit(t, "--gres=gpu:1", "-w", "node-gpu-01", "-A", "research", "--qos=gpu-team")
	big := c.Submit(t, "--gres=gpu:7", "-w", "node-gpu-01", "-A", "prod")
	c.WaitFor(t, func() bool {
		return c.Job(t, capped, "Reason") == "QOSMaxGRESPerUser" && c.Job(t, big, "JobState") == "PENDING"
	},
		"jobs "+capped+" and "+big+" waiting on their user's cap and for GPUs")
	c.UseConf(t)
	squeue, sacct := Commands(extcmd.DefaultLimits)
	waits := func() map[string]profile.QueueSpan {
		p := &profile.Profile{StartedAt: from, EndedAt: time.Now().Add(time.Minute).Truncate(time.Second)}
		if _, err := AddQueues(context.Background(), p, ByAccount, SacctmgrCommand(extcmd.DefaultLimits), sacct, squeue); err != nil {
			t.Fatal(err)
		}
		out := map[string]profile.QueueSpan{}
		for _, q := range p.Queues {
			for _, s := range q.Pending {
				out[s.Workload] = s
			}
		}
		return out
	}
	var w map[string]profile.QueueSpan
	c.WaitFor(t, func() bool { w = waits(); return w[capped].GPUs == 1 && w[big].GPUs == 7 }, "sacct to know both waiting jobs")
	if w[capped].HeldBy != "QOSMaxGRESPerUser" || w[big].HeldBy != "" {
		t.Errorf("waiting: %s held by %q, %s by %q", capped, w[capped].HeldBy, big, w[big].HeldBy)
	}
	for _, id := range []string{run, big} {
		if out, err := c.Run("scancel", id); err != nil {
			t.Fatalf("scancel %s: %v %s", id, err, out)
		}
	}
	c.WaitFor(t, func() bool { return c.Job(t, capped, "JobState") == "RUNNING" }, "job "+capped+" running")
	c.WaitFor(t, func() bool { w = waits(); _, ok := w[capped]; return ok && sacctStarted(t, c, capped) },
		"sacct to know job "+capped+" started")
	if w[capped].HeldBy != "QOSMaxGRESPerUser" {
		t.Errorf("after it ran: %s held by %q (sacct's Reason)", capped, w[capped].HeldBy)
	}
}

// sacctStarted says whether sacct has job id's start.
func sacctStarted(t *testing.T, c *slurmtest.Cluster, id string) bool {
	out, err := c.Run("sacct", "--noheader", "--parsable2", "--allocations", "--format=Start", "--jobs="+id)
	if err != nil {
		t.Fatalf("sacct: %v %s", err, out)
	}
	_, ok := sacctAt(strings.TrimSpace(out))
	return ok
}
