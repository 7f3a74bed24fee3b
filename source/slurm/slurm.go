// Package slurm reads what a Slurm cluster knows of GPU work into a
// profile: the pending jobs that ask for GPUs, on the node each one waits
// for, so that the idle rule's "no pending work" holds on Slurm as it does
// with kube-state-metrics (docs/sources.md, Slurm).
package slurm

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/seedance/seedance/profile"
)

// squeueFormat asks squeue for a pending job's id, GPUs requested (gres),
// requested node list, user and account, one job a line.
const squeueFormat = "%i|%b|%n|%u|%a"

// Squeue runs squeue with the arguments and returns its output.
type Squeue func(ctx context.Context, args ...string) ([]byte, error)

// RunSqueue runs the squeue on PATH, against the cluster its environment
// names (SLURM_CONF).
func RunSqueue(ctx context.Context, args ...string) ([]byte, error) {
	out, err := exec.CommandContext(ctx, "squeue", args...).Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return nil, fmt.Errorf("squeue: %v: %s", err, strings.TrimSpace(string(ee.Stderr)))
	}
	return out, err
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
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "|")
		if len(f) != 5 {
			continue
		}
		id, gres, nodes, user, account := f[0], f[1], f[2], f[3], f[4]
		m := gpuGres.FindStringSubmatch(gres)
		if m == nil || len(id) > profile.MaxWorkloadIDBytes {
			continue // not GPU work
		}
		gpus, err := strconv.Atoi(m[1])
		if err != nil || gpus < 1 || gpus > profile.MaxGPUsPerNode {
			continue
		}
		n := byName[nodes]
		if n == nil {
			loose = append(loose, id)
			continue
		}
		labels := map[string]string{}
		for k, v := range map[string]string{"user": user, "account": account} {
			if v != "" && v != "(null)" && len(v) <= profile.MaxNameBytes {
				labels[k] = v
			}
		}
		n.Workloads = append(n.Workloads, profile.Workload{ID: id, Name: id, Kind: profile.KindJob, State: profile.StatePending, GPUCount: gpus, Labels: labels})
		sort.Slice(n.Workloads, func(i, j int) bool { return n.Workloads[i].ID < n.Workloads[j].ID })
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(loose) == 0 {
		return nil, nil
	}
	return []string{fmt.Sprintf("%d pending GPU job(s) wait for no one node of this profile: %s", len(loose), strings.Join(loose, ", "))}, nil
}
