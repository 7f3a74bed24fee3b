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

// Client runs one Slurm client command (squeue, sacct, sacctmgr, scontrol,
// sshare) with the arguments and returns its output.
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

// AddBudgetUse gives each account (or QOS) of the profile that has a
// GPU-minute budget (GrpTRESMins gres/gpu) what Slurm counts against it
// (docs/queues.md, Budgets): the usage Slurm decays, in minutes, and its
// running jobs' GPUs × time left. An account's come from sshare
// (GrpTRESRaw, TRESRunMins), a QOS's from scontrol show assoc_mgr (the
// used figures of its GrpTRESMins and GrpTRESRunMins). Slurm 22.05 holds
// the next GPU job once that usage reaches the budget (acct_policy.c).
// Only priority/multifactor counts usage, and only where
// AccountingStorageEnforce has limits (priority_multifactor.c): otherwise
// Slurm answers zeros, and the use stays unknown with a note saying why,
// as where a command fails or GPUs are not tracked. Nothing is run when no
// queue has a budget.
func AddBudgetUse(ctx context.Context, p *profile.Profile, scontrol, sshare Client) []string {
	accounts, qos := budgeted(p, profile.QueueSlurmAccount), budgeted(p, profile.QueueSlurmQOS)
	if len(accounts)+len(qos) == 0 {
		return nil
	}
	out, err := scontrol(ctx, "show", "config")
	if err != nil {
		return []string{unknownUse + "scontrol show config: " + table.Flatten(err.Error())}
	}
	if plugin := configValue(out, "PriorityType"); plugin != multifactor {
		return []string{unknownUse + fmt.Sprintf("Slurm's PriorityType is %q, and only %s counts usage", plugin, multifactor)}
	}
	if enforce := configValue(out, "AccountingStorageEnforce"); !slices.Contains(strings.Split(enforce, ","), "limits") {
		return []string{unknownUse + fmt.Sprintf("Slurm's AccountingStorageEnforce is %q: without limits it neither applies GrpTRESMins nor counts usage against it", enforce)}
	}
	var notes []string
	if len(accounts) > 0 {
		notes = append(notes, readUse(ctx, accounts, sshare, accountUse, "sshare", "--noheader", "--parsable2", "--format=Account,User,GrpTRESRaw,TRESRunMins")...)
	}
	if len(qos) > 0 {
		notes = append(notes, readUse(ctx, qos, scontrol, qosUse, "scontrol show assoc_mgr", "--oneliner", "show", "assoc_mgr", "flags=qos")...)
	}
	return notes
}

// unknownUse begins the notes of a budget use not read.
const unknownUse = "the use of Slurm's GPU-minute budgets (GrpTRESMins) unknown: "

// budgeted are the profile's queues of the kind with a budget, by name.
func budgeted(p *profile.Profile, kind string) map[string]*profile.Queue {
	out := map[string]*profile.Queue{}
	for qi := range p.Queues {
		if q := &p.Queues[qi]; q.Kind == kind && q.BudgetGPUMinutes != nil {
			out[q.Name] = q
		}
	}
	return out
}

// readUse runs what (named so in a note) and gives each queue the use
// parse finds for it: the used and running GPU-minutes by name, nil for a
// queue whose readings name no gres/gpu.
func readUse(ctx context.Context, qs map[string]*profile.Queue, run Client, parse func([]byte) map[string]*profile.BudgetUse, what string, args ...string) []string {
	out, err := run(ctx, args...)
	if err != nil {
		return []string{unknownUse + what + ": " + table.Flatten(err.Error())}
	}
	var untracked []string
	for name, u := range parse(out) {
		q := qs[name]
		switch {
		case q == nil:
		case u == nil:
			untracked = append(untracked, name)
		default:
			q.BudgetUse = u
		}
	}
	if len(untracked) > 0 {
		slices.Sort(untracked)
		return []string{unknownUse + what + " counts no gres/gpu for " + strings.Join(untracked, ", ") + " (AccountingStorageTRES without gres/gpu?)"}
	}
	return nil
}

// accountUse reads sshare's rows of accounts (a user's row is skipped:
// the budget is the account's; sshare indents the tree).
func accountUse(out []byte) map[string]*profile.BudgetUse {
	use := map[string]*profile.BudgetUse{}
	eachLine(out, func(line string) {
		f := strings.Split(line, "|")
		if name := strings.TrimSpace(f[0]); len(f) == 4 && f[1] == "" && name != "" {
			use[name] = budgetUse(tresGPUs(f[2]), tresGPUs(f[3]))
		}
	})
	return use
}

// qosUse reads scontrol show assoc_mgr flags=qos: each record begins with
// QOS=NAME(ID), and its GrpTRESMins and GrpTRESRunMins list each TRES as
// LIMIT(USED), the used in minutes (info_assoc_mgr.c). Words, so that
// --oneliner's records and the default's indented lines read alike.
func qosUse(out []byte) map[string]*profile.BudgetUse {
	use := map[string]*profile.BudgetUse{}
	var name string
	var used, running *float64
	flush := func() {
		if name != "" {
			use[name] = budgetUse(used, running)
		}
	}
	for _, w := range strings.Fields(string(out)) {
		k, v, _ := strings.Cut(w, "=")
		switch k {
		case "QOS":
			flush()
			name, used, running = v, nil, nil
			if i := strings.LastIndexByte(v, '('); i > 0 {
				name = v[:i]
			}
		case "GrpTRESMins":
			used = tresGPUs(usedOf(v))
		case "GrpTRESRunMins":
			running = tresGPUs(usedOf(v))
		}
	}
	flush()
	return use
}

// usedOf is a TRES list of LIMIT(USED) values as a list of the used ones:
// "cpu=N(0),gres/gpu=600(12)" → "cpu=0,gres/gpu=12".
func usedOf(list string) string {
	var out []string
	for _, kv := range strings.Split(list, ",") {
		k, v, _ := strings.Cut(kv, "=")
		if i, j := strings.IndexByte(v, '('), strings.LastIndexByte(v, ')'); i >= 0 && j > i {
			out = append(out, k+"="+v[i+1:j])
		}
	}
	return strings.Join(out, ",")
}

// budgetUse is the two readings as a use; nil when either names no GPUs.
func budgetUse(used, running *float64) *profile.BudgetUse {
	if used == nil || running == nil {
		return nil
	}
	return &profile.BudgetUse{UsedGPUMinutes: *used, RunningGPUMinutes: *running}
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
