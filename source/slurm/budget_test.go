package slurm

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/seedance/seedance/profile"
)

// fixed is a Slurm client that answers out (or fails with err) and
// counts its calls.
func fixed(out string, err error, calls *int) Client {
	return func(context.Context, ...string) ([]byte, error) {
		*calls++
		return []byte(out), err
	}
}

// TestAddBudgetUse: sshare's account rows (indented by the tree, users'
// rows after them) give each budgeted account its GrpTRESRaw and
// TRESRunMins of gres/gpu; an account without a budget gets none; where
// Slurm counts no usage (priority/basic, or limits not enforced), where a
// command fails, and where
// gres/gpu is not tracked, the use stays unknown and one note says why;
// with no budget at all nothing is run.
func TestAddBudgetUse(t *testing.T) {
	const multifactorConf = "Configuration data as of 2026-12-07T10:00:00\nAccountingStorageEnforce = associations,limits\nPriorityDecayHalfLife   = 7-00:00:00\n" +
		"PriorityType            = priority/multifactor\n"
	const shares = "root||cpu=100,gres/gpu=40|cpu=0,gres/gpu=0\n ml||cpu=90,gres/gpu=40|cpu=10,gres/gpu=12\n  research||cpu=90,gres/gpu=37|cpu=10,gres/gpu=12\n" +
		"  research|alice|cpu=90,gres/gpu=999|cpu=10,gres/gpu=999\n  prod||cpu=0,gres/gpu=3|cpu=0,gres/gpu=0\n"
	queues := func() *profile.Profile {
		budget, none := 600.0, 0.0
		return &profile.Profile{Queues: []profile.Queue{{Name: "research", Kind: profile.QueueSlurmAccount, BudgetGPUMinutes: &budget},
			{Name: "ml", Kind: profile.QueueSlurmAccount}, {Name: "prod", Kind: profile.QueueSlurmAccount, BudgetGPUMinutes: &none}}}
	}
	var calls int
	p := queues()
	if notes := AddBudgetUse(context.Background(), p, fixed(multifactorConf, nil, &calls), fixed(shares, nil, &calls)); len(notes) > 0 {
		t.Fatalf("notes: %q", notes)
	}
	if u := p.Queues[0].BudgetUse; u == nil || *u != (profile.BudgetUse{UsedGPUMinutes: 37, RunningGPUMinutes: 12}) {
		t.Errorf("research: %+v", u)
	}
	if u := p.Queues[2].BudgetUse; u == nil || *u != (profile.BudgetUse{UsedGPUMinutes: 3}) {
		t.Errorf("prod, a budget of 0: %+v", u)
	}
	if p.Queues[1].BudgetUse != nil {
		t.Errorf("ml, no budget: %+v", p.Queues[1].BudgetUse)
	}
	for name, c := range map[string]struct {
		conf, shares string
		confErr      error
		sshareErr    error
		want         string
	}{
		"basic": {conf: "PriorityType            = priority/basic\n", shares: shares, want: `PriorityType is "priority/basic"`},
		"unenforced": {conf: "AccountingStorageEnforce = associations\nPriorityType = priority/multifactor\n", shares: shares,
			want: `AccountingStorageEnforce is "associations": without limits`},
		"scontrol":  {confErr: errors.New("scontrol: exit status 1: slurm_load_ctl_conf error"), shares: shares, want: "scontrol show config: scontrol: exit status 1"},
		"sshare":    {conf: multifactorConf, sshareErr: errors.New("sshare: deadline exceeded"), want: "sshare: sshare: deadline exceeded"},
		"untracked": {conf: multifactorConf, shares: "  research||cpu=90|cpu=10\n", want: "sshare counts no gres/gpu for research"},
	} {
		p := queues()
		notes := AddBudgetUse(context.Background(), p, fixed(c.conf, c.confErr, &calls), fixed(c.shares, c.sshareErr, &calls))
		if len(notes) != 1 || !strings.Contains(notes[0], c.want) || strings.Contains(notes[0], "\n") || p.Queues[0].BudgetUse != nil {
			t.Errorf("%s: %q, research %+v", name, notes, p.Queues[0].BudgetUse)
		}
	}
	calls = 0
	p = &profile.Profile{Queues: []profile.Queue{{Name: "ml", Kind: profile.QueueSlurmAccount}, {Name: "normal", Kind: profile.QueueSlurmQOS}}}
	if notes := AddBudgetUse(context.Background(), p, fixed(multifactorConf, nil, &calls), fixed(shares, nil, &calls)); len(notes) > 0 || calls > 0 {
		t.Errorf("no budget: %q, %d commands run", notes, calls)
	}
}

// TestAddBudgetUseOfQOS: a QOS's use is the used figures of its
// GrpTRESMins and GrpTRESRunMins in scontrol show assoc_mgr flags=qos
// (LIMIT(USED) per TRES, as Slurm 22.05's info_assoc_mgr.c prints them),
// read alike from --oneliner's records and from the default's indented
// lines; a QOS without a budget gets none, one whose lists name no
// gres/gpu stays unknown with a note.
func TestAddBudgetUseOfQOS(t *testing.T) {
	const conf = "AccountingStorageEnforce = associations,limits\nPriorityType = priority/multifactor\n"
	const tres = "cpu=N(0),mem=N(0),energy=N(0),node=N(0),billing=N(0),fs/disk=N(0),vmem=N(0),pages=N(0),gres/gpu="
	oneLiner := "Current Association Manager state\nQOS Records\n" +
		"QOS=normal(1) UsageRaw=0.000000 GrpJobs=N(0) GrpTRES=" + tres + "N(0) GrpTRESMins=" + tres + "N(0) GrpTRESRunMins=" + tres + "N(0) MaxWallPJ= MaxTRESPJ=\n" +
		"QOS=gpu-team(2) UsageRaw=1440.000000 GrpJobs=N(1) GrpTRES=" + tres + "2(2) GrpTRESMins=" + tres + "600(12) GrpTRESRunMins=" + tres + "N(18) MaxWallPJ=\n" +
		"QOS=old(3) UsageRaw=0.000000 GrpTRESMins=cpu=100(5) GrpTRESRunMins=cpu=N(0)\n"
	indented := strings.NewReplacer(" UsageRaw", "\n    UsageRaw", " GrpTRES", "\n    GrpTRES", " MaxWallPJ", "\n    MaxWallPJ").Replace(oneLiner)
	for name, out := range map[string]string{"--oneliner": oneLiner, "indented": indented} {
		budget := 600.0
		p := &profile.Profile{Queues: []profile.Queue{{Name: "gpu-team", Kind: profile.QueueSlurmQOS, BudgetGPUMinutes: &budget},
			{Name: "normal", Kind: profile.QueueSlurmQOS}, {Name: "old", Kind: profile.QueueSlurmQOS, BudgetGPUMinutes: &budget}}}
		scontrol := func(_ context.Context, args ...string) ([]byte, error) {
			if strings.Join(args, " ") == "show config" {
				return []byte(conf), nil
			}
			if strings.Join(args, " ") != "--oneliner show assoc_mgr flags=qos" {
				t.Fatalf("scontrol %q", args)
			}
			return []byte(out), nil
		}
		var calls int
		notes := AddBudgetUse(context.Background(), p, scontrol, fixed("", errors.New("sshare run for no account"), &calls))
		if u := p.Queues[0].BudgetUse; u == nil || *u != (profile.BudgetUse{UsedGPUMinutes: 12, RunningGPUMinutes: 18}) || p.Queues[1].BudgetUse != nil || p.Queues[2].BudgetUse != nil {
			t.Errorf("%s: gpu-team %+v, normal %+v, old %+v", name, u, p.Queues[1].BudgetUse, p.Queues[2].BudgetUse)
		}
		if len(notes) != 1 || !strings.Contains(notes[0], "scontrol show assoc_mgr counts no gres/gpu for old") || calls > 0 {
			t.Errorf("%s: notes %q, sshare run %d times", name, notes, calls)
		}
	}
}
