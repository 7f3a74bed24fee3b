package slurm

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/seedance/seedance/internal/extcmd"
	"github.com/seedance/seedance/internal/table"
	"github.com/seedance/seedance/profile"
)

// Client runs one Slurm client command (scontrol, sshare) with the
// arguments and returns its output.
type Client func(ctx context.Context, args ...string) ([]byte, error)

// ClientCommand is the Slurm client name on PATH, run within l.
func ClientCommand(name string, l extcmd.Limits) Client {
	return func(ctx context.Context, args ...string) ([]byte, error) {
		return extcmd.Run(ctx, l, name, args...)
	}
}

// multifactor is the priority plugin that counts an association's
// usage (slurm.conf PriorityType).
const multifactor = "priority/multifactor"

// AddBudgetUse gives each account of the profile that has a GPU-minute
// budget (GrpTRESMins gres/gpu) what Slurm counts against it
// (docs/queues.md, Budgets): sshare's GrpTRESRaw of gres/gpu (the usage
// Slurm decays, in minutes) and TRESRunMins (its running jobs' GPUs × time
// left). Slurm 22.05 holds an account's next GPU job once that usage
// reaches the budget (acct_policy.c). Only priority/multifactor counts
// usage, and only where AccountingStorageEnforce has limits
// (priority_multifactor.c): otherwise sshare answers zeros, and the use
// stays unknown with a note saying why, as where scontrol or sshare fail
// or GPUs are not tracked. Nothing is run when no account has a budget.
func AddBudgetUse(ctx context.Context, p *profile.Profile, scontrol, sshare Client) []string {
	budgeted := map[string]*profile.Queue{}
	for qi := range p.Queues {
		if q := &p.Queues[qi]; q.Kind == profile.QueueSlurmAccount && q.BudgetGPUMinutes != nil {
			budgeted[q.Name] = q
		}
	}
	if len(budgeted) == 0 {
		return nil
	}
	const unknown = "the use of Slurm's GPU-minute budgets (GrpTRESMins) unknown: "
	out, err := scontrol(ctx, "show", "config")
	if err != nil {
		return []string{unknown + "scontrol show config: " + table.Flatten(err.Error())}
	}
	if plugin := configValue(out, "PriorityType"); plugin != multifactor {
		return []string{unknown + fmt.Sprintf("Slurm's PriorityType is %q, and only %s counts an account's usage", plugin, multifactor)}
	}
	if enforce := configValue(out, "AccountingStorageEnforce"); !slices.Contains(strings.Split(enforce, ","), "limits") {
		return []string{unknown + fmt.Sprintf("Slurm's AccountingStorageEnforce is %q: without limits it neither applies GrpTRESMins nor counts usage against it", enforce)}
	}
	out, err = sshare(ctx, "--noheader", "--parsable2", "--format=Account,User,GrpTRESRaw,TRESRunMins")
	if err != nil {
		return []string{unknown + "sshare: " + table.Flatten(err.Error())}
	}
	var untracked []string
	eachLine(out, func(line string) {
		f := strings.Split(line, "|")
		if len(f) != 4 || f[1] != "" {
			return // a user's association: the budget is the account's
		}
		q := budgeted[strings.TrimSpace(f[0])] // sshare indents the tree
		if q == nil || q.BudgetUse != nil {
			return
		}
		used, running := tresGPUs(f[2]), tresGPUs(f[3])
		if used == nil || running == nil {
			untracked = append(untracked, q.Name)
			return
		}
		q.BudgetUse = &profile.BudgetUse{UsedGPUMinutes: *used, RunningGPUMinutes: *running}
	})
	if len(untracked) > 0 {
		return []string{unknown + "sshare counts no gres/gpu for " + strings.Join(untracked, ", ") + " (AccountingStorageTRES without gres/gpu?)"}
	}
	return nil
}

// configValue is the value of key in scontrol show config's "Key = value"
// lines; "" when absent.
func configValue(out []byte, key string) string {
	var v string
	eachLine(out, func(line string) {
		k, val, ok := strings.Cut(line, "=")
		if ok && strings.TrimSpace(k) == key {
			v = strings.TrimSpace(val)
		}
	})
	return v
}
