package analyze

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/seedance/seedance/pricing"
	"github.com/seedance/seedance/profile"
)

// queuedPod is a running pod of namespace ml admitted through queue.
func queuedPod(name, queue string, gpus []int, tenure ...profile.Tenure) profile.Workload {
	return profile.Workload{ID: "ml/" + name, Name: name, Kind: profile.KindPod, State: profile.StateRunning, GPUs: gpus,
		Labels: map[string]string{"namespace": "ml"}, Queue: queue, Intervals: tenure}
}

// withQueues is doc with queues added.
func withQueues(t *testing.T, doc []byte, qs []profile.Queue) []byte {
	t.Helper()
	p, err := profile.Read(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	p.Queues = qs
	var b bytes.Buffer
	if err := profile.Encode(&b, p); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// queuesReport analyzes the worked example of docs/queues.md: one hour,
// a sample a minute, every GPU at $3.60/h, one node of 8 GPUs.
//
//   - research (cohort ml, quota 4): ml/train holds GPUs 0–3 all hour
//     and ml/extra GPUs 4–5 from 30 min, all at 10 %; their reservations
//     are 4 GPUs all hour and 2 from 30 min (6 GPUs: 2 borrowed).
//   - prod (cohort ml, quota 4): ml/serve holds GPU 6 at 90 %, reserved
//     all hour; ml/wait waited for 6 GPUs from 30 min.
//   - ml/lost holds GPU 7 at 0 % through queue ghost, which no source
//     listed.
func queuesReport(t *testing.T, qp QueueParams, edit ...func([]profile.Queue)) *Report {
	ts := every60(60)
	var gpus []gpuSpec
	for i, u := range []float64{10, 10, 10, 10, 10, 10, 90, 0} {
		gpus = append(gpus, gpuSpec{uuid: "GPU-" + string(rune('0'+i)), model: "TestGPU", t: ts, util: fill(u, 60)})
	}
	ws := []profile.Workload{
		queuedPod("train", "research", []int{0, 1, 2, 3}),
		queuedPod("extra", "research", []int{4, 5}, profile.Tenure{StartS: 1800, EndS: 3600}),
		queuedPod("serve", "prod", []int{6}),
		queuedPod("lost", "ghost", []int{7}),
	}
	four := 4.0
	qs := []profile.Queue{
		{Name: "research", Kind: profile.QueueKueue, Cohort: "ml", NominalGPUs: &four,
			Admitted: []profile.QueueSpan{{Workload: "ml/train", GPUs: 4, StartS: 0, EndS: 3600}, {Workload: "ml/extra", GPUs: 2, StartS: 1800, EndS: 3600}}},
		{Name: "prod", Kind: profile.QueueKueue, Cohort: "ml", NominalGPUs: &four,
			Admitted: []profile.QueueSpan{{Workload: "ml/serve", GPUs: 1, StartS: 0, EndS: 3600}},
			Pending:  []profile.QueueSpan{{Workload: "ml/wait", GPUs: 6, StartS: 1800, EndS: 3600}}},
	}
	for _, e := range edit {
		e(qs)
	}
	p := DefaultParams()
	p.Pricer = pricing.New(nil, 3.6)
	p.Queues = &qp
	return mustAnalyze(t, p, withQueues(t, mkProfile(t, t0, 3600, 60, nodeSpec{name: "n", gpus: gpus, workloads: ws}), qs))
}

// TestLendingLimitCapsLent: the worked example with prod's lending limit
// at 1 GPU: of its 3 unreserved GPUs it lends at most 1, so of research's
// 2 borrowed GPUs from 30 min it lent 1 (0.5 GPU-h, where without the
// limit it lent both: 1 GPU-h); a limit of 0 lends none, a limit above its
// unreserved quota changes nothing.
func TestLendingLimitCapsLent(t *testing.T) {
	for _, c := range []struct {
		limit, lent float64
	}{{1, 0.5}, {0, 0}, {10, 1}} {
		r := queuesReport(t, DefaultQueueParams(), func(qs []profile.Queue) { qs[1].LendingLimitGPUs = &c.limit })
		if prod := r.Queues["prod"]; !nearly(prod.LentGPUHours, c.lent) || !nearly(r.Queues["research"].BorrowedGPUHours, 1) {
			t.Errorf("lending limit %v: prod lent %v GPU-h, want %v", c.limit, prod.LentGPUHours, c.lent)
		}
	}
}

// TestQueuesHandComputed checks every figure of docs/queues.md's worked
// example, per queue and cohort, and the hoarding verdict.
func TestQueuesHandComputed(t *testing.T) {
	r := queuesReport(t, DefaultQueueParams())
	res := r.Queues["research"]
	// Held: 4 GPUs × 1 h + 2 × 0.5 h = 5 GPU-h ($18), used 10 % of it.
	if res.Workloads != 2 || !nearly(res.NominalGPUHours, 4) || !nearly(res.ReservedGPUHours, 5) || !nearly(res.BorrowedGPUHours, 1) || !nearly(res.LentGPUHours, 0) ||
		!nearly(res.AllocatedGPUHours, 5) || !nearly(res.UsedGPUHours, 0.5) || !nearly(res.IdleHeldGPUHours, 4.5) || !nearly(res.AllocatedUSD, 18) || !nearly(res.UsedUSD, 1.8) || !nearly(res.IdleHeldUSD, 16.2) ||
		!nearly(res.HeldOfQuota, 1.25) || !nearly(res.Efficiency, 0.1) || res.USDPerGPUHour != 3.6 || !nearly(res.NominalUSD, 14.4) || res.PendingGPUHours != 0 {
		t.Errorf("research: %s", showQ(res))
	}
	// The 5.4 idle reserved GPUs (6 × 0.9) from 30 min, fewer than the 6
	// waited for: 2.7 GPU-h.
	if !res.Hoarding || !nearly(res.ContestedGPUHours, 2.7) || !nearly(res.ContestedUSD, 9.72) {
		t.Errorf("research's verdict: %s", showQ(res))
	}
	prod := r.Queues["prod"]
	// It lent research its 2 borrowed GPUs for 0.5 h; ml/wait waited for 6
	// GPUs for 0.5 h.
	if prod.Workloads != 1 || !nearly(prod.ReservedGPUHours, 1) || !nearly(prod.BorrowedGPUHours, 0) || !nearly(prod.LentGPUHours, 1) || !nearly(prod.AllocatedGPUHours, 1) ||
		!nearly(prod.UsedGPUHours, 0.9) || !nearly(prod.IdleHeldGPUHours, 0.1) || prod.PendingGPUHours != 3 || prod.PendingWorkloads == nil || *prod.PendingWorkloads != 1 || !nearly(prod.LongestWaitS, 1800) ||
		prod.PendingUSD != 10.8 || !nearly(prod.UsedUSD, 3.24) || !nearly(prod.IdleHeldUSD, 0.36) || !nearly(prod.HeldOfQuota, 0.25) || prod.Hoarding || prod.ContestedGPUHours != nil {
		t.Errorf("prod: %s", showQ(prod))
	}
	ghost := r.Queues["ghost"]
	if ghost.Workloads != 1 || ghost.NominalGPUs != nil || ghost.NominalGPUHours != nil || ghost.HeldOfQuota != nil || ghost.ReservedGPUHours != nil ||
		!nearly(ghost.AllocatedGPUHours, 1) || !nearly(ghost.IdleHeldUSD, 3.6) || !nearly(ghost.Efficiency, 0) || ghost.Hoarding {
		t.Errorf("ghost (not listed): %s", showQ(ghost))
	}
	if !strings.Contains(strings.Join(r.Warnings, "\n"), "a queue the profile does not list, their quota unknown: ml/lost (queue ghost)") {
		t.Errorf("no warning for ml/lost: %q", r.Warnings)
	}
	ml := r.Cohorts["ml"]
	if len(r.Cohorts) != 1 || ml.Workloads != 3 || !nearly(ml.NominalGPUHours, 8) || !nearly(ml.ReservedGPUHours, 6) || !nearly(ml.AllocatedGPUHours, 6) ||
		!nearly(ml.UsedGPUHours, 1.4) || ml.PendingGPUHours != 3 || !nearly(ml.HeldOfQuota, 0.75) || !nearly(ml.BorrowedGPUHours, 1) || !nearly(ml.LentGPUHours, 1) {
		t.Errorf("cohort ml: %s", showQ(ml))
	}
	if len(r.Hoarding) != 1 || r.Hoarding[0].Queue != "research" || strings.Join(r.Hoarding[0].Waiting, ",") != "prod" || !nearly(r.Hoarding[0].ContestedUSD, 9.72) {
		t.Errorf("hoarding: %+v", r.Hoarding)
	}
}

// TestQueueOfUnknownWorkloads: the worked example with prod as Kueue's
// metrics alone give it (docs/queues.md, Kueue, from its metrics): its
// reservations and waits name no workload, so what it held and used, its
// share of its quota, its efficiency, its waiting workloads and its used
// GPUs over time are null (not the 1 GPU-h ml/serve held), and so are the
// cohort's sums of them; what it reserved (1 GPU-h) and waited for (3
// GPU-h, $10.80) stand, and research is still named for the wait.
func TestQueueOfUnknownWorkloads(t *testing.T) {
	r := queuesReport(t, DefaultQueueParams(), func(qs []profile.Queue) {
		qs[1].WorkloadsUnknown = true
		qs[1].Admitted[0].Workload, qs[1].Pending[0].Workload = "", ""
	})
	prod := r.Queues["prod"]
	for name, p := range map[string]*float64{"allocated": prod.AllocatedGPUHours, "used": prod.UsedGPUHours, "idle-held": prod.IdleHeldGPUHours,
		"allocated $": prod.AllocatedUSD, "used $": prod.UsedUSD, "idle-held $": prod.IdleHeldUSD, "held of quota": prod.HeldOfQuota,
		"efficiency": prod.Efficiency, "longest wait": prod.LongestWaitS, "p95 used": prod.UsedGPUsPercentile, "peak used": prod.PeakUsedGPUs,
		"decayed used": prod.DecayedUsedGPUs} {
		if p != nil {
			t.Errorf("prod's %s: %v, want null", name, *p)
		}
	}
	if prod.PendingWorkloads != nil || !nearly(prod.ReservedGPUHours, 1) || prod.PendingGPUHours != 3 || prod.PendingUSD != 10.8 || !nearly(prod.LentGPUHours, 1) ||
		prod.DecayedReservedGPUs == nil || prod.Hoarding {
		t.Errorf("prod: %s", showQ(prod))
	}
	ml := r.Cohorts["ml"]
	if ml.AllocatedGPUHours != nil || ml.UsedUSD != nil || ml.HeldOfQuota != nil || ml.Efficiency != nil || !nearly(ml.ReservedGPUHours, 6) || ml.PendingGPUHours != 3 {
		t.Errorf("cohort ml: %s", showQ(ml))
	}
	if len(r.Hoarding) != 1 || r.Hoarding[0].Queue != "research" || !nearly(r.Hoarding[0].ContestedUSD, 9.72) {
		t.Errorf("hoarding: %+v", r.Hoarding)
	}
	for _, c := range r.QuotaWhatIf {
		if c.Queue == "prod" {
			t.Errorf("a what-if for prod, whose use is unknown: %+v", c)
		}
	}
}

// TestHeldWaitsAreNoDemand: the worked example with ml/wait's 6 GPUs held
// by its user's cap (QOSMaxGRESPerUser): prod still waited 3 GPU-hours,
// all of them held, and research, idle beside it, is no longer named; with
// ml/more waiting for 2 GPUs beside it from 30 min (a wait for GPUs),
// research is named for that alone: min(5.4, 2) × 0.5 = 1 GPU-hour, $3.60.
// The cohort sums the held part.
func TestHeldWaitsAreNoDemand(t *testing.T) {
	r := queuesReport(t, DefaultQueueParams(), func(qs []profile.Queue) { qs[1].Pending[0].HeldBy = "QOSMaxGRESPerUser" })
	prod := r.Queues["prod"]
	if prod.PendingGPUHours != 3 || prod.HeldPendingGPUHours != 3 || len(r.Hoarding) != 0 || r.Queues["research"].Hoarding || r.Cohorts["ml"].HeldPendingGPUHours != 3 {
		t.Errorf("all held: prod %s, hoarding %+v", showQ(prod), r.Hoarding)
	}
	r = queuesReport(t, DefaultQueueParams(), func(qs []profile.Queue) {
		qs[1].Pending[0].HeldBy = "QOSMaxGRESPerUser"
		qs[1].Pending = append(qs[1].Pending, profile.QueueSpan{Workload: "ml/more", GPUs: 2, StartS: 1800, EndS: 3600})
	})
	prod = r.Queues["prod"]
	if prod.PendingGPUHours != 4 || prod.HeldPendingGPUHours != 3 || len(r.Hoarding) != 1 || r.Hoarding[0].Queue != "research" ||
		!nearly(r.Hoarding[0].ContestedGPUHours, 1) || !nearly(r.Hoarding[0].ContestedUSD, 3.6) {
		t.Errorf("one held: prod %s, hoarding %+v", showQ(prod), r.Hoarding)
	}
}

// TestHoardingThresholds: the verdict's thresholds hold exactly at their
// value (held ≥ HeldPct, used < UsedPct), and a queue nobody waited
// beside is not hoarding.
func TestHoardingThresholds(t *testing.T) {
	for name, c := range map[string]struct {
		qp   QueueParams
		want bool
	}{
		"defaults":               {DefaultQueueParams(), true},
		"held exactly at 125 %":  {QueueParams{HeldPct: 125, UsedPct: 20}, true},
		"held above 125 %":       {QueueParams{HeldPct: 125.01, UsedPct: 20}, false},
		"used exactly at 10 %":   {QueueParams{HeldPct: 50, UsedPct: 10}, false},
		"used just above 10 %":   {QueueParams{HeldPct: 50, UsedPct: 10.01}, true},
		"nothing held is enough": {QueueParams{HeldPct: 0, UsedPct: 100}, true},
	} {
		if got := queuesReport(t, c.qp).Queues["research"].Hoarding; got != c.want {
			t.Errorf("%s: hoarding %v, want %v", name, got, c.want)
		}
	}
}

func showQ(f QueueFigures) string {
	var b strings.Builder
	for _, p := range []struct {
		n string
		v *float64
	}{{"nominal_h", f.NominalGPUHours}, {"reserved", f.ReservedGPUHours}, {"borrowed", f.BorrowedGPUHours}, {"lent", f.LentGPUHours},
		{"held_of_quota", f.HeldOfQuota}, {"eff", f.Efficiency}, {"contested", f.ContestedGPUHours}, {"contested_usd", f.ContestedUSD}} {
		if p.v == nil {
			fmt.Fprintf(&b, "%s=null ", p.n)
		} else {
			fmt.Fprintf(&b, "%s=%v ", p.n, *p.v)
		}
	}
	return fmt.Sprintf("%s%+v", b.String(), f)
}

// TestQuotaWhatIf: one hour, buckets of 5 minutes, a half-life of an
// hour. big (quota 8) reserves and holds 4 GPUs at 25 %: 1 GPU used in
// every bucket, so p95 1 × 1.25 → 2, its peak 1, but its one workload
// needs 4 GPUs: 4 (4 freed). small (quota 1) reserves its 1 GPU, and ml/c waits for 3
// more from 30 min: none of them fit in its unreserved quota (0), 3 do
// with 4. Decayed from 0 over one half-life, a constant use of 1 GPU is
// 1 − 0.5 = 0.5 GPUs.
func TestQuotaWhatIf(t *testing.T) {
	ts := every60(60)
	var gpus []gpuSpec
	for i, u := range []float64{25, 25, 25, 25, 100} {
		gpus = append(gpus, gpuSpec{uuid: "GPU-" + string(rune('0'+i)), model: "TestGPU", t: ts, util: fill(u, 60)})
	}
	ws := []profile.Workload{queuedPod("a", "big", []int{0, 1, 2, 3}), queuedPod("b", "small", []int{4})}
	eight, one := 8.0, 1.0
	qs := []profile.Queue{
		{Name: "big", Kind: profile.QueueKueue, Cohort: "c", NominalGPUs: &eight, QuotaRef: "/spec/x",
			Admitted: []profile.QueueSpan{{Workload: "ml/a", GPUs: 4, StartS: 0, EndS: 3600}}},
		{Name: "small", Kind: profile.QueueKueue, Cohort: "c", NominalGPUs: &one,
			Admitted: []profile.QueueSpan{{Workload: "ml/b", GPUs: 1, StartS: 0, EndS: 3600}},
			Pending:  []profile.QueueSpan{{Workload: "ml/c", GPUs: 3, StartS: 1800, EndS: 3600}}},
	}
	p := DefaultParams()
	p.Pricer = pricing.New(nil, 3.6)
	qp := DefaultQueueParams()
	qp.HalfLifeS = 3600
	p.Queues = &qp
	r := mustAnalyze(t, p, withQueues(t, mkProfile(t, t0, 3600, 60, nodeSpec{name: "n", gpus: gpus, workloads: ws}), qs))
	big, small := r.Queues["big"], r.Queues["small"]
	if !nearly(big.UsedGPUsPercentile, 1) || !nearly(big.PeakUsedGPUs, 1) || !nearly(big.DecayedUsedGPUs, 0.5) || !nearly(big.DecayedReservedGPUs, 2) ||
		!nearly(small.DecayedUsedGPUs, 0.5) || !nearly(small.PeakUsedGPUs, 1) {
		t.Errorf("timelines: big %s\nsmall %s", showQ(big), showQ(small))
	}
	want := []QuotaChange{
		{Queue: "big", Cohort: "c", Kind: "kueue", NominalGPUs: 8, ProposedGPUs: 4, QuotaRef: "/spec/x",
			Why: "p95 of its used GPUs 1.00 + 25 % headroom; peak used 1.00; largest workload 4 GPUs"},
		{Queue: "small", Cohort: "c", Kind: "kueue", NominalGPUs: 1, ProposedGPUs: 4, ProposedPendingWithinQuotaGPUHours: 1.5,
			Why: "1.50 pending GPU-hours beyond its unreserved quota: 3 of the GPUs the cohort's right-sizing frees"},
	}
	if fmt.Sprint(r.QuotaWhatIf) != fmt.Sprint(want) {
		t.Errorf("what-if:\n%+v\nwant\n%+v", r.QuotaWhatIf, want)
	}
	// The defaults: a day's half-life, 1 − 0.5^(1/24) of the use after an hour.
	qp = DefaultQueueParams()
	p.Queues = &qp
	r = mustAnalyze(t, p, withQueues(t, mkProfile(t, t0, 3600, 60, nodeSpec{name: "n", gpus: gpus, workloads: ws}), qs))
	if got := r.Queues["big"].DecayedUsedGPUs; !nearly(got, 1-math.Pow(0.5, 1.0/24)) {
		t.Errorf("decayed with a day's half-life: %v", *got)
	}
}

// TestDecayedAsKueue: the fold is Kueue's CalculateDecayedConsumed at
// each tick, whatever the ticks' lengths: two ticks of half a half-life
// are one of a whole; a zero half-life keeps only the last sample.
func TestDecayedAsKueue(t *testing.T) {
	w := func(s float64) func(int) float64 { return func(int) float64 { return s } }
	if a, b := decayed([]float64{4, 4}, w(1800), 3600), decayed([]float64{4}, w(3600), 3600); math.Abs(a-b) > 1e-12 || math.Abs(a-2) > 1e-12 {
		t.Errorf("two half ticks %v, one whole %v, want 2", a, b)
	}
	if got := decayed([]float64{9, 1}, w(300), 0); got != 1 {
		t.Errorf("no memory: %v", got)
	}
	if got := nearestRank([]float64{5, 1, 3, 2, 4}, 60); got != 3 {
		t.Errorf("p60 of 1..5: %v", got)
	}
}

// TestBudgetHandComputed: a Slurm account's GPU-minute budget (its
// GrpTRESMins, 600 GPU-minutes = 10 GPU-hours) against one hour: its job
// held GPUs 0–3 (reserved 4 GPUs all hour) at 10 %: reserved 4 GPU-h, 40 %
// of the budget; idle-held 3.6 GPU-h, 36 %. Slurm counted 450 GPU-minutes
// of use against it and its running job holds 120 more to its time limit:
// 75 % used, (600 − 450 − 120) / 60 = 0.5 GPU-h left. An account over its
// budget (700 used of 600, 30 running) is at 116.666666667 % with 0 left.
// An account without a budget (whatever Slurm counted), and the cohort,
// have none.
func TestBudgetHandComputed(t *testing.T) {
	ts := every60(60)
	var gpus []gpuSpec
	for i, u := range []float64{10, 10, 10, 10, 50} {
		gpus = append(gpus, gpuSpec{uuid: "GPU-" + string(rune('0'+i)), model: "TestGPU", t: ts, util: fill(u, 60)})
	}
	job := func(id, account string, gpus []int) profile.Workload {
		return profile.Workload{ID: id, Name: id, Kind: profile.KindJob, State: profile.StateRunning, GPUs: gpus, Labels: map[string]string{"account": account}, Queue: account}
	}
	budget := 600.0
	qs := []profile.Queue{
		{Name: "research", Kind: profile.QueueSlurmAccount, Cohort: "ml", BudgetGPUMinutes: &budget, BudgetUse: &profile.BudgetUse{UsedGPUMinutes: 450, RunningGPUMinutes: 120},
			Admitted: []profile.QueueSpan{{Workload: "101", GPUs: 4, StartS: 0, EndS: 3600}}},
		{Name: "prod", Kind: profile.QueueSlurmAccount, Cohort: "ml", BudgetUse: &profile.BudgetUse{UsedGPUMinutes: 10},
			Admitted: []profile.QueueSpan{{Workload: "102", GPUs: 1, StartS: 0, EndS: 3600}}},
		{Name: "over", Kind: profile.QueueSlurmAccount, Cohort: "ml", BudgetGPUMinutes: &budget, BudgetUse: &profile.BudgetUse{UsedGPUMinutes: 700, RunningGPUMinutes: 30}},
	}
	p := DefaultParams()
	p.Pricer = pricing.New(nil, 3.6)
	qp := DefaultQueueParams()
	p.Queues = &qp
	r := mustAnalyze(t, p, withQueues(t, mkProfile(t, t0, 3600, 60, nodeSpec{name: "n", gpus: gpus,
		workloads: []profile.Workload{job("101", "research", []int{0, 1, 2, 3}), job("102", "prod", []int{4})}}), qs))
	res := r.Queues["research"]
	if !nearly(res.BudgetGPUHours, 10) || !nearly(res.BudgetReservedPct, 40) || !nearly(res.BudgetIdlePct, 36) || !nearly(res.IdleHeldGPUHours, 3.6) {
		t.Errorf("research: budget %v GPU-h, reserved %v %%, idle %v %% (idle-held %v GPU-h)", res.BudgetGPUHours, res.BudgetReservedPct, res.BudgetIdlePct, *res.IdleHeldGPUHours)
	}
	if !nearly(res.BudgetUsedPct, 75) || !nearly(res.BudgetLeftGPUHours, 0.5) {
		t.Errorf("research: Slurm's use %v %%, left %v GPU-h", res.BudgetUsedPct, res.BudgetLeftGPUHours)
	}
	if over := r.Queues["over"]; !nearly(over.BudgetUsedPct, 116.666666667) || over.BudgetLeftGPUHours == nil || *over.BudgetLeftGPUHours != 0 {
		t.Errorf("over: Slurm's use %v %%, left %v GPU-h", over.BudgetUsedPct, over.BudgetLeftGPUHours)
	}
	if prod, ml := r.Queues["prod"], r.Cohorts["ml"]; prod.BudgetGPUHours != nil || prod.BudgetIdlePct != nil || prod.BudgetUsedPct != nil || prod.BudgetLeftGPUHours != nil ||
		ml.BudgetGPUHours != nil || ml.BudgetReservedPct != nil || ml.BudgetUsedPct != nil {
		t.Errorf("no budget: prod %v %v %v, cohort %v %v %v", prod.BudgetGPUHours, prod.BudgetIdlePct, prod.BudgetUsedPct, ml.BudgetGPUHours, ml.BudgetReservedPct, ml.BudgetUsedPct)
	}
}
