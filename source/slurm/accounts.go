package slurm

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/seedance/seedance/internal/extcmd"
	"github.com/seedance/seedance/profile"
)

// Sacctmgr runs sacctmgr with the arguments and returns its output.
type Sacctmgr = Client

// SacctmgrCommand is the sacctmgr on PATH, run within l.
func SacctmgrCommand(l extcmd.Limits) Sacctmgr { return ClientCommand("sacctmgr", l) }

// sacctTime is how sacct writes a time: local, to the second.
const sacctTime = "2006-01-02T15:04:05"

// account is one Slurm account of the association tree.
type account struct {
	parent string
	gpus   *float64 // GrpTRES gres/gpu; nil: no limit
	budget *float64 // GrpTRESMins gres/gpu; nil: none
}

// What a job's queue is (settings slurm.queues; docs/queues.md, Slurm):
// its account (the association tree, GrpTRES and GrpTRESMins of each
// account) or its QOS (GrpTRES and GrpTRESMins of each QOS, which has no
// parent: no cohort).
const (
	ByAccount = "account"
	ByQOS     = "qos"
)

// AddQueues gives the profile Slurm's accounts (by ByAccount) or its QOS
// (ByQOS) as queues (docs/queues.md, Slurm): each one's GPU limit
// (GrpTRES gres/gpu) as its quota, its GPU-minute limit (GrpTRESMins
// gres/gpu) as its budget, an account's parent as its cohort; and from
// sacct the window's jobs that asked for GPUs: each job's wait from when
// it became eligible to run (its submission, or later: a hold released, a
// dependency met, its begin time) to its start (or still), its
// reservation from its start to its end (or still); a wait its own
// limits held (squeue's reason for a job pending now, else sacct's) says
// so (QueueSpan.HeldBy). Each job of the profile gets its account, or the
// QOS sacct gives it, as its queue. An account tree with a cycle is a
// note naming it.
func AddQueues(ctx context.Context, p *profile.Profile, by string, sacctmgr Sacctmgr, sacct Sacct, squeue Squeue) ([]string, error) {
	queues, notes, err := readQueues(ctx, by, sacctmgr)
	if err != nil {
		return nil, err
	}
	if len(queues) > profile.MaxQueues { // a profile holds no more
		return append(notes, fmt.Sprintf("Slurm lists %d %s queues, more than the %d a profile holds: no queue figures", len(queues), by, profile.MaxQueues)), nil
	}
	jobs, err := sacct(ctx, "--allusers", "--allocations", "--noheader", "--parsable2", "--starttime="+p.StartedAt.Local().Format(sacctTime),
		"--endtime="+p.EndedAt.Local().Format(sacctTime), "--format="+sacctJobFormat)
	if err != nil {
		return notes, err
	}
	queueOf := map[string]string{} // a job's ids (raw, and as an array task) to its queue
	now := pendingReasons(ctx, squeue)
	eachLine(jobs, func(line string) {
		j, ok := readSacctJob(line)
		if !ok {
			return
		}
		if r, ok := now[j.raw]; ok { // pending now: squeue's reason is today's, sacct's its database's
			j.heldBy = heldBy(r, true)
		}
		name := j.account
		if by == ByQOS {
			name = j.qos
		}
		if q := queues[name]; q != nil {
			queueOf[j.raw], queueOf[j.id] = name, name
			addJob(q, j, p.StartedAt, p.EndedAt)
		}
	})
	names := slices.Sorted(maps.Keys(queues))
	for _, name := range names {
		p.Queues = append(p.Queues, *queues[name])
	}
	for ni := range p.Nodes {
		for wi := range p.Nodes[ni].Workloads {
			w := &p.Nodes[ni].Workloads[wi]
			switch {
			case w.Kind != profile.KindJob:
			case by == ByQOS:
				w.Queue = queueOf[w.ID]
			case w.Labels["account"] != "":
				w.Queue = w.Labels["account"]
			}
		}
	}
	return notes, nil
}

// readQueues reads the accounts or the QOS as queues, by name.
func readQueues(ctx context.Context, by string, sacctmgr Sacctmgr) (map[string]*profile.Queue, []string, error) {
	queues := map[string]*profile.Queue{}
	if by == ByQOS {
		out, err := sacctmgr(ctx, "--noheader", "--parsable2", "show", "qos", "format=Name,GrpTRES,GrpTRESMins")
		if err != nil {
			return nil, nil, err
		}
		eachLine(out, func(line string) {
			f := strings.Split(line, "|")
			if name := clean(f[0]); len(f) == 3 && name != "" {
				queues[name] = &profile.Queue{Name: name, Kind: profile.QueueSlurmQOS, NominalGPUs: tresGPUs(f[1]), BudgetGPUMinutes: tresGPUs(f[2])}
			}
		})
		return queues, nil, nil
	}
	out, err := sacctmgr(ctx, "--noheader", "--parsable2", "show", "associations", "format=Cluster,Account,User,ParentName,GrpTRES,GrpTRESMins")
	if err != nil {
		return nil, nil, err
	}
	accounts, notes := readAccounts(out)
	for name, a := range accounts {
		queues[name] = &profile.Queue{Name: name, Kind: profile.QueueSlurmAccount, Cohort: a.parent, NominalGPUs: a.gpus, BudgetGPUMinutes: a.budget}
	}
	return queues, notes, nil
}

// readAccounts reads sacctmgr's account associations (those of no user),
// root left out: the top accounts' cohort is root. An account whose
// parents lead back to it has no cohort, and is named in a note.
func readAccounts(out []byte) (map[string]account, []string) {
	accounts := map[string]account{}
	eachLine(out, func(line string) {
		f := strings.Split(line, "|")
		if len(f) != 6 || f[2] != "" || f[1] == "" || f[1] == "root" || len(f[1]) > profile.MaxNameBytes {
			return
		}
		accounts[f[1]] = account{parent: clean(f[3]), gpus: tresGPUs(f[4]), budget: tresGPUs(f[5])}
	})
	var cyclic []string
	for name := range accounts {
		seen := map[string]bool{name: true}
		for p := accounts[name].parent; p != ""; p = accounts[p].parent {
			if seen[p] {
				cyclic = append(cyclic, name)
				break
			}
			seen[p] = true
		}
	}
	if len(cyclic) == 0 {
		return accounts, nil
	}
	sort.Strings(cyclic)
	for _, name := range cyclic {
		a := accounts[name]
		a.parent = ""
		accounts[name] = a
	}
	return accounts, []string{fmt.Sprintf("Slurm's account tree has a cycle through %s: their cohort unknown", strings.Join(cyclic, ", "))}
}

// tresGPUs is the GPUs of a TRES list ("cpu=16,gres/gpu=8"): gres/gpu,
// else the sum of its types (gres/gpu:a100=4); nil when it names none.
func tresGPUs(tres string) *float64 {
	var plain, typed float64
	var hasPlain, hasTyped bool
	for _, kv := range strings.Split(tres, ",") {
		k, v, ok := strings.Cut(kv, "=")
		n, err := strconv.ParseFloat(v, 64)
		if !ok || err != nil || n < 0 {
			continue
		}
		switch {
		case k == "gres/gpu":
			plain, hasPlain = n, true
		case strings.HasPrefix(k, "gres/gpu:"):
			typed, hasTyped = typed+n, true
		}
	}
	switch {
	case hasPlain:
		return &plain
	case hasTyped:
		return &typed
	}
	return nil
}

// sacctJobFormat is what AddQueues asks sacct of each job.
const sacctJobFormat = "JobIDRaw,JobID,Account,QOS,AllocTRES,ReqTRES,Submit,Start,End,State,Eligible,Reason"

// sacctJob is one line of sacctJobFormat.
type sacctJob struct {
	raw, id, account, qos        string
	held, asked                  *float64
	submit, start, end, eligible string
	// heldBy is the reason the job's own limits kept it waiting (heldBy),
	// "" when it waited for GPUs.
	heldBy string
}

// readSacctJob reads one line of sacctJobFormat; ok is false for a line
// of another form or a step's.
func readSacctJob(line string) (sacctJob, bool) {
	f := strings.Split(line, "|")
	if len(f) != 12 || !jobID.MatchString(f[0]) {
		return sacctJob{}, false
	}
	return sacctJob{raw: f[0], id: strings.TrimSpace(f[1]), account: f[2], qos: f[3], held: tresGPUs(f[4]), asked: tresGPUs(f[5]),
		submit: f[6], start: f[7], end: f[8], eligible: f[10], heldBy: heldBy(f[11], false)}, true
}

// addJob books a job that asked for GPUs in its queue, its times cut to
// [start, end].
func addJob(q *profile.Queue, j sacctJob, start, end time.Time) {
	gpus := j.asked
	if j.held != nil && *j.held > 0 {
		gpus = j.held
	}
	if gpus == nil || *gpus <= 0 {
		return
	}
	submit, sOK := sacctAt(j.submit)
	waits := strings.TrimSpace(j.eligible) != "Unknown" // never eligible: held, a dependency never met
	if eligible, ok := sacctAt(j.eligible); ok && eligible.After(submit) {
		submit = eligible // held, a dependency, a begin time: no wait for GPUs before
	}
	began, bOK := sacctAt(j.start)
	ended, eOK := sacctAt(j.end)
	if !sOK {
		return
	}
	at := func(t time.Time) float64 { return t.Sub(start).Seconds() }
	span := func(from, to time.Time) profile.QueueSpan {
		return profile.QueueSpan{Workload: j.raw, GPUs: *gpus, StartS: max(0, at(from)), EndS: min(at(end), at(to))}
	}
	waitEnd := end
	if bOK {
		waitEnd = began
	} else if eOK {
		waitEnd = ended
	}
	wait := span(submit, waitEnd)
	wait.HeldBy = j.heldBy
	if waits && wait.EndS > wait.StartS {
		q.Pending = append(q.Pending, wait)
	}
	if bOK {
		runEnd := end
		if eOK {
			runEnd = ended
		}
		if s := span(began, runEnd); s.EndS > s.StartS {
			q.Admitted = append(q.Admitted, s)
		}
	}
}

// sacctAt reads a sacct time; ok is false for Unknown, None and the like.
func sacctAt(s string) (time.Time, bool) {
	t, err := time.ParseInLocation(sacctTime, strings.TrimSpace(s), time.Local)
	return t, err == nil
}
