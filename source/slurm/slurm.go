// Package slurm reads what a Slurm cluster knows of GPU work into a
// profile: the pending jobs that ask for GPUs, on the node each one waits
// for, so that the idle rule's "no pending work" holds on Slurm as it does
// with kube-state-metrics; and the user and account of the running jobs,
// for attribution (docs/sources.md, Slurm).
package slurm

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/seedance/seedance/internal/extcmd"
	"github.com/seedance/seedance/profile"
)

// squeueFormat asks squeue for a pending job's id, GPUs requested (gres),
// requested node list, user and account, one job a line.
const squeueFormat = "%i|%b|%n|%u|%a"

// Squeue runs squeue with the arguments and returns its output.
type Squeue = Client

// Commands are the squeue and sacct on PATH, against the cluster their
// environment names (SLURM_CONF), each run within l (a deadline and an
// output bound; extcmd) and stopped when ctx ends.
func Commands(l extcmd.Limits) (Squeue, Sacct) {
	return ClientCommand("squeue", l), ClientCommand("sacct", l)
}

// maxLine is the longest line of squeue or sacct output read; a longer
// one (a job name of a megabyte) is skipped and counted, and the lines
// after it are read as usual.
const maxLine = 64 << 10

// eachLine calls fn with each line of out, in one pass; it returns how
// many lines were skipped for being longer than maxLine.
func eachLine(out []byte, fn func(line string)) (skipped int) {
	for len(out) > 0 {
		line := out
		if i := bytes.IndexByte(out, '\n'); i >= 0 {
			line, out = out[:i], out[i+1:]
		} else {
			out = nil
		}
		if len(line) > maxLine {
			skipped++
			continue
		}
		fn(strings.TrimSuffix(string(line), "\r"))
	}
	return skipped
}

// gpuGres finds the GPU count in a gres request: "gres:gpu:2",
// "gres/gpu:a100:4", "gpu:1".
var gpuGres = regexp.MustCompile(`gpu(?::[A-Za-z0-9_.-]+)?:([0-9]+)`)

// AddPending adds to the profile's nodes the pending jobs that ask for GPUs
// and name one node to run on, as pending workloads of kind job (labels
// user and account). The others are said in the returned notes: jobs that
// wait for any node of a partition hold no node back.
func AddPending(ctx context.Context, p *profile.Profile, squeue Squeue) ([]string, error) {
	out, err := squeue(ctx, "--noheader", "--states=PENDING", "--format="+squeueFormat)
	if err != nil {
		return nil, err
	}
	byName := map[string]*profile.Node{}
	for i := range p.Nodes {
		byName[p.Nodes[i].Name] = &p.Nodes[i]
	}
	var loose []string
	seen, touched := map[string]bool{}, map[*profile.Node]bool{}
	skipped := eachLine(out, func(line string) {
		f := strings.Split(line, "|")
		if len(f) != 5 {
			return
		}
		id, gres, nodes, user, account := f[0], f[1], f[2], f[3], f[4]
		m := gpuGres.FindStringSubmatch(gres)
		if m == nil || len(id) > profile.MaxWorkloadIDBytes || seen[nodes+"\x00"+id] {
			return // not GPU work, or listed already
		}
		seen[nodes+"\x00"+id] = true
		gpus, err := strconv.Atoi(m[1])
		if err != nil || gpus < 1 || gpus > profile.MaxGPUsPerNode {
			return
		}
		labels := map[string]string{}
		for k, v := range map[string]string{"user": clean(user), "account": clean(account)} {
			if v != "" {
				labels[k] = v
			}
		}
		n := byName[nodes]
		if n == nil {
			// It waits for any node of its partition: demand on no node.
			loose = append(loose, id)
			p.Unscheduled = append(p.Unscheduled, profile.Workload{ID: id, Name: id, Kind: profile.KindJob, State: profile.StatePending, GPUCount: gpus, Labels: labels})
			return
		}
		n.Workloads = append(n.Workloads, profile.Workload{ID: id, Name: id, Kind: profile.KindJob, State: profile.StatePending, GPUCount: gpus, Labels: labels})
		touched[n] = true
	})
	for n := range touched {
		sort.SliceStable(n.Workloads, func(i, j int) bool { return n.Workloads[i].ID < n.Workloads[j].ID })
	}
	var notes []string
	if len(loose) > 0 {
		notes = append(notes, fmt.Sprintf("%d pending GPU job(s) wait for no one node of this profile: %s", len(loose), strings.Join(loose, ", ")))
	}
	if skipped > 0 {
		notes = append(notes, fmt.Sprintf("squeue: %d line(s) longer than %d KiB skipped", skipped, maxLine>>10))
	}
	return notes, nil
}

// Sacct runs sacct with the arguments and returns its output.
type Sacct = Client

// jobID is a Slurm job id as dcgm-exporter's hpc_job label and
// SLURM_JOB_ID give it: a job, or an array task as "1234_5".
var jobID = regexp.MustCompile(`^[0-9]+(_[0-9]+)?$`)

// sacctBatch bounds the ids of one sacct command line.
const sacctBatch = 200

// owner is a job's user and account.
type owner struct{ user, account string }

// AddOwners gives the running Slurm jobs of the profile (kind job) that
// lack them the labels user and account: from squeue, which knows the
// jobs slurmctld still holds, then from sacct (Slurm's accounting) for the
// ones it has forgotten. The jobs neither knows are said in a note.
func AddOwners(ctx context.Context, p *profile.Profile, squeue Squeue, sacct Sacct) ([]string, error) {
	var want []*profile.Workload
	for ni := range p.Nodes {
		for wi := range p.Nodes[ni].Workloads {
			w := &p.Nodes[ni].Workloads[wi]
			if w.Kind == profile.KindJob && w.State != profile.StatePending && jobID.MatchString(w.ID) && (w.Labels["user"] == "" || w.Labels["account"] == "") {
				want = append(want, w)
			}
		}
	}
	if len(want) == 0 {
		return nil, nil
	}
	out, err := squeue(ctx, "--noheader", "--states=all", "--format=%A|%i|%u|%a")
	if err != nil {
		return nil, err
	}
	owners := map[string]owner{}
	readOwners(out, owners)
	var missing []string
	listed := map[string]bool{}
	for _, w := range want {
		if _, ok := owners[w.ID]; !ok && !listed[w.ID] {
			listed[w.ID] = true
			missing = append(missing, w.ID)
		}
	}
	var sacctErr error
	for i := 0; i < len(missing) && sacctErr == nil; i += sacctBatch {
		ids := missing[i:min(len(missing), i+sacctBatch)]
		var out []byte
		out, sacctErr = sacct(ctx, "--noheader", "--parsable2", "--allocations", "--format=JobIDRaw,JobID,User,Account", "--jobs="+strings.Join(ids, ","))
		readOwners(out, owners)
	}
	var unknown []string
	clear(listed)
	for _, w := range want {
		o, ok := owners[w.ID]
		if !ok {
			if !listed[w.ID] {
				listed[w.ID] = true
				unknown = append(unknown, w.ID)
			}
			continue
		}
		labels := maps.Clone(w.Labels)
		if labels == nil {
			labels = map[string]string{}
		}
		for k, v := range map[string]string{"user": o.user, "account": o.account} {
			if labels[k] == "" && v != "" {
				labels[k] = v
			}
		}
		w.Labels = labels
	}
	if len(unknown) == 0 {
		return nil, nil
	}
	why := "squeue no longer lists them"
	if sacctErr != nil {
		why += "; " + firstLine(sacctErr.Error())
	} else {
		why += " and sacct does not know them"
	}
	return []string{fmt.Sprintf("the user and account of %d Slurm job(s) are unknown (%s): %s", len(unknown), why, strings.Join(unknown, ", "))}, nil
}

// readOwners reads lines "ID|ID2|user|account" (squeue's %A|%i or sacct's
// JobIDRaw|JobID first) into owners, under both ids.
func readOwners(out []byte, owners map[string]owner) {
	eachLine(out, func(line string) {
		f := strings.Split(line, "|")
		if len(f) != 4 {
			return
		}
		o := owner{clean(f[2]), clean(f[3])}
		for _, id := range f[:2] {
			if id = strings.TrimSpace(id); jobID.MatchString(id) {
				owners[id] = o
			}
		}
	})
}

// clean is a user or account as a label: empty for Slurm's "(null)" and
// for what is too long to be one.
func clean(v string) string {
	v = strings.TrimSpace(v)
	if v == "(null)" || len(v) > profile.MaxNameBytes {
		return ""
	}
	return v
}

// firstLine keeps the first line of a message.
func firstLine(s string) string {
	first, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return first
}
