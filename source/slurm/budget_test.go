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
	p = &profile.Profile{Queues: []profile.Queue{{Name: "ml", Kind: profile.QueueSlurmAccount}}}
	if notes := AddBudgetUse(context.Background(), p, fixed(multifactorConf, nil, &calls), fixed(shares, nil, &calls)); len(notes) > 0 || calls > 0 {
		t.Errorf("no budget: %q, %d commands run", notes, calls)
	}
}
